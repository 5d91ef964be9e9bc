#!/usr/bin/env python3
"""Rewrite a float model's MatMuls (and with --conv its Convs) as ONNX Runtime's
quantize_dynamic writes them.

usage: quantize_dynamic_matmuls.py IN.onnx OUT.onnx [--uint8-weights] [--per-channel] [--conv]

ONNX Runtime is not needed: this writes the IntegerOps form its quantizer emits for every
MatMul whose B is a 2-D float initializer (MatMulConstBOnly, its default for dynamic mode):
DynamicQuantizeLinear of the activation (one per activation, shared by every op that reads
it), MatMulInteger with the quantized weights and both zero points, Cast to float, Mul of
the two scales, Mul of the product by it. The bias Add the exporter wrote after the MatMul
stays. With --conv, each Conv with constant weights likewise: ConvInteger, Cast, the scales'
Mul, and its bias as a float Add of [1, C, 1, ...] after them. Weights are int8, symmetric,
per tensor by default (quantize_dynamic's defaults); --uint8-weights quantizes them
asymmetrically to uint8 (its older default), --per-channel gives each output channel its own
scale and zero point. Transformers and CNNs exported by many tools arrive in this form
(Hugging Face Optimum's dynamic quantization writes it too).

A model saved by ONNX Runtime's transformers optimizer (export_ort_transformer.py) gets its
contrib ops quantized as quantize_dynamic quantizes them: each com.microsoft.Attention
without qkv_hidden_sizes becomes QAttention (the input through DynamicQuantizeLinear, the
packed weights int8 with a 7-bit range, reduce_range), each EmbedLayerNormalization with at
most two outputs becomes QEmbedLayerNormalization (its five tables uint8 with a scale and zero
point each, as it quantizes constants it reads as activations).

Each LSTM with constant W and R becomes com.microsoft.DynamicQuantizeLSTM (quantized_lstm).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

UINT8 = "--uint8-weights" in sys.argv[3:]
PER_CHANNEL = "--per-channel" in sys.argv[3:]
CONV = "--conv" in sys.argv[3:]


def quantize_weight(w, axis, per_channel=None):
    """axis: the reduced axes for per-channel ranges (None: per tensor). per_channel: whether
    to reduce only those axes (default: --per-channel)."""
    axis = axis if (PER_CHANNEL if per_channel is None else per_channel) else None
    if UINT8:
        lo = np.minimum(w.min(axis=axis), 0.0)
        hi = np.maximum(w.max(axis=axis), 0.0)
        scale = np.maximum((hi - lo) / 255.0, 1e-8).astype(np.float32)
        zero = np.clip(np.round(-lo / scale), 0, 255).astype(np.uint8)
        s_b = scale if axis is None or np.ndim(scale) == 0 else np.expand_dims(scale, axis)
        z_b = zero if axis is None or np.ndim(zero) == 0 else np.expand_dims(zero, axis)
        q = np.clip(np.round(w / s_b) + z_b, 0, 255).astype(np.uint8)
    else:
        scale = np.maximum(np.abs(w).max(axis=axis) / 127.0, 1e-8).astype(np.float32)
        zero = np.zeros(np.shape(scale), np.int8)
        s_b = scale if axis is None or np.ndim(scale) == 0 else np.expand_dims(scale, axis)
        q = np.clip(np.round(w / s_b), -127, 127).astype(np.int8)
    return q, np.asarray(scale, np.float32), np.asarray(zero)


def quantize_table(t):
    """uint8, asymmetric over the table's range (0 inside it), one scale and zero point."""
    lo, hi = min(float(t.min()), 0.0), max(float(t.max()), 0.0)
    scale = np.float32(max((hi - lo) / 255.0, 1e-8))
    zero = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
    return np.clip(np.round(t / scale) + zero, 0, 255).astype(np.uint8), np.asarray(scale), np.asarray(zero)


