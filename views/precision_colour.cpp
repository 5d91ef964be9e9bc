#include "views/precision_colour.h"

#include <set>

namespace fsc {

NodePrecision nodePrecision(const Graph& graph, const Node& node) {
    static const std::set<std::string> integerOps{"QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
                                                  "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"};
    if (node.domain.empty() && integerOps.count(node.opType)) return NodePrecision::Int8;
    for (ValueId out : node.outputs) {
        if (!out.valid()) continue;
        switch (graph.value(out).type.elemType) {
            case DType::Float16: return NodePrecision::Float16;
            case DType::BFloat16: return NodePrecision::BFloat16;
            case DType::Float32: return NodePrecision::Float32;
            case DType::Int8:
            case DType::UInt8: return NodePrecision::Int8;
            default: break;
        }
    }
    return NodePrecision::Other;
}

const char* nodePrecisionName(NodePrecision precision) {
    switch (precision) {
        case NodePrecision::Int8: return "int8";
        case NodePrecision::Float16: return "float16";
        case NodePrecision::BFloat16: return "bfloat16";
        case NodePrecision::Float32: return "float32";
        case NodePrecision::Other: return "other";
    }
    return "other";
}

unsigned nodePrecisionColor(NodePrecision precision) {
    switch (precision) {
        case NodePrecision::Int8: return 0xf4a259;      // orange
        case NodePrecision::Float16: return 0x8cd17d;   // green
        case NodePrecision::BFloat16: return 0x76c7c0;  // teal
        case NodePrecision::Float32: return 0xa8c4e5;   // blue
        case NodePrecision::Other: return 0xd0d0d0;     // grey
    }
    return 0xd0d0d0;
}

}  // namespace fsc
