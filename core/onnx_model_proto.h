#pragma once
// Internal to core: the IR written as a ModelProto, for export and for ONNX's shape
// inference on a graph that passes have changed.
#include <onnx/onnx_pb.h>

#include <functional>

#include "core/graph.h"

namespace fsc {

// Called for each dense initializer; returns true when it wrote the tensor itself.
using TensorWriter = std::function<bool(const Tensor&, onnx::TensorProto*)>;

void modelToProto(const Model& m, onnx::ModelProto* p, const TensorWriter& writeTensor);

}  // namespace fsc
