#pragma once
// A graph as a standalone SVG for reports: the layered layout of every node (constants
// hidden), boxes filled by their share of the run time on the overlay's heat scale, a
// tooltip per node (name, op, time) and a legend. No Qt: the CLI writes it.
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

// `shareByNode` by node index (empty: no heat); `msByNode` likewise, for the tooltips.
std::string graphHeatSvg(const Graph& graph, const std::vector<double>& shareByNode,
                         const std::vector<double>& msByNode);

// Only `nodes` of the graph and the edges between them, in their op categories' colours (the
// walkthrough's picture of one fused group before fusion).
std::string graphPartSvg(const Graph& graph, const std::vector<NodeId>& nodes);

}  // namespace fsc
