#pragma once
// Matrices some kernels read transposed: a Gemm's constant B given as [n, k], a depthwise
// convolution's taps and a pointwise one's weights by input channel. Kept once per constant.
#include <cstdint>
#include <mutex>
#include <vector>

namespace fsc::cpu {

// out [cols, rows] = in [rows, cols], in tiles that keep both sides in L1.
void transposeMatrix(const float* in, int64_t rows, int64_t cols, float* out);

// A constant [rows, cols] as [cols, rows], made on first use and kept while the constant
// is the same (a plan may run on several threads, so under the lock).
class TransposedConstant {
public:
    const float* of(const float* constant, int64_t rows, int64_t cols);

private:
    std::mutex m_mutex;
    std::vector<float> m_transposed;
    const float* m_from = nullptr;
};

}  // namespace fsc::cpu
