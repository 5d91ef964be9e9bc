#pragma once
// Import-time inference (internal to core): ONNX's own shape inference on the protobuf,
// merged back into the IR, then our rules from shape_inference.h.
#include <onnx/onnx_pb.h>

#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/shape_inference.h"

namespace fsc {

// Each converted graph next to the message it came from, so inferred value_info can be
// copied back by name.
using ProtoGraphMap = std::vector<std::pair<onnx::GraphProto*, Graph*>>;

// Runs ONNX's inference on `proto` (which may be missing the large tensors already moved
// into `model`) and merges what it learns, then applies fillUnknownTypes.
// `root` is the converted main graph; what could not be inferred goes to `warnings`.
void inferShapes(onnx::ModelProto& proto, const ProtoGraphMap& graphs, Graph& root, std::vector<std::string>& warnings);

}  // namespace fsc
