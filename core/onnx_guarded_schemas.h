#pragma once
// libonnx's schema registry with guards in front of the inference functions that index
// shapes without checking them (internal to core). ONNX's own inference runs through it
// so a malformed model ends in a skipped inference, never in a read past a shape.
#include <onnx/defs/schema.h>

#include <memory>
#include <set>
#include <string>

namespace fsc {

// The registry to pass to onnx::shape_inference::InferShapes. Default-domain ops named in
// `withheld` have no schema in it, so ONNX leaves their nodes to our rules: a model of a
// newer opset than this libonnx knows uses forms of them its newest schema does not
// describe (ReduceMean's axes became an input at opset 18).
std::unique_ptr<onnx::ISchemaRegistry> guardedSchemaRegistry(std::set<std::string> withheld = {});

// The newest opset of the default domain this libonnx knows.
int newestKnownOpset();

}  // namespace fsc
