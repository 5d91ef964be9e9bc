#pragma once
// The precision a node computes in, for colouring the graph after the precision passes:
// integer ops (and the Quantize/Dequantize around them) are INT8, otherwise the element
// type of the node's first floating-point output.
#include <string>

#include "core/graph.h"

namespace fsc {

enum class NodePrecision { Int8, Float16, BFloat16, Float32, Other };

NodePrecision nodePrecision(const Graph& graph, const Node& node);
const char* nodePrecisionName(NodePrecision precision);
// A fill colour as 0xRRGGBB, readable under dark text.
unsigned nodePrecisionColor(NodePrecision precision);

}  // namespace fsc
