#pragma once
// Provenance across the graphs of one compile: every node keeps the imported nodes it was
// made from (Node::origins; empty means itself), so a node of one step can be matched with
// the nodes of another step made from any of the same imported nodes.
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

// The nodes of `to` that share an imported origin with `node` of `from` (both ways: a fused
// node links to the nodes it was made from, and those back to it). Empty for an invalid node.
std::vector<NodeId> linkedNodes(const Graph& from, NodeId node, const Graph& to);

// The names an overlay keyed by name looks `node` up by: its own and those of the imported
// nodes it was made from, so a figure keyed by ONNX node or by compiled group reaches
// every step of the compile.
std::vector<std::string> ownAndOriginNames(const Graph& graph, NodeId node);

}  // namespace fsc
