#!/usr/bin/env python3
"""A dynamically quantized segmentation network in ONNX Runtime's quantize_dynamic style.

usage: make_convinteger_model.py OUT.onnx [--per-channel]

Every convolution is written as quantize_dynamic writes it: DynamicQuantizeLinear of the
activation (uint8, a scale and zero point computed per run), ConvInteger with uint8 weights
quantized per tensor with their own zero point, Cast to float, Mul by the product of both
scales, then the float bias Add and the Relu. The network: a stride-2 stem to 512x512, two
more stride-2 stages to 128x128, twelve 3x3 convolutions at 128x128 dilated 1, 2, 4, 8 (as
DeepLab's atrous stages are), and a 1x1 classifier: 16 quantized convolutions on a
1x3x1024x1024 input. Weights come from a fixed seed; the model is checked by onnx.checker.
With --per-channel, weights are quantized per output channel as quantize_dynamic's
per_channel=True writes them: uint8 with one scale and one zero point per output channel.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PER_CHANNEL = "--per-channel" in sys.argv[2:]
rng = np.random.default_rng(11)
nodes, inits = [], []


def init(name, array):
    inits.append(numpy_helper.from_array(np.asarray(array), name))
    return name


def quantized_conv(x, name, c_in, c_out, kernel, stride=1, dilation=1, relu=True):
    w = (rng.standard_normal((c_out, c_in, kernel, kernel)) * np.sqrt(2.0 / (c_in * kernel * kernel))).astype(np.float32)
    axes = (1, 2, 3) if PER_CHANNEL else None
    lo, hi = np.minimum(w.min(axis=axes), 0.0), np.maximum(w.max(axis=axes), 0.0)
    w_scale = ((hi - lo) / 255.0).astype(np.float32)
    w_zero = np.clip(np.round(-lo / w_scale), 0, 255).astype(np.uint8)
    shape = (c_out, 1, 1, 1) if PER_CHANNEL else ()
    w_q = np.clip(np.round(w / w_scale.reshape(shape)) + w_zero.reshape(shape), 0, 255).astype(np.uint8)
    if PER_CHANNEL:  # the scales multiply [1, c_out, h, w]; the zero points are one per channel
        w_scale = w_scale.reshape(c_out, 1, 1)
    pad = dilation * (kernel - 1) // 2
    nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [f"{x}_quantized", f"{x}_scale", f"{x}_zero_point"],
                                  name=f"{x}_QuantizeLinear"))
    nodes.append(helper.make_node("Mul", [f"{x}_scale", init(f"{name}.weight_scale", w_scale)], [f"{name}_scales_mul"],
                                  name=f"{name}_scales_mul"))
    nodes.append(helper.make_node("ConvInteger", [f"{x}_quantized", init(f"{name}.weight_quantized", w_q),
                                                  f"{x}_zero_point", init(f"{name}.weight_zero_point", w_zero)],
                                  [f"{name}_output_quantized"], name=f"{name}_quant", kernel_shape=[kernel, kernel],
                                  strides=[stride, stride], dilations=[dilation, dilation], pads=[pad] * 4))
    nodes.append(helper.make_node("Cast", [f"{name}_output_quantized"], [f"{name}_cast"], name=f"{name}_cast",
                                  to=TensorProto.FLOAT))
    nodes.append(helper.make_node("Mul", [f"{name}_cast", f"{name}_scales_mul"], [f"{name}_scaled"], name=f"{name}_mul"))
    bias = init(f"{name}.bias", (rng.standard_normal((1, c_out, 1, 1)) * 0.1).astype(np.float32))
    nodes.append(helper.make_node("Add", [f"{name}_scaled", bias], [f"{name}_biased"], name=f"{name}_bias"))
    if not relu:
        return f"{name}_biased"
    nodes.append(helper.make_node("Relu", [f"{name}_biased"], [f"{name}_relu"], name=f"{name}_relu"))
    return f"{name}_relu"


x = "image"
x = quantized_conv(x, "stem", 3, 16, 3, stride=2)
x = quantized_conv(x, "down1", 16, 32, 3, stride=2)
x = quantized_conv(x, "down2", 32, 64, 3, stride=2)
for i in range(12):
    x = quantized_conv(x, f"atrous{i}", 64, 64, 3, dilation=[1, 2, 4, 8][i % 4])
x = quantized_conv(x, "classifier", 64, 8, 1, relu=False)
nodes.append(helper.make_node("Identity", [x], ["logits"], name="logits"))

graph = helper.make_graph(nodes, "convinteger_seg", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 1024, 1024])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 8, 128, 128])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnx.quantize")
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
