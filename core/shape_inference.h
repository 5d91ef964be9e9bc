#pragma once
// Shape and type inference during import: ONNX's own inference on the protobuf first,
// then our rules for what it leaves unknown (ops from other domains, mostly). Symbolic
// dims stay symbolic.
#include <onnx/onnx_pb.h>

#include <utility>
#include <vector>

#include "core/graph.h"

namespace fsc {

// Each converted graph next to the message it came from, so inferred value_info can be
// copied back by name.
using ProtoGraphMap = std::vector<std::pair<const onnx::GraphProto*, Graph*>>;

// Runs ONNX's inference on `proto` (which may be missing the large tensors already moved
// into `model`) and merges what it learns, then applies fillUnknownTypes.
void inferShapes(onnx::ModelProto& proto, const ProtoGraphMap& graphs, Model& model);

// Our own rules, applied in topological order through all subgraphs. Never overrides a
// type that is already known; only refines unknown parts.
void fillUnknownTypes(Graph& graph);

// Copies what `inferred` knows that `type` does not.
void mergeType(ValueType& type, const ValueType& inferred);

}  // namespace fsc
