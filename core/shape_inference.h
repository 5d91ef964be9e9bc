#pragma once
// Our own shape and type rules, for what ONNX's inference leaves unknown (ops from other
// domains, mostly). Symbolic dims stay symbolic; known types are only refined.
#include "core/graph.h"

namespace fsc {

// Applied in topological order through all subgraphs. Never overrides a type that is
// already known; only fills unknown parts.
void fillUnknownTypes(Graph& graph);

// Copies what `inferred` knows that `type` does not.
void mergeType(ValueType& type, const ValueType& inferred);

}  // namespace fsc
