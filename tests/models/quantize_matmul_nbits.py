#!/usr/bin/env python3
"""Weight-only block quantization as ONNX Runtime's MatMul4BitsQuantizer (and Olive, and
onnxruntime-genai's int4 models) writes it, without ONNX Runtime: every MatMul whose B is a
2-D float32 constant becomes com.microsoft.MatMulNBits with that weight in `bits`-bit codes,
blocks of `block` values along K sharing a scale (and, asymmetric, a zero point packed as the
codes are).

usage: quantize_matmul_nbits.py IN.onnx OUT.onnx [--bits 4] [--block 128] [--symmetric]

Defaults as MatMul4BitsQuantizer's: 4 bits, blocks of 128, asymmetric.
"""
import argparse

import numpy as np
import onnx
from onnx import helper, numpy_helper


def quantize(w, bits, block, symmetric):
    """w: (K, N) float32 -> codes (N, blocks, block * bits / 8), scales (N, blocks), packed zero points or None."""
    k, n = w.shape
    blocks = (k + block - 1) // block
    padded = np.zeros((blocks * block, n), np.float32)
    padded[:k] = w
    wb = padded.T.reshape(n, blocks, block)
    top = (1 << bits) - 1
    if symmetric:
        scale = np.abs(wb).max(-1) / (1 << (bits - 1))
        zero = np.full((n, blocks), 1 << (bits - 1), np.int64)
    else:
        lo, hi = np.minimum(wb.min(-1), 0), np.maximum(wb.max(-1), 0)
        scale = (hi - lo) / top
        zero = np.clip(np.round(-lo / np.where(scale == 0, 1, scale)), 0, top).astype(np.int64)
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    codes = np.clip(np.round(wb / scale[..., None]) + zero[..., None], 0, top).astype(np.uint8)
    per = 8 // bits

    def pack(values, width):  # (N, width * per) codes -> (N, width) bytes, low bits first
        out = np.zeros((values.shape[0], width), np.uint8)
        for j in range(per):
            out |= (values[:, j::per] << (j * bits)).astype(np.uint8)
        return out

    packed = pack(codes.reshape(n, -1), blocks * block * bits // 8).reshape(n, blocks, block * bits // 8)
    zero_points = None
    if not symmetric:
        width = (blocks * bits + 7) // 8
        padded_zero = np.zeros((n, width * per), np.int64)
        padded_zero[:, :blocks] = zero
        zero_points = pack(padded_zero, width)
    return packed, scale, zero_points


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--bits", type=int, default=4, choices=(2, 4, 8))
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--symmetric", action="store_true")
    args = ap.parse_args()
    model = onnx.load(args.input)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes, used = [], 0
    for node in g.node:
        w = inits.get(node.input[1]) if node.op_type == "MatMul" and node.domain == "" else None
        if w is None or len(w.dims) != 2 or w.data_type != onnx.TensorProto.FLOAT:
            nodes.append(node)
            continue
        k, n = w.dims
        codes, scales, zero_points = quantize(numpy_helper.to_array(w), args.bits, args.block, args.symmetric)
        stem = node.name or node.output[0]
        names = [f"{stem}_B", f"{stem}_scales"]
        g.initializer.extend([numpy_helper.from_array(codes, names[0]), numpy_helper.from_array(scales.reshape(-1), names[1])])
        if zero_points is not None:
            names.append(f"{stem}_zero_points")
            g.initializer.append(numpy_helper.from_array(zero_points.reshape(-1), names[2]))
        nodes.append(helper.make_node("MatMulNBits", [node.input[0], *names], list(node.output), name=stem + "_Q4",
                                      domain="com.microsoft", K=k, N=n, bits=args.bits, block_size=args.block))
        used += 1
    del g.node[:]
    g.node.extend(nodes)
    referenced = {i for n in g.node for i in n.input}
    kept = [t for t in g.initializer if t.name in referenced]
    del g.initializer[:]
    g.initializer.extend(kept)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, args.output)
    print(f"{used} MatMul -> MatMulNBits ({args.bits} bits, blocks of {args.block}, "
          f"{'symmetric' if args.symmetric else 'asymmetric'})")


if __name__ == "__main__":
    main()
