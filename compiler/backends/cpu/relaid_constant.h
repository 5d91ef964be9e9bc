#pragma once
// Constant matrices kept in another layout for the kernel that reads them: a Gemm's or
// MatMul's constant B as sgemm reads it fastest, a depthwise convolution's taps and a
// pointwise one's weights by input channel. Made on first use, one copy per constant and
// layout shared by every kernel reading it, all copies under one budget.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <tuple>

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

// The copies together stay under a budget, so a model of many gigabytes does not double
// its memory (1 GiB by default): past it a kernel reads the constant as given, or re-lays
// it per call where it needs the other layout.
constexpr int64_t kDefaultCopyBudgetBytes = int64_t(1) << 30;
// Bytes held by the copies in this process (for tests and reports).
int64_t relaidBytesKept();
// Copies asked for after this count against the new budget (tests shrink it).
void setRelaidCopyBudgetBytes(int64_t bytes);

struct RelaidCopy;
using RelaidKey = std::tuple<const void*, int64_t, int64_t, bool, int64_t>;  // address, k, n, transposed, ld

// One kernel's hold on the shared copy of a constant, asked for once per constant (also
// when the budget said no). A plan may run on several threads, so under a lock.
class RelaidConstant {
public:
    // The constant [k, n] (transposed: given [n, k]) as [k, n] with rows ld apart; null
    // when it has no owner (its address could be reused while the copy lives) or the copy
    // does not fit the budget.
    const float* of(const RtTensor& constant, int64_t k, int64_t n, bool transposed, int64_t ld);
    // A copy `fill` computes from the constant (k rows of key's ld floats, zeroed first):
    // block-quantized weights as floats. The key's `transposed` names the layout.
    const float* made(const RtTensor& constant, const RelaidKey& key, const std::function<void(float*)>& fill);
    // Lets go of the copy (a kernel reading the constant as given).
    void reset();

private:
    std::mutex m_mutex;
    std::shared_ptr<const RelaidCopy> m_copy;
    RelaidKey m_key;
    bool m_keyed = false;  // m_key names the constant m_copy was asked for
};

// B of a product with a constant right-hand side, as sgemm reads it.
struct GemmB {
    const float* data;
    int64_t ld;       // elements between rows as stored
    bool transposed;  // stored [n, k]
};

// A constant B, given [k, n] (or [n, k], transposed), kept untransposed with rows
// unaliasedStride(n) apart when that differs from how it is given: sgemm is slower on a
// transposed B too (ViT-B/16's 197x768x768 attention output projection, 2 threads: 0.53 ->
// 0.48 ms). Kernels reading the same constant share one copy (a model may tie its layers'
// weights).
class GemmConstant {
public:
    GemmB of(const RtTensor& b, int64_t k, int64_t n, bool transposed);

private:
    RelaidConstant m_copy;
};

}  // namespace fsc::cpu
