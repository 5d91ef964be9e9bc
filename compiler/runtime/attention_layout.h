#pragma once
// How ai.fusescope.Attention's operands are read (docs/fused_ops.md): Q, K^T and V seen
// through their permutations, batch dims broadcast, the mask broadcast to the scores and
// the output stored through out_perm. Every backend's kernel reads the same layout.
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace fsc {

// A tensor seen through a permutation: dims[i] = stored dims[perm[i]], with that dim's stride.
struct StridedView {
    std::vector<int64_t> dims, strides;
};

struct AttentionLayout {
    enum Operand { Q, KT, V, Mask, Y };
    StridedView view[5];            // logical [batch..., rows, cols] views; Mask's dims unused
    std::vector<int64_t> batchDims;  // broadcast batch dims
    std::vector<int64_t> batchStrides[5];  // per operand, per batch dim (0 where it broadcasts)
    int64_t batchCount = 1;
    int64_t lq = 0, d = 0, lk = 0, dv = 0;
    std::vector<int64_t> outputDims;  // as stored, after out_perm

    // Element offsets of batch index b into each operand.
    void offsets(int64_t b, int64_t* out) const;
};

struct AttentionPerms {
    std::vector<int64_t> q, k, v, out;  // empty: identity
};

// Errors name what does not fit (InvalidModel); the caller adds the node.
Result<AttentionLayout> attentionLayout(const std::vector<int64_t>& q, const std::vector<int64_t>& kt,
                                        const std::vector<int64_t>& v, const std::vector<int64_t>* mask,
                                        const AttentionPerms& perms);

}  // namespace fsc
