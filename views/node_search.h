#pragma once
// Search of the canvas (Ctrl+F): nodes whose name, op type or any input/output tensor name
// contains the query, ignoring case, in graph order. Hidden constant-like nodes are left out.
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

std::vector<NodeId> findNodes(const Graph& graph, const std::string& query);

}  // namespace fsc
