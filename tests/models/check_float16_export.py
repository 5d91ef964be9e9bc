#!/usr/bin/env python3
"""Models exported in float16 (convert_float16.py: onnxconverter-common's form, float32 at the
interface) run in float32 on the CPU: at O2 `float16-to-float32` leaves no node computing in
float16, the compiled model passes ONNX's full checker, and its output stays within 1% of the
float32 model's (export_models.py's reference output), while O0 runs the float16 kernels
themselves (within 5%: float16 rounds every intermediate).

usage: check_float16_export.py FUSESCOPE_CLI CACHE_DIR
"""
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


def run(model, tmp, label, *args):
    out = os.path.join(tmp, label)
    r = subprocess.run([CLI, "run", model, *args, "--iterations", "1", "--output-dir", out], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        problems.append(f"{label}: run failed: {r.stderr.strip()}")
        return None
    return onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb"))).astype(np.float64)


def check(name, tmp):
    float_model = os.path.join(CACHE, name + ".onnx")
    model = os.path.join(tmp, name + ".float16.onnx")
    subprocess.run([sys.executable, os.path.join(HERE, "convert_float16.py"), float_model, model], check=True)
    compiled = os.path.join(tmp, name + ".O2.onnx")
    r = subprocess.run([CLI, "compile", model, "--pipeline", "O2", "-o", compiled], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        problems.append(f"{name}: compile failed: {r.stderr.strip()}")
        return
    m = onnx.load(compiled)
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - report whatever the checker says
        problems.append(f"{name}: checker rejected the O2 graph: {str(e).splitlines()[0]}")
        m = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v.type.tensor_type.elem_type for v in list(m.graph.value_info) + list(m.graph.output)}
    half = [n.op_type for n in m.graph.node if n.op_type != "Cast" and types.get(n.output[0]) == onnx.TensorProto.FLOAT16]
    print(f"{name}: O2 {len(m.graph.node)} nodes, {len(half)} computing in float16")
    if half:
        problems.append(f"{name}: O2 leaves {len(half)} nodes in float16: {sorted(set(half))}")
    want = np.load(os.path.join(CACHE, name + ".output.npy")).astype(np.float64)
    feeds = ["--input", f"input={os.path.join(CACHE, name + '.input.npy')}"]
    scale = float(np.max(np.abs(want)))
    for label, pipeline, tolerance in (("O0", "O0", 5e-2), ("O2", "O2", 1e-2)):
        got = run(model, tmp, f"{name}.{label}", "--pipeline", pipeline, *feeds)
        if got is None:
            continue
        error = float(np.max(np.abs(got - want))) / scale
        print(f"{name} {label}: largest difference from the float32 model {error:.3%} of its largest output")
        if got.shape != want.shape or not error <= tolerance:
            problems.append(f"{name} {label}: {error:.2%} of the largest output from the float32 model")


with tempfile.TemporaryDirectory() as tmp:
    for model_name in ("resnet50", "llama_small"):
        check(model_name, tmp)
for p in problems:
    print(f"FAIL: {p}")
sys.exit(1 if problems else 0)