def quantized_embedding(node, inits, graph):
    """QEmbedLayerNormalization for an EmbedLayerNormalization whose tables are constants."""
    tables = list(node.input[2:7])
    if len(node.output) > 2 or any(t not in inits for t in tables if t) or len(tables) < 5:
        return None
    q_names, scales, zeros = [], [], []
    for t in tables:
        q, scale, zero = quantize_table(numpy_helper.to_array(inits[t]))
        graph.initializer.extend([numpy_helper.from_array(q, f"{t}_quantized"), numpy_helper.from_array(scale, f"{t}_scale"),
                                  numpy_helper.from_array(zero, f"{t}_zero_point")])
        q_names.append(f"{t}_quantized"), scales.append(f"{t}_scale"), zeros.append(f"{t}_zero_point")
    mask = node.input[7] if len(node.input) > 7 else ""
    return helper.make_node("QEmbedLayerNormalization", [node.input[0], node.input[1], *q_names, mask, *scales, *zeros],
                            list(node.output), name=(node.name or node.output[0]) + "_quant", domain="com.microsoft",
                            **{a.name: helper.get_attribute_value(a) for a in node.attribute})


def quantized_lstm(node, inits, graph):
    """DynamicQuantizeLSTM, as quantize_dynamic writes an LSTM: W [dirs, 4H, in] and R [dirs, 4H, H]
    quantized per direction (per column with --per-channel) and stored transposed, [dirs, in, 4H]
    and [dirs, H, 4H]; the other inputs and the attributes as they were."""
    names = []
    for w in node.input[1:3]:
        weights = numpy_helper.to_array(inits[w])
        q, scale, zero = quantize_weight(weights, 2 if PER_CHANNEL else (1, 2), per_channel=True)  # [dirs] at least
        if UINT8 and PER_CHANNEL:  # ONNX Runtime's kernel takes one zero point for uint8 weights
            zero[:] = zero.flat[0]
            q = np.clip(np.round(weights / np.expand_dims(scale, 2)) + zero.flat[0], 0, 255).astype(np.uint8)
        graph.initializer.extend([numpy_helper.from_array(np.ascontiguousarray(np.transpose(q, (0, 2, 1))), f"{w}_quantized"),
                                  numpy_helper.from_array(scale, f"{w}_scale"),
                                  numpy_helper.from_array(zero, f"{w}_zero_point")])
        names.append(w)
    rest = list(node.input[3:8]) + [""] * (8 - len(node.input))
    inputs = [node.input[0], f"{names[0]}_quantized", f"{names[1]}_quantized", *rest[:5],
              f"{names[0]}_scale", f"{names[0]}_zero_point", f"{names[1]}_scale", f"{names[1]}_zero_point"]
    return helper.make_node("DynamicQuantizeLSTM", inputs, list(node.output), name=(node.name or node.output[0]) + "_quant",
                            domain="com.microsoft",
                            **{a.name: helper.get_attribute_value(a) for a in node.attribute if a.name != "layout"})


