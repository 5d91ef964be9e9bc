#!/usr/bin/env python3
"""Checks fusescope-cli on the exported real models against the onnx Python package.

usage: check_real_models.py FUSESCOPE_CLI CACHE_DIR

For each model: `inspect --json` must agree with onnx on node counts (top level and with
subgraphs), the op histogram, initializer count and parameter count; shapes of inputs and
outputs must match; `export` must round-trip to the same text dump, and ONNX's checker
must accept the exported file; `run` on the reference input must match PyTorch's output
within 1e-4 relative error (max |ours - torch| / max |torch|). Prints 'N passed, N failed'.
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
MODELS = ["resnet50", "mobilenet_v2", "vit_b_16", "swin_t", "transformer_encoder", "lstm"]


def walk(graph, hist):
    total = 0
    for node in graph.node:
        total += 1
        key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
        hist[key] += 1
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                total += walk(g, hist)
    return total


def dims(value_info):
    out = []
    for d in value_info.type.tensor_type.shape.dim:
        out.append(d.dim_value if d.HasField("dim_value") else (d.dim_param or None))
    return out


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


failures, passed = [], 0
for name in MODELS:
    path = os.path.join(CACHE, name + ".onnx")
    problems = []
    model = onnx.load(path)
    hist = collections.Counter()
    total = walk(model.graph, hist)
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    r = cli("inspect", "--json", path)
    if r.returncode != 0:
        problems.append(f"inspect failed: {r.stderr.strip()}")
    else:
        j = json.loads(r.stdout)
        expect = {
            "top-level nodes": (j["nodes"]["top_level"], len(model.graph.node)),
            "total nodes": (j["nodes"]["total"], total),
            "op histogram": (j["op_histogram"], dict(hist)),
            "initializers": (j["parameters"]["initializers"], len(model.graph.initializer)),
            "input shape": (j["inputs"][0]["shape"], dims(model.graph.input[0])),
            "output shape": (j["outputs"][0]["shape"], dims(model.graph.output[0])),
        }
        if not any(n.op_type == "Constant" for n in model.graph.node):
            expect["parameters"] = (j["parameters"]["count"], params)
        for what, (ours, theirs) in expect.items():
            if ours != theirs:
                problems.append(f"{what}: fusescope {ours} != onnx {theirs}")
        print(f"{name}: {j['nodes']['total']} nodes, {j['parameters']['count']} parameters, "
              f"{len(j['unknown_shape_values'])} values of unknown shape")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, name + ".onnx")
        r = cli("export", path, out)
        if r.returncode != 0:
            problems.append(f"export failed: {r.stderr.strip()}")
        else:
            a, b = cli("dump", path), cli("dump", out)
            if a.returncode or b.returncode or a.stdout != b.stdout:
                problems.append("round trip changed the text dump")
            try:
                onnx.checker.check_model(out)
            except Exception as e:  # noqa: BLE001 - report whatever the checker says
                problems.append(f"checker rejected the export: {str(e).splitlines()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        ref_in = os.path.join(CACHE, name + ".input.npy")
        ref_out = np.load(os.path.join(CACHE, name + ".output.npy"))
        r = cli("run", path, "--input", "input=" + ref_in, "--output-dir", tmp, "--threads", "2")
        if r.returncode != 0:
            problems.append(f"run failed: {r.stderr.strip()}")
        else:
            ours = onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(tmp, "output_0.pb")))
            if not np.any(ref_out):
                problems.append("torch's reference output is all zeros: the comparison would prove nothing")
            elif ours.shape != ref_out.shape:
                problems.append(f"run output shape {ours.shape} != torch {ref_out.shape}")
            else:
                err = float(np.max(np.abs(ours - ref_out)) / max(float(np.max(np.abs(ref_out))), 1e-30))
                print(f"{name}: run matches torch with relative error {err:.2e}")
                if not err <= 1e-4:
                    problems.append(f"run output differs from torch: relative error {err:.2e} > 1e-4")
    if problems:
        failures.append(name)
        for p in problems:
            print(f"  FAIL {name}: {p}")
    else:
        passed += 1
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
