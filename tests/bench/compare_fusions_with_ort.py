#!/usr/bin/env python3
"""Node and fused-op counts of Fusescope's O2 against ONNX Runtime's optimizer, per model.

usage: compare_fusions_with_ort.py FUSESCOPE_CLI MODEL_CACHE ORT_NODE_MODULES [LEVEL [MODEL.onnx ...]]

The MODEL.onnx files named (the style fixtures: other exporters' idioms) join the table;
FSC_MODELS=a,b replaces the exported models with those of the cache.

For each exported real model: the imported node count, ONNX Runtime's graph at LEVEL
(default `extended`, written with the session option optimizedModelFilePath through
tests/bench/ort_optimize.js) and `fusescope-cli compile --pipeline O2 --json`: nodes left,
nodes in each tool's own fused-op domain (com.microsoft / ai.fusescope), and the time each
took (ORT: session creation, which includes loading; Fusescope: the pass pipeline alone).
Then a second table counts the fusions the issue names, per kind and tool:
  conv       ORT FusedConv                      | ours FusedConv
  gelu       ORT Gelu, BiasGelu, FastGelu       | ours Gelu, and Gelu epilogues of FusedMatMul/FusedGemm/FusedConv
  layernorm  ORT (Skip)(Simplified)LayerNormalization and ONNX's | ours LayerNormalization, SkipLayerNorm, RmsNorm
  attention  ORT Attention, MultiHeadAttention, GroupQueryAttention | ours Attention
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

import onnx

CLI, CACHE, NODE_MODULES = sys.argv[1:4]
LEVEL = sys.argv[4] if len(sys.argv) > 4 else "extended"
MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "vit_b_16", "swin_t", "transformer_encoder", "bert_base",
          "lstm", "densenet121", "googlenet", "shufflenet_v2_x1_0", "squeezenet1_1", "mnasnet1_0", "regnet_y_400mf",
          "mobilenet_v3_large", "convnext_tiny", "resnext50_32x4d", "inception_v3", "regnet_x_800mf", "maxvit_t", "lraspp_mobilenet_v3_large",
          "s3d", "llama_small", "wav2vec_small", "unet_small"]
if os.environ.get("FSC_MODELS"):  # a subset: models added by hand to the cache
    MODELS = os.environ["FSC_MODELS"].split(",")
MODELS += sys.argv[5:]
HERE = os.path.dirname(os.path.abspath(__file__))


def ort_graph(model_path, out_path):
    env = dict(os.environ, NODE_PATH=NODE_MODULES)
    run = subprocess.run(["node", os.path.join(HERE, "ort_optimize.js"), model_path, LEVEL, out_path],
                         capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip())
    info = json.loads(run.stdout)
    graph = onnx.load(out_path, load_external_data=False).graph
    ops = collections.Counter((n.domain + "::" if n.domain else "") + n.op_type for n in graph.node)
    fused = sum(c for op, c in ops.items() if op.startswith("com.microsoft::"))
    return len(graph.node), fused, info["session_ms"], info["version"], ops


KINDS = {
    "conv": ({"FusedConv"}, {"FusedConv"}),
    "gelu": ({"Gelu", "BiasGelu", "FastGelu"}, {"Gelu"}),
    "layernorm": ({"LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
                   "SkipSimplifiedLayerNormalization"}, {"LayerNormalization", "SkipLayerNorm", "RmsNorm"}),
    "attention": ({"Attention", "MultiHeadAttention", "GroupQueryAttention"}, {"Attention"}),
}


def fusion_kinds(graph, theirs):
    counts = collections.Counter()
    for n in graph.node:
        for kind, (ort_ops, our_ops) in KINDS.items():
            if n.op_type in (ort_ops if theirs else our_ops):
                counts[kind] += 1
        if not theirs and n.domain == "ai.fusescope" and n.op_type in ("FusedMatMul", "FusedGemm", "FusedConv"):
            act = next((a.s.decode() for a in n.attribute if a.name == "activation"), "")
            if act.startswith("Gelu"):
                counts["gelu"] += 1
    return counts


def ours(model_path, out_path):
    run = subprocess.run([CLI, "compile", model_path, "--pipeline", "O2", "--json", "-o", out_path],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip())
    j = json.loads(run.stdout)
    fused = sum(c for op, c in j["ops_after"].items() if op.startswith("ai.fusescope."))
    passes_ms = sum(p["ms"] for p in j["passes"])
    return j["nodes_before"], j["nodes_after"], fused, passes_ms, j["ops_after"]


kinds_rows = []


print(f"| model | imported | ORT {LEVEL} nodes | Fusescope O2 nodes | ours / ORT | ORT fused ops | our fused ops | ORT session ms | our passes ms |")
print("|---|---|---|---|---|---|---|---|---|")
version = "?"
with tempfile.TemporaryDirectory() as tmp:
    for name in MODELS:
        path = name if name.endswith(".onnx") else os.path.join(CACHE, name + ".onnx")
        name = os.path.basename(name).removesuffix(".onnx")
        if not os.path.exists(path):
            print(f"| {name} | missing | | | | | | | |")
            continue
        ort_path, our_path = os.path.join(tmp, name + ".ort.onnx"), os.path.join(tmp, name + ".ours.onnx")
        n_ort, f_ort, ms_ort, version, ort_ops = ort_graph(path, ort_path)
        before, n_us, f_us, ms_us, our_ops = ours(path, our_path)
        kinds_rows.append((name, fusion_kinds(onnx.load(ort_path, load_external_data=False).graph, True),
                           fusion_kinds(onnx.load(our_path, load_external_data=False).graph, False)))
        print(f"| {name} | {before} | {n_ort} | {n_us} | {n_us / n_ort:.2f} | {f_ort} | {f_us} | {ms_ort:.0f} | {ms_us:.1f} |")
        if os.environ.get("FSC_SHOW_OPS"):
            print("  ORT:", dict(ort_ops.most_common(10)), file=sys.stderr)
            print("  ours:", dict(sorted(our_ops.items(), key=lambda kv: -kv[1])[:10]), file=sys.stderr)
print(f"\nONNX Runtime {version} (npm onnxruntime-node, CPU build), level `{LEVEL}`.\n")
print("| model | " + " | ".join(f"{k} ORT / ours" for k in KINDS) + " | ours >= ORT |")
print("|---|" + "---|" * (len(KINDS) + 1))
for name, theirs, mine in kinds_rows:
    cells = " | ".join(f"{theirs[k]} / {mine[k]}" for k in KINDS)
    ok = all(mine[k] >= theirs[k] for k in KINDS)
    print(f"| {name} | {cells} | {'yes' if ok else 'NO'} |")
