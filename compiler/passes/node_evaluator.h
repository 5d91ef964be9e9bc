#pragma once
// Runs one node on constant inputs with the CPU kernels: constant folding's engine, so a
// folded value is exactly what the runtime would have computed.
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace fsc::passes {

// Outputs in the node's output order (an omitted output gives an empty tensor).
Result<std::vector<Tensor>> evaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                                         const std::vector<std::pair<std::string, int64_t>>& opsets);

}  // namespace fsc::passes
