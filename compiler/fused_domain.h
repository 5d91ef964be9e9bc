#pragma once
// The ONNX domain of the ops Fusescope's fusion passes create (semantics: docs/fused_ops.md).
#include <string>

namespace fsc {

inline constexpr const char* kFusescopeDomain = "ai.fusescope";

// One line on what a fused op computes, for the GUI's properties ("" for an unknown op).
std::string fusedOpSummary(const std::string& opType);

}  // namespace fsc
