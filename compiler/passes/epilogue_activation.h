#pragma once
// The activations a Conv, Gemm or MatMul can apply in its epilogue, read off the node that
// computes one: shared by activation-fusion and residual-fusion.
#include <optional>
#include <string>
#include <vector>

#include "compiler/rewriter.h"

namespace fsc::passes {

struct ActivationSpec {
    std::string name;  // as FusedConv's `activation` attribute
    std::vector<float> params;
};

// The activation node `n` computes, or nothing; `why` says why an activation node cannot be
// an epilogue (Clip with bounds computed at run time).
std::optional<ActivationSpec> epilogueActivationOf(const Rewriter& rw, const Node& n, std::string& why);

}  // namespace fsc::passes
