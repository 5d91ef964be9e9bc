#pragma once
// A node attribute, mirroring ONNX's AttributeProto. Graph-valued attributes own their
// subgraphs (the bodies of If, Loop and Scan).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/shape.h"
#include "core/tensor.h"

namespace fsc {

class Graph;

struct Attribute {
    // Numbered as ONNX's AttributeProto.AttributeType.
    enum class Type : int32_t {
        Undefined = 0,
        Float = 1,
        Int = 2,
        String = 3,
        Tensor = 4,
        Graph = 5,
        SparseTensor = 11,
        TypeProto = 13,
        Floats = 6,
        Ints = 7,
        Strings = 8,
        Tensors = 9,
        Graphs = 10,
        SparseTensors = 12,
        TypeProtos = 14,
    };

    std::string name;
    Type type = Type::Undefined;
    std::string refAttrName;  // inside a function body: takes the caller's attribute
    std::string docString;

    float f = 0.0f;
    int64_t i = 0;
    std::string s;
    Tensor t;
    std::shared_ptr<Graph> g;
    SparseTensor sparse;
    ValueType typeProto;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    std::vector<Tensor> tensors;
    std::vector<std::shared_ptr<Graph>> graphs;
    std::vector<SparseTensor> sparseTensors;
    std::vector<ValueType> typeProtos;
};

const char* attributeTypeName(Attribute::Type type);

}  // namespace fsc
