#!/usr/bin/env python3
"""BERT-family encoders as ONNX Runtime's transformers optimizer saves them
(export_ort_transformer.py: EmbedLayerNormalization, Attention with packed Q, K and V,
SkipLayerNormalization, BiasGelu or FastGelu), each with its mask as the optimizer passes it:
EmbedLayerNormalization's mask_index (1-D), the raw 2-D attention mask, and a causal
(unidirectional) Attention. For each, against the NumPy forward pass: O0 (the contrib kernels);
O2 on the CPU, which keeps Attention for its kernel and must leave no more nodes than the
optimizer wrote; and lower-contrib-ops with the fusions after it, as the CUDA backend's O2
runs them (every Attention lowered to products and our fused attention, the mask's ops built
once for all layers). Both compiled graphs pass ONNX's full checker.

usage: check_ort_transformer.py FUSESCOPE_CLI
"""
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

CLI = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_ort_transformer as ort_form  # noqa: E402

problems = []
# The passes the CUDA backend's O2 runs on such a model (lower-contrib-ops lowers Attention
# there; a --passes list runs it as registered, which lowers everything).
LOWERED = ("lower-contrib-ops,fold-shape-computation,fold-constants,eliminate-common-subexpressions,"
           "eliminate-dead-code,matmul-add-fusion,activation-fusion,skip-layer-norm-fusion")


def check(name, tmp):
    cfg = ort_form.CONFIGS[name]
    model, weights, feeds = ort_form.build(cfg)
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    inputs = []
    for k, v in feeds.items():
        np.save(os.path.join(tmp, f"{name}.{k}.npy"), v)
        inputs += ["--input", f"{k}={os.path.join(tmp, f'{name}.{k}.npy')}"]
    want = ort_form.reference(cfg, weights, feeds)

    for label, pipeline in (("O2", ["--pipeline", "O2"]), ("lowered", ["--passes", LOWERED])):
        compiled = os.path.join(tmp, f"{name}.{label}.onnx")
        r = subprocess.run([CLI, "compile", path, *pipeline, "-o", compiled], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            problems.append(f"{name} {label}: compile failed: {r.stderr.strip()}")
            continue
        m = onnx.load(compiled)
        ops = collections.Counter((n.domain or "ai.onnx", n.op_type) for n in m.graph.node)
        print(f"{name} {label}: {len(model.graph.node)} nodes -> {len(m.graph.node)}: "
              + ", ".join(f"{op} {count}" for (_, op), count in sorted(ops.items(), key=lambda kv: -kv[1])))
        kept, fused = ops[("com.microsoft", "Attention")], ops[("ai.fusescope", "Attention")]
        if (kept, fused) != ((cfg["layers"], 0) if label == "O2" else (0, cfg["layers"])):
            problems.append(f"{name} {label}: {kept} com.microsoft.Attention kept, {fused} lowered, of {cfg['layers']}")
        if label == "O2" and len(m.graph.node) > len(model.graph.node):
            problems.append(f"{name} O2: {len(m.graph.node)} nodes, more than the {len(model.graph.node)} written")
        if ops[("ai.onnx", "Where")] > 1:
            problems.append(f"{name} {label}: the mask was built {ops[('ai.onnx', 'Where')]} times")
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # noqa: BLE001 - report whatever the checker says
            problems.append(f"{name} {label}: checker rejected the graph: {str(e).splitlines()[0]}")
    for label, pipeline in (("O0", ["--pipeline", "O0"]), ("O2", ["--pipeline", "O2"]), ("lowered", ["--passes", LOWERED])):
        out = os.path.join(tmp, f"{name}.{label}")
        r = subprocess.run([CLI, "run", path, *pipeline, "--iterations", "1", "--output-dir", out, *inputs],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            problems.append(f"{name} {label}: run failed: {r.stderr.strip()}")
            continue
        got = onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
        diff = float(np.max(np.abs(got - want)))
        print(f"{name} {label}: largest difference from NumPy {diff:.3g}")
        if got.shape != want.shape or not diff <= 1e-4:
            problems.append(f"{name} {label}: {got.shape} differs from NumPy's {want.shape} by {diff:g}")


with tempfile.TemporaryDirectory() as tmp:
    for model_name in ("ort_small", "ort_small_raw", "ort_small_gpt"):
        check(model_name, tmp)
for p in problems:
    print(f"FAIL: {p}")
sys.exit(1 if problems else 0)
