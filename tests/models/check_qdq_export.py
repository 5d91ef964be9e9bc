#!/usr/bin/env python3
"""A PyTorch-quantized MobileNetV2 exported in the QDQ form (export_qdq_mobilenet.py, exported
into CACHE_DIR when missing), compiled at O2: no more nodes than ONNX Runtime's `extended`
level leaves (67: every convolution ONNX Runtime's QLinearConv with `channels_last`, the whole
trunk NHWC without a Transpose, the residual Adds QLinearAdd, the pooling and the classifier
ONNX Runtime's quantized ops, one QuantizeLinear in and one DequantizeLinear out), the compiled model passes ONNX's full checker with the com.microsoft
opset declared, and the outputs at O0 (the QDQ form in float) and O2 (in integers) are
within two steps of the output's quantization scale of PyTorch's.

usage: check_qdq_export.py FUSESCOPE_CLI CACHE_DIR
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

CLI, CACHE = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
model = os.path.join(CACHE, "mnv2_q.onnx")
if not os.path.exists(model):
    subprocess.run([sys.executable, os.path.join(HERE, "export_qdq_mobilenet.py"), CACHE], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
problems = []


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


with tempfile.TemporaryDirectory() as tmp:
    compiled = os.path.join(tmp, "compiled.onnx")
    r = cli("compile", model, "--pipeline", "O2", "-o", compiled)
    if r.returncode != 0:
        sys.exit(f"compile failed: {r.stderr.strip()}")
    m = onnx.load(compiled)
    ops = collections.Counter((n.domain or "", n.op_type) for n in m.graph.node)
    print(f"O2: {len(m.graph.node)} nodes: {dict(ops)}")
    if len(m.graph.node) > 67:
        problems.append(f"{len(m.graph.node)} nodes, ONNX Runtime's extended level leaves 67")
    expected = {("com.microsoft", "QLinearConv"): 52, ("com.microsoft", "QLinearAdd"): 10, ("com.microsoft", "QGemm"): 1,
                ("com.microsoft", "QLinearGlobalAveragePool"): 1, ("", "QuantizeLinear"): 1, ("", "DequantizeLinear"): 1}
    for op, count in expected.items():
        if ops[op] != count:
            problems.append(f"{ops[op]} {op[1]}, expected {count}")
    nchw = [n.name for n in m.graph.node if n.op_type in ("QLinearConv", "QLinearGlobalAveragePool")
            and not any(a.name == "channels_last" and a.i == 1 for a in n.attribute)]
    if nchw:
        problems.append(f"{len(nchw)} quantized ops left NCHW, first {nchw[0]}")
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - report whatever the checker says
        problems.append(f"checker rejected the O2 graph: {str(e).splitlines()[0]}")
    # The output's scale: the last DequantizeLinear's.
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    last = [n for n in m.graph.node if n.op_type == "DequantizeLinear"][-1]
    step = float(inits[last.input[1]])
    reference = np.load(os.path.join(CACHE, "mnv2_q.output.npy"))
    for pipeline in ("O0", "O2"):
        out = os.path.join(tmp, pipeline)
        r = cli("run", model, "--pipeline", pipeline, "--input", f"input={os.path.join(CACHE, 'mnv2_q.input.npy')}",
                "--output-dir", out, "--iterations", "1")
        if r.returncode != 0:
            problems.append(f"run --pipeline {pipeline} failed: {r.stderr.strip()}")
            continue
        ours = onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
        steps = float(np.max(np.abs(ours - reference))) / step
        print(f"{pipeline}: within {steps:.2f} quantization steps of PyTorch")
        if not steps <= 2.0:
            problems.append(f"{pipeline} is {steps:.2f} steps of {step:g} from PyTorch's output")
for p in problems:
    print(f"FAIL: {p}")
sys.exit(1 if problems else 0)
