#!/usr/bin/env python3
"""PyTorch-quantized CNNs exported in the QDQ form (export_qdq_models.py, exported into
CACHE_DIR when missing), compiled at O2: no more nodes than ONNX Runtime's `extended` level
leaves (every convolution ONNX Runtime's QLinearConv with `channels_last`, the trunk NHWC
without a Transpose, residual Adds, squeeze-and-excitation scales and branch joins ONNX
Runtime's QLinearAdd, QLinearMul and QLinearConcat, MaxPool on the bytes, MobileNetV3's
hardswish a table lookup), the compiled model
passes ONNX's full checker with the com.microsoft opset declared, and the outputs at O0 (the
QDQ form in float) and O2 (in integers) are within two steps of the output's quantization
scale of each other and of PyTorch's (ResNet-18: four, below).

usage: check_qdq_export.py FUSESCOPE_CLI CACHE_DIR [NAME...]   (default: all five)
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
MS = "com.microsoft"
# Per model: ONNX Runtime 1.31's `extended` node count, and op counts the O2 graph must have.
# ResNet-18's QDQ form (O0, and O2 with it: both equal ONNX Runtime's output) is 3 steps from
# PyTorch's, whose fbgemm kernels round their requantizations otherwise, over 20 layers.
STEPS_FROM_PYTORCH = {"resnet18_q": 4.0}
MODELS = {
    "mnv2_q": (67, {(MS, "QLinearConv"): 52, (MS, "QLinearAdd"): 10, (MS, "QGemm"): 1,
                    (MS, "QLinearGlobalAveragePool"): 1, ("", "QuantizeLinear"): 1, ("", "DequantizeLinear"): 1}),
    "resnet18_q": (34, {(MS, "QLinearConv"): 20, (MS, "QLinearAdd"): 8, ("", "MaxPool"): 0,
                        ("ai.fusescope", "MaxPool"): 1, ("", "Relu"): 0}),
    "mnv3_q": (223, {(MS, "QLinearConv"): 62, (MS, "QLinearMul"): 8, (MS, "QLinearGlobalAveragePool"): 9,
                     ("", "GlobalAveragePool"): 0, ("ai.fusescope", "QuantizedLookup"): 29, ("", "HardSigmoid"): 0}),
    "googlenet_q": (84, {(MS, "QLinearConv"): 57, (MS, "QLinearConcat"): 9, ("", "Concat"): 0}),
    "inception_q": (127, {(MS, "QLinearConv"): 94, (MS, "QLinearConcat"): 15, (MS, "QLinearAveragePool"): 9,
                          ("", "AveragePool"): 0}),
}
problems = []


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def cached(model, name):
    """The exported model and its reference arrays are there and whole: a run stopped mid-export
    (or a full disk) leaves a truncated file, which would fail every later run."""
    arrays = [os.path.join(CACHE, name + suffix) for suffix in (".input.npy", ".output.npy")]
    if not all(os.path.exists(p) for p in [model, *arrays]):
        return False
    try:
        onnx.checker.check_model(onnx.load(model))
        for p in arrays:
            np.load(p)
    except Exception:  # noqa: BLE001 - anything unreadable is exported again
        return False
    return True


def check(name, tmp):
    most, expected = MODELS[name]
    model = os.path.join(CACHE, name + ".onnx")
    if not cached(model, name):
        subprocess.run([sys.executable, os.path.join(HERE, "export_qdq_models.py"), CACHE, name], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    compiled = os.path.join(tmp, name + ".compiled.onnx")
    r = cli("compile", model, "--pipeline", "O2", "-o", compiled)
    if r.returncode != 0:
        problems.append(f"{name}: compile failed: {r.stderr.strip()}")
        return
    m = onnx.load(compiled)
    ops = collections.Counter((n.domain or "", n.op_type) for n in m.graph.node)
    print(f"{name} O2: {len(m.graph.node)} nodes: {dict(ops)}")
    if len(m.graph.node) > most:
        problems.append(f"{name}: {len(m.graph.node)} nodes, ONNX Runtime's extended level leaves {most}")
    for op, count in expected.items():
        if ops[op] != count:
            problems.append(f"{name}: {ops[op]} {op[1]}, expected {count}")
    if ops[("", "Transpose")]:
        problems.append(f"{name}: {ops[('', 'Transpose')]} Transpose(s) left")
    nchw = [n.name for n in m.graph.node if n.op_type in ("QLinearConv", "QLinearGlobalAveragePool", "QLinearAveragePool")
            and not any(a.name == "channels_last" and a.i == 1 for a in n.attribute)]
    if nchw:
        problems.append(f"{name}: {len(nchw)} quantized ops left NCHW, first {nchw[0]}")
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - report whatever the checker says
        problems.append(f"{name}: checker rejected the O2 graph: {str(e).splitlines()[0]}")
    # The output's scale: the last DequantizeLinear's.
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    last = [n for n in m.graph.node if n.op_type == "DequantizeLinear"][-1]
    step = float(inits[last.input[1]])
    reference = np.load(os.path.join(CACHE, name + ".output.npy"))
    allowed = STEPS_FROM_PYTORCH.get(name, 2.0)
    outputs = {}
    for pipeline in ("O0", "O2"):
        out = os.path.join(tmp, name + pipeline)
        r = cli("run", model, "--pipeline", pipeline, "--input", f"input={os.path.join(CACHE, name + '.input.npy')}",
                "--output-dir", out, "--iterations", "1")
        if r.returncode != 0:
            problems.append(f"{name}: run --pipeline {pipeline} failed: {r.stderr.strip()}")
            continue
        ours = onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
        outputs[pipeline] = ours
        steps = float(np.max(np.abs(ours - reference))) / step
        print(f"{name} {pipeline}: within {steps:.2f} quantization steps of PyTorch")
        if not steps <= allowed + 1e-3:
            problems.append(f"{name}: {pipeline} is {steps:.2f} steps of {step:g} from PyTorch's output")
    if len(outputs) == 2:
        steps = float(np.max(np.abs(outputs["O0"] - outputs["O2"]))) / step
        print(f"{name}: O2 within {steps:.2f} quantization steps of O0")
        if not steps <= 2.0 + 1e-3:
            problems.append(f"{name}: O2 is {steps:.2f} steps of {step:g} from O0's output")


with tempfile.TemporaryDirectory() as tmp:
    for model_name in sys.argv[3:] or MODELS:
        check(model_name, tmp)
for p in problems:
    print(f"FAIL: {p}")
sys.exit(1 if problems else 0)
