#pragma once
// Output shapes of the ops that slide a window over the spatial axes: Conv, MaxPool,
// AveragePool and LpPool. ONNX's own rules cover them too; ours let one pass of our rules carry a
// shape through a chain of them, where each Pad or Slice with computed bounds (a causal
// Conv1d's left pad) would otherwise cost one more ONNX round.
#include <optional>

#include "core/graph.h"

namespace fsc {

// Conv(X, W) or a pool of X: [batch, channels, spatial...], from the attributes and, for
// Conv, the weight's shape. A spatial axis whose input size is not a number stays unknown,
// as does every spatial axis of a pool in ceil_mode (ONNX's rule decides those).
std::optional<Shape> slidingWindowShape(const Node& node, const Shape& input, const Shape* weight);

}  // namespace fsc
