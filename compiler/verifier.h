#pragma once
// Structural invariants of an IR graph. The importer builds graphs that satisfy them; the
// pass manager (and tests) check them after every pass.
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

// Checks, for the graph and every subgraph: ids in range, each value produced at most once
// and by the node its `producer` names, node order topological, graph outputs defined,
// OuterScope values defined by an enclosing graph.
Status verifyGraph(const Graph& graph);
Status verifyModel(const Model& model);

}  // namespace fsc
