#pragma once
// The smallest size an input's open dim can take for the model to run: follows that axis
// from the input through the ops that keep it (element-wise ops, Unsqueeze, Transpose, Pad,
// normalizations, If bodies that read the input) to the convolutions and pools that slide
// over it, and walks each window back (kernel, stride, dilation, pads) from the next
// window's need. An audio model's Conv front end over raw samples needs hundreds of
// samples where a generated input would otherwise have 1.
#include <cstdint>

#include "core/graph.h"

namespace fsc {

// 1 when nothing found constrains the axis.
int64_t smallestValidSize(const Graph& graph, ValueId input, size_t axis);

}  // namespace fsc
