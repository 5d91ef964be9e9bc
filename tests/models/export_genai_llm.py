#!/usr/bin/env python3
"""A LLaMA-style decoder in the form onnxruntime-genai's model builder writes for the CPU with
int4 weights: Gather of the embedding; per layer SkipSimplifiedLayerNormalization (the first
layer's SimplifiedLayerNormalization), the Q, K and V projections as 4-bit MatMulNBits,
GroupQueryAttention with the rotation inside and the past key/value inputs and present
outputs, the output projection, SiLU-gated MLP; the final norm and the LM head. seqlens_k
and total_sequence_length come from the attention mask as the builder computes them.
Random weights, quantized as quantize_matmul_nbits.py does (blocks of 32, asymmetric).

usage: export_genai_llm.py NAME OUT.onnx [--reference] [--past N]

Writes OUT.onnx and, beside it, the benchmark's feeds for a prompt of `prompt` tokens (the
past inputs empty): MODEL.INPUT.npy; with --past N instead one decoding step after N tokens of
random past keys and values. With --reference also the NumPy forward pass's logits as
MODEL.reference.npy.

NAMEs:
  genai_small  2 layers, hidden 64, 4 query heads over 2 key/value heads, MLP 160,
               vocabulary 300, a 12-token prompt
  genai_llm    8 layers, hidden 1024, 16 query heads over 4 key/value heads, MLP 2816,
               vocabulary 32000, a 128-token prompt
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantize_matmul_nbits import quantize  # noqa: E402

CONFIGS = {
    "genai_small": dict(layers=2, hidden=64, heads=4, kv_heads=2, mlp=160, vocab=300, positions=64, prompt=12),
    "genai_llm": dict(layers=8, hidden=1024, heads=16, kv_heads=4, mlp=2816, vocab=32000, positions=512, prompt=128),
}
EPS = 1e-5
BLOCK = 32


def build(cfg, seed=0):
    """The model and the dequantized weights the NumPy pass uses."""
    rng = np.random.default_rng(seed)
    d, hd = cfg["hidden"], cfg["hidden"] // cfg["heads"]
    inits, dense = [], {}
    ms = dict(domain="com.microsoft")

    def tensor(name, value):
        inits.append(nh.from_array(value, name))
        dense[name] = value
        return name

    def linear(name, x, k, n, nodes):
        w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        codes, scales, zeros = quantize(w, 4, BLOCK, False)
        inits.extend([nh.from_array(codes, name + ".B"), nh.from_array(scales.reshape(-1), name + ".scales"),
                      nh.from_array(zeros.reshape(-1), name + ".zero_points")])
        blocks = codes.shape[1]
        lo = codes & 15
        hi = codes >> 4
        q = np.stack([lo, hi], -1).reshape(n, blocks * BLOCK)[:, :k].astype(np.float32)
        zp = np.stack([zeros & 15, zeros >> 4], -1).reshape(n, -1)[:, :blocks].astype(np.float32)
        dense[name] = ((q - np.repeat(zp, BLOCK, 1)[:, :k]) * np.repeat(scales, BLOCK, 1)[:, :k]).T.copy()
        nodes.append(h.make_node("MatMulNBits", [x, name + ".B", name + ".scales", name + ".zero_points"], [name + ".out"],
                                 name=name, K=k, N=n, bits=4, block_size=BLOCK, **ms))
        return name + ".out"

    nodes = [
        h.make_node("Gather", [tensor("embed", (rng.standard_normal((cfg["vocab"], d)) * 0.5).astype(np.float32)), "input_ids"], ["x0"]),
        h.make_node("ReduceSum", ["attention_mask", tensor("one_axis", np.array([1], np.int64))], ["mask_sum"], keepdims=0),
        h.make_node("Sub", ["mask_sum", tensor("one", np.array(1, np.int64))], ["seqlens_k64"]),
        h.make_node("Cast", ["seqlens_k64"], ["seqlens_k"], to=TP.INT32),
        h.make_node("Shape", ["attention_mask"], ["mask_shape"]),
        h.make_node("Gather", ["mask_shape", "one"], ["total64"], axis=0),
        h.make_node("Cast", ["total64"], ["total_sequence_length"], to=TP.INT32),
    ]
    half = hd // 2
    angles = np.arange(cfg["positions"])[:, None] / (10000.0 ** (np.arange(half) / half))[None]
    tensor("cos_cache", np.cos(angles).astype(np.float32))
    tensor("sin_cache", np.sin(angles).astype(np.float32))
    residual, delta = "x0", None
    for i in range(cfg["layers"]):
        p = f"layers.{i}."
        gamma = tensor(p + "input_norm", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32))
        if delta is None:
            nodes.append(h.make_node("SimplifiedLayerNormalization", [residual, gamma], [p + "normed"], epsilon=EPS, axis=-1))
        else:
            nodes.append(h.make_node("SkipSimplifiedLayerNormalization", [delta, residual, gamma],
                                     [p + "normed", "", "", p + "residual"], epsilon=EPS, **ms))
            residual = p + "residual"
        q = linear(p + "q", p + "normed", d, d, nodes)
        k = linear(p + "k", p + "normed", d, cfg["kv_heads"] * hd, nodes)
        v = linear(p + "v", p + "normed", d, cfg["kv_heads"] * hd, nodes)
        nodes.append(h.make_node("GroupQueryAttention",
                                 [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", "seqlens_k",
                                  "total_sequence_length", "cos_cache", "sin_cache"],
                                 [p + "attn", f"present.{i}.key", f"present.{i}.value"],
                                 num_heads=cfg["heads"], kv_num_heads=cfg["kv_heads"], do_rotary=1, **ms))
        o = linear(p + "o", p + "attn", d, d, nodes)
        nodes.append(h.make_node("SkipSimplifiedLayerNormalization",
                                 [o, residual, tensor(p + "post_norm", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32))],
                                 [p + "normed2", "", "", p + "residual2"], epsilon=EPS, **ms))
        residual = p + "residual2"
        gate = linear(p + "gate", p + "normed2", d, cfg["mlp"], nodes)
        up = linear(p + "up", p + "normed2", d, cfg["mlp"], nodes)
        nodes += [h.make_node("Sigmoid", [gate], [p + "gate_sigmoid"]),
                  h.make_node("Mul", [gate, p + "gate_sigmoid"], [p + "silu"]),
                  h.make_node("Mul", [p + "silu", up], [p + "gated"])]
        delta = linear(p + "down", p + "gated", cfg["mlp"], d, nodes)
    nodes.append(h.make_node("SkipSimplifiedLayerNormalization",
                             [delta, residual, tensor("final_norm", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32))],
                             ["final_normed"], epsilon=EPS, **ms))
    logits = linear("lm_head", "final_normed", d, cfg["vocab"], nodes)
    nodes[-1].output[0] = "logits"
    kv = ["batch_size", cfg["kv_heads"], "past_sequence_length", hd]
    present = ["batch_size", cfg["kv_heads"], "total_sequence_length", hd]
    inputs = [h.make_tensor_value_info("input_ids", TP.INT64, ["batch_size", "sequence_length"]),
              h.make_tensor_value_info("attention_mask", TP.INT64, ["batch_size", "total_sequence_length"])]
    outputs = [h.make_tensor_value_info("logits", TP.FLOAT, ["batch_size", "sequence_length", cfg["vocab"]])]
    for i in range(cfg["layers"]):
        for part in ("key", "value"):
            inputs.append(h.make_tensor_value_info(f"past_key_values.{i}.{part}", TP.FLOAT, kv))
            outputs.append(h.make_tensor_value_info(f"present.{i}.{part}", TP.FLOAT, present))
    graph = h.make_graph(nodes, "genai_llm", inputs, outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                         producer_name="onnxruntime-genai")
    return model, dense


def feeds_for(cfg, tokens, past=None, seed=1):
    """Inputs for `tokens` new tokens after `past` (the present arrays of an earlier step)."""
    rng = np.random.default_rng(seed)
    hd = cfg["hidden"] // cfg["heads"]
    past_len = 0 if past is None else past[0].shape[2]
    f = {"input_ids": rng.integers(0, cfg["vocab"], (1, tokens)).astype(np.int64),
         "attention_mask": np.ones((1, past_len + tokens), np.int64)}
    for i in range(cfg["layers"]):
        for j, part in enumerate(("key", "value")):
            f[f"past_key_values.{i}.{part}"] = (np.zeros((1, cfg["kv_heads"], 0, hd), np.float32) if past is None
                                                else past[2 * i + j])
    return f


def rms(x, g):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * g


def rotate(x, positions, cos, sin):  # x (heads, tokens, hd): halves
    half = x.shape[-1] // 2
    c, s = cos[positions][None], sin[positions][None]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * c - b * s, b * c + a * s], -1)


def reference(cfg, w, feeds):
    """Logits and the present key/values, in float64, from the ops' definitions."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    ids = feeds["input_ids"][0]
    n, kvh, hd = cfg["heads"], cfg["kv_heads"], cfg["hidden"] // cfg["heads"]
    past_len = feeds["past_key_values.0.key"].shape[2]
    positions = np.arange(past_len, past_len + len(ids))
    x = w["embed"][ids]
    residual, delta, presents = x, None, []
    for i in range(cfg["layers"]):
        p = f"layers.{i}."
        if delta is not None:
            residual = residual + delta
        normed = rms(residual, w[p + "input_norm"])
        q = (normed @ w[p + "q"]).reshape(-1, n, hd).transpose(1, 0, 2)
        k = (normed @ w[p + "k"]).reshape(-1, kvh, hd).transpose(1, 0, 2)
        v = (normed @ w[p + "v"]).reshape(-1, kvh, hd).transpose(1, 0, 2)
        q, k = rotate(q, positions, w["cos_cache"], w["sin_cache"]), rotate(k, positions, w["cos_cache"], w["sin_cache"])
        k = np.concatenate([feeds[f"past_key_values.{i}.key"][0], k], 1)
        v = np.concatenate([feeds[f"past_key_values.{i}.value"][0], v], 1)
        presents += [k[None].astype(np.float32), v[None].astype(np.float32)]
        kk, vv = np.repeat(k, n // kvh, 0), np.repeat(v, n // kvh, 0)
        scores = q @ kk.transpose(0, 2, 1) / np.sqrt(hd)
        scores = np.where(np.arange(kk.shape[1])[None, None] > positions[None, :, None], -np.inf, scores)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        attn = (probs @ vv).transpose(1, 0, 2).reshape(len(ids), -1)
        residual = residual + attn @ w[p + "o"]
        normed = rms(residual, w[p + "post_norm"])
        gate = normed @ w[p + "gate"]
        delta = (gate / (1 + np.exp(-gate)) * (normed @ w[p + "up"])) @ w[p + "down"]
    logits = rms(residual + delta, w["final_norm"]) @ w["lm_head"]
    return logits[None].astype(np.float32), presents


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--past" in sys.argv:
        args.remove(sys.argv[sys.argv.index("--past") + 1])
    if len(args) != 2 or args[0] not in CONFIGS:
        sys.exit(__doc__)
    name, out = args
    cfg = CONFIGS[name]
    model, dense = build(cfg)
    onnx.save(model, out)
    stem = out[:-len(".onnx")] if out.endswith(".onnx") else out
    if "--past" in sys.argv:
        past_len = int(sys.argv[sys.argv.index("--past") + 1])
        rng = np.random.default_rng(3)
        shape = (1, cfg["kv_heads"], past_len, cfg["hidden"] // cfg["heads"])
        feeds = feeds_for(cfg, 1, past=[rng.standard_normal(shape).astype(np.float32) for _ in range(2 * cfg["layers"])])
    else:
        feeds = feeds_for(cfg, cfg["prompt"])
    for k, v in feeds.items():
        np.save(f"{stem}.{k}.npy", v)
    if "--reference" in sys.argv:
        np.save(f"{stem}.reference.npy", reference(cfg, dense, feeds)[0])


if __name__ == "__main__":
    main()
