#pragma once
// Renderings of a graph-break analysis for the CLI: text for --explain and JSON for --json
// and trace.json.
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/graph_breaks.h"

namespace fsc::cli {

std::string breaksSummaryLine(const GraphBreakReport& report);
std::string explainBreaks(const GraphBreakReport& report, const Graph& graph, size_t maxListed);
nlohmann::json breaksJson(const GraphBreakReport& report, const Graph& graph);

}  // namespace fsc::cli
