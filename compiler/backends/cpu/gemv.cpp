#include "compiler/backends/cpu/gemv.h"

#include <omp.h>

#include <algorithm>

#include "compiler/backends/cpu/vec16.h"

namespace fsc::cpu {
namespace {

using vec16::kLanes;
using vec16::load;
using vec16::store;
using vec16::Vec16;
using vec16::Vec8;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// Columns [j0, j0 + V lanes) of y: V accumulators across every row of B, so each row's slice
// is read once and y is written once.
template <typename Vec, int V>
[[gnu::always_inline]] inline void columnBlock(int64_t k, float alpha, const float* x, int64_t incx, const float* b,
                                               int64_t ldb, float beta, float* y, int64_t j0) {
    constexpr int L = kLanes<Vec>;
    Vec acc[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[v] = Vec{};
    for (int64_t p = 0; p < k; ++p) {
        const Vec xp = Vec{} + x[p * incx];
        const float* row = b + p * ldb + j0;
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[v] += xp * load<Vec>(row + L * v);
    }
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
        Vec out = acc[v] * alpha;
        if (beta != 0.f) out += load<Vec>(y + j0 + L * v) * beta;
        store(y + j0 + L * v, out);
    }
}

// Columns [j0, j1): wide blocks, then one vector at a time, then the last few one by one.
template <typename Vec, int Wide>
[[gnu::always_inline]] inline void columns(int64_t k, float alpha, const float* x, int64_t incx, const float* b,
                                           int64_t ldb, float beta, float* y, int64_t j0, int64_t j1) {
    constexpr int64_t L = kLanes<Vec>;
    int64_t j = j0;
    for (; j + L * Wide <= j1; j += L * Wide) columnBlock<Vec, Wide>(k, alpha, x, incx, b, ldb, beta, y, j);
    for (; j + L <= j1; j += L) columnBlock<Vec, 1>(k, alpha, x, incx, b, ldb, beta, y, j);
    for (; j < j1; ++j) {
        float sum = 0.f;
        for (int64_t p = 0; p < k; ++p) sum += x[p * incx] * b[p * ldb + j];
        y[j] = alpha * sum + (beta != 0.f ? beta * y[j] : 0.f);
    }
}

using ColumnsFn = void (*)(int64_t, float, const float*, int64_t, const float*, int64_t, float, float*, int64_t,
                           int64_t);
[[gnu::target("avx512f")]] void columnsAvx512(int64_t k, float alpha, const float* x, int64_t incx, const float* b,
                                              int64_t ldb, float beta, float* y, int64_t j0, int64_t j1) {
    columns<Vec16, 8>(k, alpha, x, incx, b, ldb, beta, y, j0, j1);
}
[[gnu::target("avx2,fma")]] void columnsAvx2(int64_t k, float alpha, const float* x, int64_t incx, const float* b,
                                             int64_t ldb, float beta, float* y, int64_t j0, int64_t j1) {
    columns<Vec8, 8>(k, alpha, x, incx, b, ldb, beta, y, j0, j1);
}
void columnsBaseline(int64_t k, float alpha, const float* x, int64_t incx, const float* b, int64_t ldb, float beta,
                     float* y, int64_t j0, int64_t j1) {
    columns<Vec16, 2>(k, alpha, x, incx, b, ldb, beta, y, j0, j1);
}

#pragma GCC diagnostic pop

ColumnsFn columnsForThisCpu() {
    static const ColumnsFn chosen = vec16::forThisCpu<ColumnsFn>(columnsAvx512, columnsAvx2, columnsBaseline);
    return chosen;
}

}  // namespace

void gemvRowMajor(int64_t k, int64_t n, float alpha, const float* x, int64_t incx, const float* b, int64_t ldb,
                  float beta, float* y) {
    const ColumnsFn run = columnsForThisCpu();
    // Blocks of 128 columns (a wide AVX-512 block) per piece; one thread below 256k
    // multiply-adds, where waking a second costs more than it saves.
    constexpr int64_t kBlock = 128;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    const int threads = int(std::min<int64_t>({omp_get_max_threads(), blocks, std::max<int64_t>(1, k * n / 262144)}));
    if (threads <= 1 || omp_in_parallel()) {
        run(k, alpha, x, incx, b, ldb, beta, y, 0, n);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t block = 0; block < blocks; ++block)
        run(k, alpha, x, incx, b, ldb, beta, y, block * kBlock, std::min(n, (block + 1) * kBlock));
}

}  // namespace fsc::cpu
