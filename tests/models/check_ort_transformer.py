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

Then the same encoders as quantize_dynamic writes them after that optimizer
(quantize_dynamic_matmuls.py: QAttention, QEmbedLayerNormalization, the MatMuls as
DynamicQuantizeLinear and MatMulInteger chains), at O0 and O2, against NumPy's forward pass
over the dequantized weights with each product's activation quantized as
DynamicQuantizeLinear does; O2 leaves no more nodes than ONNX Runtime 1.31's `extended` level
on these files (4 + 8 per layer).

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
        compare_run(path, pipeline, inputs, want, 1e-4, f"{name} {label}", os.path.join(tmp, f"{name}.{label}"))


def compare_run(path, pipeline, inputs, want, tolerance, label, out):
    """Runs the model once and holds its first output to NumPy's within `tolerance`."""
    r = subprocess.run([CLI, "run", path, *pipeline, "--iterations", "1", "--output-dir", out, *inputs],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        problems.append(f"{label}: run failed: {r.stderr.strip()}")
        return
    got = onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
    diff = float(np.max(np.abs(got - want)))
    print(f"{label}: largest difference from NumPy {diff:.3g}")
    if got.shape != want.shape or not diff <= tolerance:
        problems.append(f"{label}: {got.shape} differs from NumPy's {want.shape} by {diff:g}")


def dynamic_quantized(x):
    """x as DynamicQuantizeLinear quantizes it (float32, uint8 over its range and 0), dequantized."""
    x = x.astype(np.float32)
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
    zero = np.clip(np.round(-np.float32(lo) / scale), 0, 255)
    return (np.clip(np.round(x / scale) + zero, 0, 255) - zero).astype(np.float64) * np.float64(scale)


def dequantized_weights(model, weights):
    """The float weights the quantized model holds: each NAME_quantized with its scale and zero point."""
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    out = dict(weights)
    for name, q in inits.items():
        if not name.endswith("_quantized"):
            continue
        stem = name[:-len("_quantized")]
        scale, zero = inits[stem + "_scale"], inits[stem + "_zero_point"]
        out[stem.split(".", 1)[-1]] = (q.astype(np.float64) - zero.astype(np.float64)) * scale.astype(np.float64)
    return out


def check_quantized(name, tmp):
    cfg = ort_form.CONFIGS[name]
    model, weights, feeds = ort_form.build(cfg)
    float_path, path = os.path.join(tmp, name + ".float.onnx"), os.path.join(tmp, name + "_dq.onnx")
    onnx.save(model, float_path)
    subprocess.run([sys.executable, os.path.join(HERE, "quantize_dynamic_matmuls.py"), float_path, path], check=True,
                   stdout=subprocess.DEVNULL)
    quantized = onnx.load(path)
    w = dequantized_weights(quantized, weights)
    want = ort_form.reference(cfg, w, feeds, project=lambda x, weight: dynamic_quantized(x) @ w[weight])
    inputs = []
    for k, v in feeds.items():
        np.save(os.path.join(tmp, f"{name}.{k}.npy"), v)
        inputs += ["--input", f"{k}={os.path.join(tmp, f'{name}.{k}.npy')}"]
    compiled = os.path.join(tmp, f"{name}_dq.O2.onnx")
    r = subprocess.run([CLI, "compile", path, "--pipeline", "O2", "-o", compiled], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        problems.append(f"{name} quantized: compile failed: {r.stderr.strip()}")
        return
    m = onnx.load(compiled)
    ops = collections.Counter(n.op_type for n in m.graph.node)
    print(f"{name} quantized O2: {len(quantized.graph.node)} nodes -> {len(m.graph.node)}: {dict(ops)}")
    if ops["QAttention"] != cfg["layers"] or ops["QEmbedLayerNormalization"] != 1:
        problems.append(f"{name} quantized O2: {ops['QAttention']} QAttention and {ops['QEmbedLayerNormalization']} "
                        f"QEmbedLayerNormalization, not {cfg['layers']} and 1")
    if len(m.graph.node) > 4 + 8 * cfg["layers"]:
        problems.append(f"{name} quantized O2: {len(m.graph.node)} nodes, more than ONNX Runtime's {4 + 8 * cfg['layers']}")
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - report whatever the checker says
        problems.append(f"{name} quantized O2: checker rejected the graph: {str(e).splitlines()[0]}")
    for label in ("O0", "O2"):
        compare_run(path, ["--pipeline", label], inputs, want, 1e-3, f"{name} quantized {label}",
                    os.path.join(tmp, f"{name}_dq.{label}"))


with tempfile.TemporaryDirectory() as tmp:
    for model_name in ("ort_small", "ort_small_raw", "ort_small_gpt"):
        check(model_name, tmp)
        check_quantized(model_name, tmp)
for p in problems:
    print(f"FAIL: {p}")
sys.exit(1 if problems else 0)
