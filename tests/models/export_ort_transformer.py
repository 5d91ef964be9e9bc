#!/usr/bin/env python3
"""BERT-family encoders in the form ONNX Runtime's transformers optimizer saves them (its
optimizer.py with --model_type bert; Optimum's optimization levels 2 to 4), for the checks and
the CPU benchmark. The ops are com.microsoft's: EmbedLayerNormalization, Attention (the Q, K and
V weights packed in one), SkipLayerNormalization with the output projections' biases, and
BiasGelu (or FastGelu), laid out as that optimizer lays them out. Weights are random (BERT's
initialization, every layer its own); the optimizer itself needs ONNX Runtime's Python package,
which these machines do not have.

usage: export_ort_transformer.py NAME OUT.onnx

Writes OUT.onnx, OUT's reference inputs as MODEL.INPUT.npy beside it (the benchmark's feeds)
and, with --reference, the NumPy forward pass's output as MODEL.reference.npy.

NAMEs:
  bert_ort_fused  BERT-base: 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522,
                  128 tokens, the mask as EmbedLayerNormalization's mask_index (1-D)
  ort_small       2 layers, hidden 64, 4 heads, 24 tokens, mask_index (1-D), BiasGelu
  ort_small_raw   the same with the raw 2-D attention mask fed to Attention, FastGelu
  ort_small_gpt   unidirectional (causal) Attention without a mask, FastGelu
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

CONFIGS = {
    "bert_ort_fused": dict(layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, positions=512, seq=128,
                           mask="ends", gelu="BiasGelu"),
    "ort_small": dict(layers=2, hidden=64, heads=4, ffn=256, vocab=500, positions=64, seq=24, mask="ends",
                      gelu="BiasGelu"),
    "ort_small_raw": dict(layers=2, hidden=64, heads=4, ffn=256, vocab=500, positions=64, seq=24, mask="raw",
                          gelu="FastGelu"),
    "ort_small_gpt": dict(layers=2, hidden=64, heads=4, ffn=256, vocab=500, positions=64, seq=24, mask="causal",
                          gelu="FastGelu"),
}
EPS = 1e-12


def build(cfg, seed=0):
    """The model, its weights by name and the reference inputs."""
    rng = np.random.default_rng(seed)
    d, f = cfg["hidden"], cfg["ffn"]
    w = {}

    def weight(name, *shape, std=0.02):
        w[name] = (rng.standard_normal(shape) * std).astype(np.float32)
        return name

    def ones(name, n):
        w[name] = (1 + 0.05 * rng.standard_normal(n)).astype(np.float32)
        return name

    ms = dict(domain="com.microsoft")
    nodes = [h.make_node("Cast", ["input_ids"], ["ids32"], to=TP.INT32),
             h.make_node("Cast", ["token_type_ids"], ["types32"], to=TP.INT32),
             h.make_node("Cast", ["attention_mask"], ["mask32"], to=TP.INT32)]
    causal = cfg["mask"] == "causal"
    nodes.append(h.make_node(
        "EmbedLayerNormalization",
        ["ids32", "types32", weight("word", cfg["vocab"], d), weight("position", cfg["positions"], d),
         weight("segment", 2, d), ones("emb_gamma", d), weight("emb_beta", d), "" if causal else "mask32"],
        ["emb", "mask_index"], epsilon=EPS, **ms))
    mask = {"ends": "mask_index", "raw": "mask32", "causal": ""}[cfg["mask"]]
    x = "emb"
    for i in range(cfg["layers"]):
        p = f"l{i}_"
        attn_inputs = [x, weight(p + "qkv", d, 3 * d), weight(p + "qkv_bias", 3 * d)] + ([mask] if mask else [])
        nodes.append(h.make_node("Attention", attn_inputs, [p + "att"], num_heads=cfg["heads"],
                                 unidirectional=int(causal), **ms))
        nodes.append(h.make_node("MatMul", [p + "att", weight(p + "wo", d, d)], [p + "proj"]))
        nodes.append(h.make_node("SkipLayerNormalization",
                                 [p + "proj", x, ones(p + "ln1_g", d), weight(p + "ln1_b", d), weight(p + "bo", d)],
                                 [p + "ln1"], epsilon=EPS, **ms))
        nodes.append(h.make_node("MatMul", [p + "ln1", weight(p + "w1", d, f)], [p + "up"]))
        nodes.append(h.make_node(cfg["gelu"], [p + "up", weight(p + "b1", f)], [p + "act"], **ms))
        nodes.append(h.make_node("MatMul", [p + "act", weight(p + "w2", f, d)], [p + "down"]))
        nodes.append(h.make_node("SkipLayerNormalization",
                                 [p + "down", p + "ln1", ones(p + "ln2_g", d), weight(p + "ln2_b", d), weight(p + "b2", d)],
                                 [p + "ln2"], epsilon=EPS, **ms))
        x = p + "ln2"
    nodes[-1].output[0] = "last_hidden_state"
    dims = ["batch_size", "sequence_length"]
    graph = h.make_graph(
        nodes, "ort_transformer",
        [h.make_tensor_value_info(n, TP.INT64, dims) for n in ("input_ids", "token_type_ids", "attention_mask")],
        [h.make_tensor_value_info("last_hidden_state", TP.FLOAT, dims + [d])],
        [nh.from_array(v, k) for k, v in w.items()])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14), h.make_opsetid("com.microsoft", 1)],
                         producer_name="onnxruntime.transformers")
    s = cfg["seq"]
    feeds = {"input_ids": rng.integers(0, cfg["vocab"], (1, s)).astype(np.int64),
             "token_type_ids": (np.arange(s) >= s // 2).astype(np.int64)[None, :],
             "attention_mask": np.ones((1, s), np.int64)}
    if not causal:
        feeds["attention_mask"][0, s - s // 8:] = 0  # right padding
    return model, w, feeds


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * g + b


def gelu(x, kind):
    if kind == "FastGelu":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def reference(cfg, w, feeds, project=None):
    """The encoder's forward pass in NumPy (float64), from the contrib ops' definitions.
    project(x, name) multiplies by the weight `name` (x @ w[name] when not given)."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    project = project or (lambda x, name: x @ w[name])
    ids, types, mask = feeds["input_ids"], feeds["token_type_ids"], feeds["attention_mask"]
    b, s = ids.shape
    d, n = cfg["hidden"], cfg["heads"]
    x = layer_norm(w["word"][ids] + w["position"][np.arange(s)][None] + w["segment"][types], w["emb_gamma"], w["emb_beta"])
    add = np.zeros((b, 1, s, s))
    if cfg["mask"] == "ends":  # the mask's count of ones is each sequence's end
        ends = (mask == 1).sum(1)
        add += np.where(np.arange(s)[None, :] < ends[:, None], 0.0, -10000.0)[:, None, None, :]
    elif cfg["mask"] == "raw":
        add += np.where(mask > 0, 0.0, -10000.0)[:, None, None, :]
    else:
        add += np.where(np.arange(s)[None, :] > np.arange(s)[:, None], -10000.0, 0.0)
    for i in range(cfg["layers"]):
        p = f"l{i}_"
        qkv = project(x, p + "qkv") + w[p + "qkv_bias"]
        q, k, v = (t.reshape(b, s, n, d // n).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, axis=-1))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // n) + add
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        att = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
        ln1 = layer_norm(project(att, p + "wo") + x + w[p + "bo"], w[p + "ln1_g"], w[p + "ln1_b"])
        act = gelu(project(ln1, p + "w1") + w[p + "b1"], cfg["gelu"])
        x = layer_norm(project(act, p + "w2") + ln1 + w[p + "b2"], w[p + "ln2_g"], w[p + "ln2_b"])
    return x.astype(np.float32)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2 or args[0] not in CONFIGS:
        sys.exit(__doc__)
    name, out = args
    cfg = CONFIGS[name]
    model, w, feeds = build(cfg)
    onnx.checker.check_model(model)
    onnx.save(model, out)
    stem = out[:-len(".onnx")] if out.endswith(".onnx") else out
    for k, v in feeds.items():
        np.save(f"{stem}.{k}.npy", v)
    if "--reference" in sys.argv:
        np.save(f"{stem}.reference.npy", reference(cfg, w, feeds))


if __name__ == "__main__":
    main()
