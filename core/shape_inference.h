#pragma once
// Our own shape and type rules, for what ONNX's inference leaves unknown (ops from other
// domains, mostly). Symbolic dims stay symbolic; known types are only refined.
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

// Applied in topological order through all subgraphs. Never overrides a type that is
// already known; only fills unknown parts.
void fillUnknownTypes(Graph& graph);

// ONNX's inference and our rules run again over a graph that passes have changed (a
// Resize whose sizes have become a constant), in place and only refining; returns what
// could not be inferred, as import's warnings.
std::vector<std::string> refreshShapes(const Model& model);

// Copies what `inferred` knows that `type` does not.
void mergeType(ValueType& type, const ValueType& inferred);

// ONNX's inference names a dim it cannot size "unk__N". Such a name only says which
// unknown dims are the same; a size or a model's own symbol found later replaces it.
bool isInventedSymbol(const Dim& d);
// How much a dim tells: 0 unknown, 1 a name ONNX invented, 2 a size or the model's symbol.
int dimRank(const Dim& d);

}  // namespace fsc
