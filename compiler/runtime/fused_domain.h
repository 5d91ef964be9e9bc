#pragma once
// The ONNX domain of the ops Fusescope's fusion passes create (semantics: docs/fused_ops.md).
#include <string>

namespace fsc {

inline constexpr const char* kFusescopeDomain = "ai.fusescope";

// The collectives the parallel partitioners insert (AllReduce, AllGather, Send, Recv):
// communication steps between devices, run by the communication library on the device.
bool isCollective(const std::string& domain, const std::string& opType);

// One line on what a fused op computes, for the GUI's properties ("" for an unknown op).
std::string fusedOpSummary(const std::string& opType);

}  // namespace fsc