def main():
    model = onnx.load(sys.argv[1])
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    for node in graph.node:  # torch.onnx writes a shared weight as Identity of the initializer
        if node.op_type == "Identity" and node.input[0] in inits:
            inits[node.output[0]] = inits[node.input[0]]
    readers = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    quantized_activation = {}
    nodes, dropped = [], set()

    def release(name):  # a float initializer no node reads any more is left out
        readers[name] -= 1
        if readers[name] == 0 and name in inits and name == inits[name].name:
            dropped.add(name)

    def quantized_input(a):  # one DynamicQuantizeLinear per activation, shared by its readers
        if a not in quantized_activation:
            quantized_activation[a] = (f"{a}_quantized", f"{a}_scale", f"{a}_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(quantized_activation[a]),
                                          name=f"{a}_QuantizeLinear"))
        return quantized_activation[a]

    for node in graph.node:
        if node.domain == "com.microsoft" and node.op_type == "EmbedLayerNormalization":
            q = quantized_embedding(node, inits, graph)
            nodes.append(q or node)
            for table in (node.input[2:7] if q else []):
                release(table)
            continue
        if (node.domain == "com.microsoft" and node.op_type == "Attention" and node.input[1] in inits and
                not any(a.name == "qkv_hidden_sizes" for a in node.attribute)):
            a_q, a_scale, a_zero = quantized_input(node.input[0])
            weights = numpy_helper.to_array(inits[node.input[1]])
            axis = 0 if PER_CHANNEL else None
            scale = np.maximum(np.abs(weights).max(axis=axis) / 63.0, 1e-8).astype(np.float32)  # reduce_range: 7 bits
            q = np.clip(np.round(weights / scale), -63, 63).astype(np.int8)
            w = node.input[1]
            release(w)
            graph.initializer.extend([numpy_helper.from_array(q, f"{w}_quantized"),
                                      numpy_helper.from_array(np.asarray(scale), f"{w}_scale"),
                                      numpy_helper.from_array(np.zeros(np.shape(scale), np.int8), f"{w}_zero_point")])
            mask = node.input[3] if len(node.input) > 3 else ""
            nodes.append(helper.make_node("QAttention", [a_q, f"{w}_quantized", node.input[2], a_scale, f"{w}_scale", mask,
                                                         a_zero, f"{w}_zero_point"], list(node.output),
                                          name=(node.name or node.output[0]) + "_quant", domain="com.microsoft",
                                          **{a.name: helper.get_attribute_value(a) for a in node.attribute}))
            continue
        if (node.op_type == "LSTM" and len(node.input) > 2 and node.input[1] in inits and node.input[2] in inits and
                len(inits[node.input[1]].dims) == 3 and len(inits[node.input[2]].dims) == 3):
            nodes.append(quantized_lstm(node, inits, graph))
            release(node.input[1])
            release(node.input[2])
            continue
        w_init = inits.get(node.input[1]) if node.op_type in ("MatMul", "Conv") and len(node.input) > 1 else None
        conv = node.op_type == "Conv"
        if (w_init is None or w_init.data_type != TensorProto.FLOAT or (conv and not CONV) or
                (not conv and len(w_init.dims) != 2)):
            nodes.append(node)
            continue
        a = node.input[0]
        base = node.name or node.output[0]
        a_q, a_scale, a_zero = quantized_input(a)
        weights = numpy_helper.to_array(w_init)
        q, scale, zero = quantize_weight(weights, tuple(range(1, weights.ndim)) if conv else 0)
        if conv and scale.ndim == 1:  # per output channel: the scales multiply [N, M, H, W]
            scale = scale.reshape(-1, *([1] * (weights.ndim - 2)))
        w = node.input[1]
        release(w)
        graph.initializer.extend([numpy_helper.from_array(q, f"{base}.{w}_quantized"),
                                  numpy_helper.from_array(scale, f"{base}.{w}_scale"),
                                  numpy_helper.from_array(zero, f"{base}.{w}_zero_point")])
        integer = f"{base}_output_quantized"
        bias = node.input[2] if conv and len(node.input) > 2 and node.input[2] else None
        scaled = f"{base}_scaled" if bias else node.output[0]
        nodes += [
            helper.make_node("ConvInteger" if conv else "MatMulInteger",
                             [a_q, f"{base}.{w}_quantized", a_zero, f"{base}.{w}_zero_point"], [integer],
                             name=f"{base}_quant", **({a.name: helper.get_attribute_value(a) for a in node.attribute}
                                                      if conv else {})),
            helper.make_node("Cast", [integer], [f"{integer}_cast_output"], name=f"{integer}_cast",
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", [a_scale, f"{base}.{w}_scale"], [f"{base}_scales_mul:0"], name=f"{base}_scales_mul"),
            helper.make_node("Mul", [f"{integer}_cast_output", f"{base}_scales_mul:0"], [scaled],
                             name=f"{base}_output_scale_mul"),
        ]
        if bias:  # a float bias along the channels
            values = numpy_helper.to_array(inits[bias]).reshape(1, -1, *([1] * (weights.ndim - 2)))
            graph.initializer.append(numpy_helper.from_array(values, f"{base}.{bias}_reshaped"))
            nodes.append(helper.make_node("Add", [scaled, f"{base}.{bias}_reshaped"], [node.output[0]],
                                          name=f"{base}_bias_add"))
    kept = [t for t in graph.initializer if t.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.node[:]
    graph.node.extend(nodes)
    if any(n.domain == "com.microsoft" for n in nodes) and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    if not any(o.domain in ("", "ai.onnx") and o.version >= 11 for o in model.opset_import):
        raise SystemExit(f"{sys.argv[1]}: DynamicQuantizeLinear needs opset 11 or later")
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"{sys.argv[2]}: {len(quantized_activation)} DynamicQuantizeLinear, "
          f"{sum(n.op_type == 'MatMulInteger' for n in nodes)} MatMulInteger, "
          f"{sum(n.op_type == 'ConvInteger' for n in nodes)} ConvInteger, "
          f"{sum(n.op_type == 'QAttention' for n in nodes)} QAttention, "
          f"{sum(n.op_type == 'QEmbedLayerNormalization' for n in nodes)} QEmbedLayerNormalization, "
          f"{sum(n.op_type == 'DynamicQuantizeLSTM' for n in nodes)} DynamicQuantizeLSTM")


if __name__ == "__main__":
    main()
