#pragma once
// Op categories for colouring nodes (and the legend): what kind of work a node does.
#include <string>

namespace fsc {

enum class OpCategory { Convolution, MatMul, Attention, Normalization, Activation, Elementwise, Reduction, Shape, Memory, ControlFlow, Fused, Other };

OpCategory opCategory(const std::string& domain, const std::string& opType);
const char* opCategoryName(OpCategory category);
// A fill colour as 0xRRGGBB, readable under dark text in the light palette.
unsigned opCategoryColor(OpCategory category);

}  // namespace fsc
