#pragma once
// How much work a node does: floating-point operations and bytes moved (inputs read once,
// outputs written once), from the shapes in the graph with symbolic dims bound. The
// profiler divides measured times by these for achieved FLOP/s and bytes/s and places each
// node on a roofline. Estimates, stated as such: a fused node counts the work of what it
// replaced; ops the model does not know count only their bytes.
#include "compiler/runtime/memory_plan.h"
#include "core/graph.h"

namespace fsc {

struct NodeCost {
    double flops = 0;
    double bytes = 0;
    bool shapesKnown = true;  // false when a shape the estimate needs was unknown (then 0s)
};

NodeCost estimateNodeCost(const Graph& graph, const Node& node, const DimBindings& bindings = {});

}  // namespace fsc
