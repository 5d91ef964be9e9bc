#pragma once
// The ONNX domain of the ops Fusescope's fusion passes create (semantics: docs/fused_ops.md).
namespace fsc {
inline constexpr const char* kFusescopeDomain = "ai.fusescope";
}  // namespace fsc
