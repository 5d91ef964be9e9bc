#pragma once
// Constant matrices kept in another layout for the kernel that reads them: a Gemm's or
// MatMul's constant B as sgemm reads it fastest, a depthwise convolution's taps and a
// pointwise one's weights by input channel. Made on first use, kept once per constant.
#include <cstdint>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "compiler/runtime/rt_tensor.h"

namespace fsc::cpu {

// out [cols, rows] = in [rows, cols], in tiles that keep both sides in L1; out's rows are
// outStride apart (rows when 0).
void transposeMatrix(const float* in, int64_t rows, int64_t cols, float* out, int64_t outStride = 0);

// The row stride sgemm reads a [k, cols] B fastest at: cols, or 16 floats more when cols
// floats are a multiple of 4 KiB. Rows 4 KiB apart all fall in one L1 set, so sgemm's copy
// of a column panel misses on every row (ViT-B/16's 197x768x3072 MLP product, 2 threads:
// 2.7 -> 1.9 ms with the rows 64 bytes further apart).
int64_t unaliasedStride(int64_t cols);

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

// B of a product with a constant right-hand side, as sgemm reads it.
struct GemmB {
    const float* data;
    int64_t ld;       // elements between rows as stored
    bool transposed;  // stored [n, k]
};

struct KeptGemmB;
using GemmKey = std::tuple<const void*, int64_t, int64_t, bool>;  // B's address, k, n, transposed

// A constant B, given [k, n] (or [n, k], transposed), kept untransposed with rows
// unaliasedStride(n) apart when that differs from how it is given: sgemm is slower on a
// transposed B too (ViT-B/16's 197x768x768 attention output projection, 2 threads: 0.53 ->
// 0.48 ms). Kernels reading the same constant share one copy (a model may tie its layers'
// weights), and all copies together stay under a budget, so a model of many
// gigabytes does not double its memory (1 GiB by default): past it, B is used as given.
class GemmConstant {
public:
    static constexpr int64_t kDefaultCopyBudgetBytes = int64_t(1) << 30;

    GemmB of(const RtTensor& b, int64_t k, int64_t n, bool transposed);

    // Bytes held by the copies in this process (for tests and reports).
    static int64_t bytesKept();
    // Copies asked for after this count against the new budget (tests shrink it).
    static void setCopyBudgetBytes(int64_t bytes);

private:
    std::mutex m_mutex;
    std::shared_ptr<const KeptGemmB> m_copy;  // null: B as given
    GemmKey m_key;
    bool m_keyed = false;  // m_key names the constant m_copy was asked for
};

}  // namespace fsc::cpu
