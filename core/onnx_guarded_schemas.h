#pragma once
// libonnx's schema registry with guards in front of the inference functions that index
// shapes without checking them (internal to core). ONNX's own inference runs through it
// so a malformed model ends in a skipped inference, never in a read past a shape.
#include <onnx/defs/schema.h>

namespace fsc {

// The registry to pass to onnx::shape_inference::InferShapes; lives for the process.
const onnx::ISchemaRegistry& guardedSchemaRegistry();

}  // namespace fsc
