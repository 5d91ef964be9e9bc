#!/usr/bin/env python3
"""Transformers quantized as ONNX Runtime's quantize_dynamic writes them
(quantize_dynamic_matmuls.py: DynamicQuantizeLinear, MatMulInteger, Cast, the scales' Mul),
compiled at O2: every MatMulInteger chain becomes one com.microsoft.MatMulIntegerToFloat, or
DynamicQuantizeMatMul where its DynamicQuantizeLinear feeds it alone (nothing of the chain
left, no more nodes than ONNX Runtime's optimizer leaves: one per product and one per shared
DynamicQuantizeLinear), the compiled model passes ONNX's full checker, the fusion alone
gives O0's outputs to the bit, and O2 (the attention, GELU and norm fusions besides, whose
float roundings move some activations across a quantization step) stays within 5% of O0's
largest output.

The models (export_dynamic_quantized.py, exported in float into CACHE_DIR when missing):
four Hugging Face-style encoder blocks (separate query, key and value Linears reading one
input, so one DynamicQuantizeLinear feeds three products), and a torch.nn.TransformerEncoder
of two layers (a packed QKV projection), d_model 256, 32 tokens. Each is checked with int8 weights per tensor (quantize_dynamic's
default), per column, and uint8 weights with zero points (its older default).

And an LSTM as quantize_dynamic writes it (DynamicQuantizeLSTM), against the float layer.

usage: check_dynamic_quantized.py FUSESCOPE_CLI CACHE_DIR
"""
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

CLI, CACHE = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
problems = []


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def output_of(model, tmp, label, *pipeline):
    out = os.path.join(tmp, label)
    r = cli("run", model, *pipeline, "--output-dir", out, "--iterations", "1", "--seed", "3")
    if r.returncode != 0:
        problems.append(f"{label}: run {' '.join(pipeline)} failed: {r.stderr.strip()}")
        return None
    return onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))


def check(name, variant, tmp):
    label = f"{name} {variant or 'int8'}"
    float_model = os.path.join(CACHE, name + ".onnx")
    if not os.path.exists(float_model):
        subprocess.run([sys.executable, os.path.join(HERE, "export_dynamic_quantized.py"), name, float_model, "--float"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    model = os.path.join(tmp, f"{name}{variant}.onnx")
    subprocess.run([sys.executable, os.path.join(HERE, "quantize_dynamic_matmuls.py"), float_model, model,
                    *([variant] if variant else [])], check=True, stdout=subprocess.DEVNULL)
    products = sum(n.op_type == "MatMulInteger" for n in onnx.load(model).graph.node)
    compiled = os.path.join(tmp, f"{name}{variant}.O2.onnx")
    r = cli("compile", model, "--pipeline", "O2", "-o", compiled)
    if r.returncode != 0:
        problems.append(f"{label}: compile failed: {r.stderr.strip()}")
        return
    m = onnx.load(compiled)
    ops = collections.Counter(n.op_type for n in m.graph.node)
    print(f"{label}: {products} MatMulInteger -> O2 {len(m.graph.node)} nodes: {dict(ops)}")
    fused_products = ops["MatMulIntegerToFloat"] + ops["DynamicQuantizeMatMul"]
    if fused_products != products or ops["MatMulInteger"] or ops["Cast"]:
        problems.append(f"{label}: {fused_products} MatMulIntegerToFloat or DynamicQuantizeMatMul of {products}, "
                        f"{ops['MatMulInteger']} MatMulInteger and {ops['Cast']} Cast left")
    if ops["DynamicQuantizeLinear"] and ops["DynamicQuantizeMatMul"] == products:
        problems.append(f"{label}: {ops['DynamicQuantizeLinear']} DynamicQuantizeLinear left beside products that quantize their own")
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - report whatever the checker says
        problems.append(f"{label}: checker rejected the O2 graph: {str(e).splitlines()[0]}")
    o0 = output_of(model, tmp, label + " O0", "--pipeline", "O0")
    fused = output_of(model, tmp, label + " fused", "--passes", "integer-matmul-fusion")
    o2 = output_of(model, tmp, label + " O2", "--pipeline", "O2")
    if o0 is None or fused is None or o2 is None:
        return
    if not np.array_equal(o0, fused):
        problems.append(f"{label}: the fusion alone moves the output by {np.max(np.abs(o0 - fused)):g}")
    spread = float(np.max(np.abs(o0 - o2))) / float(np.max(np.abs(o0)))
    print(f"{label}: O2 within {spread:.3%} of O0's largest output (largest difference {np.max(np.abs(o0 - o2)):.3g})")
    if not spread <= 0.05:
        problems.append(f"{label}: O2 is {spread:.2%} of the largest output from O0")


def check_lstm(variant, tmp):
    """A bidirectional LSTM (20 steps, batch 2, 48 inputs, hidden 64) as quantize_dynamic writes
    it (DynamicQuantizeLSTM): it runs, O2 gives O0's output, and both stay within 5% of the
    float layer's largest output (the quantization of X, h and the weights)."""
    from onnx import TensorProto, helper, numpy_helper
    label = f"lstm {variant or 'int8'}"
    rng = np.random.default_rng(11)
    hidden, inputs = 64, 48
    inits = [numpy_helper.from_array(rng.normal(0, 0.15, (2, 4 * hidden, inputs)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.normal(0, 0.15, (2, 4 * hidden, hidden)).astype(np.float32), "R"),
             numpy_helper.from_array(rng.normal(0, 0.1, (2, 8 * hidden)).astype(np.float32), "B")]
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=hidden, direction="bidirectional")
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [20, 2, inputs])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [20, 2, 2, hidden])], inits)
    float_model, model = os.path.join(tmp, "lstm.onnx"), os.path.join(tmp, f"lstm{variant}.q.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), float_model)
    subprocess.run([sys.executable, os.path.join(HERE, "quantize_dynamic_matmuls.py"), float_model, model,
                    *([variant] if variant else [])], check=True, stdout=subprocess.DEVNULL)
    if sum(n.op_type == "DynamicQuantizeLSTM" for n in onnx.load(model).graph.node) != 1:
        problems.append(f"{label}: the quantizer wrote no DynamicQuantizeLSTM")
        return
    reference = output_of(float_model, tmp, label + " float", "--pipeline", "O0")
    o0 = output_of(model, tmp, label + " O0", "--pipeline", "O0")
    o2 = output_of(model, tmp, label + " O2", "--pipeline", "O2")
    if reference is None or o0 is None or o2 is None:
        return
    if not np.array_equal(o0, o2):
        problems.append(f"{label}: O2 moves the output by {np.max(np.abs(o0 - o2)):g}")
    spread = float(np.max(np.abs(o0 - reference))) / float(np.max(np.abs(reference)))
    print(f"{label}: within {spread:.3%} of the float layer's largest output")
    if not spread <= 0.05:
        problems.append(f"{label}: {spread:.2%} of the float layer's largest output away from it")


with tempfile.TemporaryDirectory() as tmp:
    for model_name in ("dq_blocks", "dq_encoder"):
        for weights in ("", "--per-channel", "--uint8-weights"):
            check(model_name, weights, tmp)
    for weights in ("", "--per-channel", "--uint8-weights"):
        check_lstm(weights, tmp)
for p in problems:
    print(f"FAIL: {p}")
sys.exit(1 if problems else 0)
