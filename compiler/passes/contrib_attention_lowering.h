#pragma once
// com.microsoft.Attention, as lower-contrib-ops writes it: a product per part of the packed
// Q, K and V weight (each by its slice of the weight and bias, so the bias joins the product's
// epilogue), the heads split by Reshape, our ai.fusescope.Attention reading them through its
// permutations, and the additive mask ONNX Runtime builds from mask_index, written as ops.
#include <map>
#include <string>

#include "compiler/rewriter.h"

namespace fsc::passes {

// Why the node cannot be lowered, or empty. `opset` is the model's default-domain opset.
std::string contribAttentionBlocker(const Rewriter& rw, const Node& n, int64_t opset);

// The additive masks one run of the pass built, by what they were built from: every layer of
// an encoder reads one mask_index, and its mask is built once (the layers' inputs differ, so
// common-subexpression elimination could not merge the copies). The pass visits nodes in
// order, so a mask built for an earlier layer precedes every later one.
struct AttentionMaskCache {
    struct Built {
        ValueId mask;
        std::vector<Dim> dims;
    };
    std::map<std::string, Built> byKey;
};

// Replaces the node (which has no blocker); returns what it did, for the change record.
std::string lowerContribAttention(Rewriter& rw, NodeId id, int64_t opset, AttentionMaskCache& masks);

}  // namespace fsc::passes
