#pragma once
// Renderings of a graph-break analysis: text for the CLI's --explain, JSON for its --json
// and trace.json.
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/graph_breaks.h"

namespace fsc {

std::string breaksSummaryLine(const GraphBreakReport& report);
std::string explainBreaks(const GraphBreakReport& report, const Graph& graph, size_t maxListed);
nlohmann::json breaksJson(const GraphBreakReport& report, const Graph& graph);

}  // namespace fsc
