#pragma once
// The order in which ONNX Runtime's com.microsoft.FusedMatMul reads an operand's axes: axis 0
// moved behind the other batch axes where transBatch is set (permutation [1, ..., rank - 2,
// 0, rank - 1], as ONNX Runtime 1.31 computes it), then the last two swapped where trans is.
// One definition for its kernel, its lowering and its shape rule. Out axis d is in axis
// result[d].
#include <cstdint>
#include <utility>
#include <vector>

namespace fsc {

inline std::vector<int64_t> fusedMatMulAxes(int64_t rank, bool trans, bool transBatch) {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    if (transBatch && rank >= 3) {
        for (int64_t d = 0; d + 2 < rank; ++d) axes[size_t(d)] = d + 1;
        axes[size_t(rank - 2)] = 0;
    }
    if (trans && rank >= 2) std::swap(axes[size_t(rank - 1)], axes[size_t(rank - 2)]);
    return axes;
}

}  // namespace fsc
