#!/usr/bin/env python3
"""A LLaMA-style decoder as onnxruntime-genai writes it for the CPU with int4 weights
(export_genai_llm.py: MatMulNBits, GroupQueryAttention with rotary and past key/values,
SimplifiedLayerNormalization and its Skip form), run as a generator runs it: a prompt with
empty past inputs, then one decoding step fed the prompt's present outputs. At O0 and O2, the
logits and present key/values against the NumPy forward pass; the O2 graph through ONNX's full
checker.

usage: check_genai_llm.py FUSESCOPE_CLI
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

CLI = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_genai_llm as genai  # noqa: E402

problems = []
cfg = genai.CONFIGS["genai_small"]


def run(model, feeds, pipeline, tmp, label):
    args = []
    for name, value in feeds.items():
        path = os.path.join(tmp, f"{label}.{name}.npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    out = os.path.join(tmp, label)
    r = subprocess.run([CLI, "run", model, "--pipeline", pipeline, "--iterations", "1", "--output-dir", out, *args],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        problems.append(f"{label}: run failed: {r.stderr.strip()}")
        return None
    count = 1 + 2 * cfg["layers"]
    return [onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(out, f"output_{i}.pb"))) for i in range(count)]


def compare(label, got, want_logits, want_presents):
    for name, g, w in [("logits", got[0], want_logits)] + [(f"present {i}", got[1 + i], p) for i, p in enumerate(want_presents)]:
        diff = float(np.max(np.abs(g - w))) if g.shape == w.shape else float("inf")
        if not diff <= 1e-4:
            problems.append(f"{label}: {name} {g.shape} differs from NumPy's {w.shape} by {diff:g}")
    print(f"{label}: logits within {float(np.max(np.abs(got[0] - want_logits))):.3g} of NumPy")


with tempfile.TemporaryDirectory() as tmp:
    model, dense = genai.build(cfg)
    path = os.path.join(tmp, "genai_small.onnx")
    onnx.save(model, path)
    compiled = os.path.join(tmp, "genai_small.O2.onnx")
    r = subprocess.run([CLI, "compile", path, "--pipeline", "O2", "-o", compiled], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        problems.append(f"compile failed: {r.stderr.strip()}")
    else:
        m = onnx.load(compiled)
        print(f"O2: {len(model.graph.node)} nodes -> {len(m.graph.node)}")
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # noqa: BLE001 - report whatever the checker says
            problems.append(f"checker rejected the O2 graph: {str(e).splitlines()[0]}")
    prompt = genai.feeds_for(cfg, cfg["prompt"])
    want_logits, want_presents = genai.reference(cfg, dense, prompt)
    step = genai.feeds_for(cfg, 1, past=want_presents, seed=2)
    step_logits, step_presents = genai.reference(cfg, dense, step)
    for pipeline in ("O0", "O2"):
        got = run(path, prompt, pipeline, tmp, f"prompt {pipeline}")
        if got is not None:
            compare(f"prompt {pipeline}", got, want_logits, want_presents)
            # The decoding step reads what this run's prompt step wrote.
            step = genai.feeds_for(cfg, 1, past=got[1:], seed=2)
            got = run(path, step, pipeline, tmp, f"step {pipeline}")
            if got is not None:
                compare(f"decoding step {pipeline}", got, step_logits, step_presents)
for p in problems:
    print(f"FAIL: {p}")
sys.exit(1 if problems else 0)
