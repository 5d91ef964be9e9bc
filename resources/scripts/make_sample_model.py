#!/usr/bin/env python3
"""Writes resources/models/sample.onnx: the model Fusescope opens when given no file.

A small but real network, named the way PyTorch's exporter names nodes so that scopes
group it: a conv block (Conv, BatchNormalization, Relu, MaxPool) turns a 16x16 image into
64 tokens, one pre-norm transformer block (LayerNorm, 4-head self-attention written out
as MatMul/Softmax, an MLP with erf-form GELU) mixes them, and a classifier pools and
projects to 10 logits. Random weights with a fixed seed; run with Debian's python3-onnx.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261122)
nodes, inits = [], []
C, HEADS, MLP, CLASSES = 32, 4, 64, 10
HEAD_DIM = C // HEADS


def weight(name, *shape, scale=0.1):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def const(name, array):
    inits.append(numpy_helper.from_array(np.asarray(array), name))
    return name


def node(op, inputs, name, n_out=1, **attrs):
    outs = [f"{name}_output_{i}" for i in range(n_out)]
    nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
    return outs[0] if n_out == 1 else outs


# Conv block: [N,3,16,16] -> [N,32,8,8]
x = node("Conv", ["image", weight("conv_block.conv.weight", C, 3, 3, 3), weight("conv_block.conv.bias", C)],
         "/conv_block/conv/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
x = node("BatchNormalization", [x, const("conv_block.bn.weight", np.ones(C, np.float32)),
                                 const("conv_block.bn.bias", np.zeros(C, np.float32)),
                                 weight("conv_block.bn.running_mean", C),
                                 const("conv_block.bn.running_var", np.ones(C, np.float32))],
         "/conv_block/bn/BatchNormalization", epsilon=1e-5)
x = node("Relu", [x], "/conv_block/relu/Relu")
x = node("MaxPool", [x], "/conv_block/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2])

# Image to tokens: [N,32,8,8] -> [N,64,32]
x = node("Reshape", [x, const("tokens_shape", np.array([0, C, -1], np.int64))], "/to_tokens/Reshape")
tokens = node("Transpose", [x], "/to_tokens/Transpose", perm=[0, 2, 1])


def layer_norm(inp, scope):
    return node("LayerNormalization", [inp, const(f"{scope}.weight", np.ones(C, np.float32)),
                                       const(f"{scope}.bias", np.zeros(C, np.float32))],
                f"/transformer/{scope}/LayerNormalization", axis=-1, epsilon=1e-5)


def linear(inp, scope, n_in, n_out):
    y = node("MatMul", [inp, weight(f"transformer.{scope}.weight", n_in, n_out)], f"/transformer/{scope}/MatMul")
    return node("Add", [y, weight(f"transformer.{scope}.bias", n_out)], f"/transformer/{scope}/Add")


def split_heads(t, scope):
    t = node("Reshape", [t, const(f"{scope}_heads_shape", np.array([0, -1, HEADS, HEAD_DIM], np.int64))],
             f"/transformer/attn/{scope}/Reshape")
    return node("Transpose", [t], f"/transformer/attn/{scope}/Transpose", perm=[0, 2, 1, 3])


# Self-attention with a pre-norm and a residual connection.
h = layer_norm(tokens, "ln1")
q = split_heads(linear(h, "attn/q_proj", C, C), "q")
k = split_heads(linear(h, "attn/k_proj", C, C), "k")
v = split_heads(linear(h, "attn/v_proj", C, C), "v")
kt = node("Transpose", [k], "/transformer/attn/Transpose_kt", perm=[0, 1, 3, 2])
scores = node("MatMul", [q, kt], "/transformer/attn/MatMul_qk")
scores = node("Div", [scores, const("attn_scale", np.array(np.sqrt(HEAD_DIM), np.float32))], "/transformer/attn/Div")
probs = node("Softmax", [scores], "/transformer/attn/Softmax", axis=-1)
ctx = node("MatMul", [probs, v], "/transformer/attn/MatMul_pv")
ctx = node("Transpose", [ctx], "/transformer/attn/merge/Transpose", perm=[0, 2, 1, 3])
ctx = node("Reshape", [ctx, const("merge_shape", np.array([0, -1, C], np.int64))], "/transformer/attn/merge/Reshape")
attn = linear(ctx, "attn/out_proj", C, C)
x = node("Add", [tokens, attn], "/transformer/residual1/Add")

# MLP with GELU in its erf form: 0.5 * x * (1 + erf(x / sqrt(2))).
h = layer_norm(x, "ln2")
h = linear(h, "mlp/fc1", C, MLP)
g = node("Div", [h, const("gelu_sqrt2", np.array(np.sqrt(2.0), np.float32))], "/transformer/mlp/gelu/Div")
g = node("Erf", [g], "/transformer/mlp/gelu/Erf")
g = node("Add", [g, const("gelu_one", np.array(1.0, np.float32))], "/transformer/mlp/gelu/Add")
g = node("Mul", [h, g], "/transformer/mlp/gelu/Mul")
g = node("Mul", [g, const("gelu_half", np.array(0.5, np.float32))], "/transformer/mlp/gelu/Mul_1")
h = linear(g, "mlp/fc2", MLP, C)
x = node("Add", [x, h], "/transformer/residual2/Add")

# Classifier: mean over tokens, then a Gemm.
x = node("ReduceMean", [x], "/head/pool/ReduceMean", axes=[1], keepdims=0)
nodes.append(helper.make_node("Gemm", [x, weight("head.fc.weight", CLASSES, C), weight("head.fc.bias", CLASSES)],
                              ["logits"], name="/head/fc/Gemm", transB=1))

graph = helper.make_graph(
    nodes, "fusescope_sample",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 16, 16])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", CLASSES])],
    initializer=inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="fusescope-sample", producer_version="1")
model.ir_version = 8
model.doc_string = "Fusescope's bundled sample: a conv block and a transformer block."
onnx.checker.check_model(model, full_check=True)
onnx.save(model, sys.argv[1] if len(sys.argv) > 1 else "sample.onnx")
