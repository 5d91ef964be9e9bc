#!/usr/bin/env python3
"""Import keeps every shape ONNX's own inference finds: for each model, the node outputs whose
shape stays unknown (no rank, or a dim with neither a size nor a symbol) after
`fusescope-cli inspect` are no more than after onnx.shape_inference.infer_shapes, inside
If/Loop/Scan bodies too.

usage: check_symbols_vs_onnx.py CLI MODEL_OR_FOLDER...   (a folder: its *.onnx)
Prints a line per model where ours leaves more unknown; exits 1 if any does.
"""
import glob
import json
import os
import subprocess
import sys

import onnx

CLI = sys.argv[1]
MODELS = []
for arg in sys.argv[2:]:
    MODELS += sorted(glob.glob(os.path.join(arg, "*.onnx"))) if os.path.isdir(arg) else [arg]


def unknown_outputs(graph, prefix=""):
    """Node outputs with an unknown shape, named as inspect names them (body values prefixed)."""
    typed = {v.name: v for v in list(graph.value_info) + list(graph.output)}
    names = set()
    for node in graph.node:
        for out in node.output:
            if not out:
                continue
            v = typed.get(out)
            t = v.type.tensor_type if v is not None and v.type.HasField("tensor_type") else None
            if v is not None and not v.type.HasField("tensor_type"):
                continue  # sequences and maps: not counted by either side
            if t is None or not t.HasField("shape") or any(
                    not d.HasField("dim_value") and not d.HasField("dim_param") for d in t.shape.dim):
                names.add(prefix + out)
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                names |= unknown_outputs(a.g, prefix + node.name + "/" + a.g.name + ":")
    return names


worse = 0
compared = 0
for path in MODELS:
    model = onnx.load(path)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - ONNX refuses it: nothing to compare against
        continue
    theirs = unknown_outputs(inferred.graph)
    inputs = {i.name for i in model.graph.input}
    p = subprocess.run([CLI, "inspect", path, "--json"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        continue
    ours = {n for n in json.loads(p.stdout)["unknown_shape_values"] if n not in inputs}
    compared += 1
    if len(ours) > len(theirs):
        worse += 1
        print(f"{path}: {len(ours)} values of unknown shape against ONNX's {len(theirs)}: "
              f"{', '.join(sorted(ours - theirs)[:6])}")
print(f"symbols against ONNX's inference: {compared} models compared, {worse} with more unknown")
sys.exit(1 if worse or compared < 10 else 0)
