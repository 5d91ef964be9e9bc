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

}  // namespace fsc
