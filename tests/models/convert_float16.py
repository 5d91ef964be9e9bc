#!/usr/bin/env python3
"""Rewrite a float32 model in float16 as onnxconverter-common's convert_float_to_float16 does
with keep_io_types=True, the way half-precision exports for GPUs arrive (Hugging Face and
diffusion exports, Olive): every float32 initializer, Constant and ConstantOfShape value and
intermediate value becomes float16, Casts to float32 become Casts to float16, and the graph's
float32 inputs and outputs stay float32 behind a Cast each. The inputs that ONNX requires in
float32 (Resize's scales) stay so. onnxconverter-common itself is not on these machines.

usage: convert_float16.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT_ONLY_INPUTS = {"Resize": {2}, "Upsample": {1}}  # scales


def main():
    model = onnx.load(sys.argv[1])
    graph = model.graph
    keep = {n.input[i] for n in graph.node for i in FLOAT_ONLY_INPUTS.get(n.op_type, ()) if i < len(n.input)}
    for i, t in enumerate(graph.initializer):
        if t.data_type == TensorProto.FLOAT and t.name not in keep:
            graph.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for node in graph.node:
        for a in node.attribute:
            value = node.op_type in ("Constant", "ConstantOfShape") and a.name == "value"
            if value and a.t.data_type == TensorProto.FLOAT and node.output[0] not in keep:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT and node.output[0] not in keep:
                a.i = TensorProto.FLOAT16
    for v in graph.value_info:
        if v.type.tensor_type.elem_type == TensorProto.FLOAT and v.name not in keep:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    renamed = {}
    front, back = [], []
    for v in graph.input:
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            renamed[v.name] = v.name + "_float16"
            front.append(helper.make_node("Cast", [v.name], [renamed[v.name]], name=v.name + "/Cast_to_float16",
                                          to=TensorProto.FLOAT16))
    for node in graph.node:
        for k, name in enumerate(node.input):
            node.input[k] = renamed.get(name, name)
    for v in graph.output:
        if v.type.tensor_type.elem_type != TensorProto.FLOAT:
            continue
        half = v.name + "_float16"
        for node in graph.node:
            for k, name in enumerate(node.output):
                if name == v.name:
                    node.output[k] = half
            for k, name in enumerate(node.input):
                if name == v.name:
                    node.input[k] = half
        back.append(helper.make_node("Cast", [half], [v.name], name=v.name + "/Cast_to_float32", to=TensorProto.FLOAT))
    nodes = front + list(graph.node) + back
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
