#pragma once
// A stable, diff-friendly text form of a model for golden tests and round-trip checks.
// Weights are printed as a fingerprint, not their values.
#include <string>

#include "core/graph.h"

namespace fsc {

std::string printModel(const Model& model);
std::string printGraph(const Graph& graph, int indent = 0);
// One attribute's value as the text form prints it (a subgraph by name only).
std::string attributeValueText(const Attribute& attribute);

}  // namespace fsc
