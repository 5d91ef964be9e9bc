#pragma once
// Topological order of a graph's nodes, stable with respect to their current order.
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

// Sorts `graph`'s order() so every node follows the producers of its inputs and of the
// outer-scope values its subgraphs read. A cycle is an error naming the nodes on it.
Status topologicallySort(Graph& graph);

}  // namespace fsc
