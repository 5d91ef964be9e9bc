#include "compiler/backends/cpu/gemv.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "compiler/backends/cpu/vec16.h"

namespace fsc::cpu {
namespace {

using vec16::kLanes;
using vec16::load;
using vec16::store;
using vec16::Vec16;
using vec16::Vec8;

// Columns per pass over a stretch of rows: the sums (16 KiB) stay in L1 while four rows at a
// time stream past them. A row of 4,096 (AlexNet's and VGG's classifiers) is read whole: in
// two chunks of 2,048, each row was read in two 8 KiB pieces a pass apart, and the
// prefetchers started again at every piece (AlexNet's 9,216 x 4,096 layer: 9.3 -> 7.0 ms).
constexpr int64_t kColumnChunk = 4096;
// Rows are fetched into L2 this many rows ahead. A classifier's weights are read once a run
// and come from memory or a far cache, which the hardware prefetchers reach late on four
// streams a page long: in a whole run at one thread, MnasNet's 1,280 x 1,000 Linear 357 ->
// 210 us, RegNetX's 672 x 1,000 185 -> 124, AlexNet 23.9 -> 22.3 ms. Weights already in L3
// (the Linear alone, run after run) lose 10%: 70 -> 77 us. Into L1 instead, the lines
// ahead evicted the sums and rows in use (hot: 70 -> 97 us).
constexpr int64_t kPrefetchRows = 16;
constexpr int64_t kFloatsPerLine = 16;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// sum[j0, j1) += x[p] B[p][j0, j1) over rows [p0, p1), four rows at a time: B is read in
// its own order, rows after rows, which the prefetchers follow (blocks of columns down all
// the rows read 512 bytes of each 4 KiB row and stalled on the next).
template <typename Vec>
[[gnu::always_inline]] inline void addRowsOf(int64_t p0, int64_t p1, int64_t j0, int64_t j1,
                                             const float* x, int64_t incx, const float* b,
                                             int64_t ldb, float* sum) {
    constexpr int64_t L = kLanes<Vec>;
    int64_t p = p0;
    for (; p + 4 <= p1; p += 4) {
        const float x0 = x[p * incx], x1 = x[(p + 1) * incx], x2 = x[(p + 2) * incx],
                    x3 = x[(p + 3) * incx];
        const float *r0 = b + p * ldb, *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
        const float* ahead = r0 + kPrefetchRows * ldb;
        const bool prefetch = p + kPrefetchRows + 4 <= p1;
        int64_t j = j0;
        for (; j + L <= j1; j += L) {
            if (prefetch && j % kFloatsPerLine == 0) {  // once a line: j0 is a multiple of 16
                __builtin_prefetch(ahead + j, 0, 1);
                __builtin_prefetch(ahead + ldb + j, 0, 1);
                __builtin_prefetch(ahead + 2 * ldb + j, 0, 1);
                __builtin_prefetch(ahead + 3 * ldb + j, 0, 1);
            }
            store(sum + j, load<Vec>(sum + j) + x0 * load<Vec>(r0 + j) + x1 * load<Vec>(r1 + j) +
                               x2 * load<Vec>(r2 + j) + x3 * load<Vec>(r3 + j));
        }
        for (; j < j1; ++j) sum[j] += x0 * r0[j] + x1 * r1[j] + x2 * r2[j] + x3 * r3[j];
    }
    for (; p < p1; ++p) {
        const float xp = x[p * incx];
        const float* row = b + p * ldb;
        int64_t j = j0;
        for (; j + L <= j1; j += L) store(sum + j, load<Vec>(sum + j) + xp * load<Vec>(row + j));
        for (; j < j1; ++j) sum[j] += xp * row[j];
    }
}

using AddRowsFn = void (*)(int64_t, int64_t, int64_t, int64_t, const float*, int64_t, const float*,
                           int64_t, float*);
[[gnu::target("avx512f")]] void addRowsAvx512(int64_t p0, int64_t p1, int64_t j0, int64_t j1,
                                              const float* x, int64_t incx, const float* b,
                                              int64_t ldb, float* sum) {
    addRowsOf<Vec16>(p0, p1, j0, j1, x, incx, b, ldb, sum);
}
[[gnu::target("avx2,fma")]] void addRowsAvx2(int64_t p0, int64_t p1, int64_t j0, int64_t j1,
                                             const float* x, int64_t incx, const float* b,
                                             int64_t ldb, float* sum) {
    addRowsOf<Vec8>(p0, p1, j0, j1, x, incx, b, ldb, sum);
}
void addRowsBaseline(int64_t p0, int64_t p1, int64_t j0, int64_t j1, const float* x, int64_t incx,
                     const float* b, int64_t ldb, float* sum) {
    addRowsOf<Vec16>(p0, p1, j0, j1, x, incx, b, ldb, sum);
}

// y[i] = A[i, :] . x over rows [r0, r1), four rows at a time: each row streamed once in its
// own order, x from L1, four sums in registers, no partial sums to add up afterwards.
// The lanes' sum, halves added in registers rather than lane by lane. Always inlined: a
// vector must not cross a call into code built for another target (an unoptimized build,
// ASan's, passed it to a lambda built without AVX-512 and summed garbage).
template <typename Vec>
[[gnu::always_inline]] inline float lanesSum(Vec v) {
    typedef float Vec4 __attribute__((vector_size(16)));
    Vec8 v8;
    if constexpr (kLanes<Vec> == 16)
        v8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
             __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    else
        v8 = v;
    const Vec4 v4 = __builtin_shufflevector(v8, v8, 0, 1, 2, 3) + __builtin_shufflevector(v8, v8, 4, 5, 6, 7);
    return (v4[0] + v4[2]) + (v4[1] + v4[3]);
}

template <typename Vec>
[[gnu::always_inline]] inline void dotRowsOf(int64_t r0, int64_t r1, int64_t cols, const float* a,
                                             int64_t lda, const float* x, float* y) {
    constexpr int64_t L = kLanes<Vec>;
    int64_t i = r0;
    for (; i + 4 <= r1; i += 4) {
        const float *a0 = a + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        Vec s0{}, s1{}, s2{}, s3{};
        int64_t j = 0;
        for (; j + L <= cols; j += L) {
            const Vec xv = load<Vec>(x + j);
            s0 += load<Vec>(a0 + j) * xv;
            s1 += load<Vec>(a1 + j) * xv;
            s2 += load<Vec>(a2 + j) * xv;
            s3 += load<Vec>(a3 + j) * xv;
        }
        float t0 = lanesSum(s0), t1 = lanesSum(s1), t2 = lanesSum(s2), t3 = lanesSum(s3);
        for (; j < cols; ++j) {
            t0 += a0[j] * x[j];
            t1 += a1[j] * x[j];
            t2 += a2[j] * x[j];
            t3 += a3[j] * x[j];
        }
        y[i] = t0, y[i + 1] = t1, y[i + 2] = t2, y[i + 3] = t3;
    }
    for (; i < r1; ++i) {
        const float* row = a + i * lda;
        Vec s{};
        int64_t j = 0;
        for (; j + L <= cols; j += L) s += load<Vec>(row + j) * load<Vec>(x + j);
        float t = lanesSum(s);
        for (; j < cols; ++j) t += row[j] * x[j];
        y[i] = t;
    }
}

using DotRowsFn = void (*)(int64_t, int64_t, int64_t, const float*, int64_t, const float*, float*);
[[gnu::target("avx512f")]] void dotRowsAvx512(int64_t r0, int64_t r1, int64_t cols, const float* a,
                                              int64_t lda, const float* x, float* y) {
    dotRowsOf<Vec16>(r0, r1, cols, a, lda, x, y);
}
[[gnu::target("avx2,fma")]] void dotRowsAvx2(int64_t r0, int64_t r1, int64_t cols, const float* a,
                                             int64_t lda, const float* x, float* y) {
    dotRowsOf<Vec8>(r0, r1, cols, a, lda, x, y);
}
void dotRowsBaseline(int64_t r0, int64_t r1, int64_t cols, const float* a, int64_t lda, const float* x,
                     float* y) {
    dotRowsOf<Vec8>(r0, r1, cols, a, lda, x, y);
}

#pragma GCC diagnostic pop

AddRowsFn addRowsForThisCpu() {
    static const AddRowsFn chosen =
        vec16::forThisCpu<AddRowsFn>(addRowsAvx512, addRowsAvx2, addRowsBaseline);
    return chosen;
}

// sum[0, n) = x B over rows [p0, p1), column chunk by column chunk.
void sumRows(AddRowsFn addRows, int64_t p0, int64_t p1, int64_t n, const float* x, int64_t incx,
             const float* b, int64_t ldb, float* sum) {
    std::memset(sum, 0, size_t(n) * sizeof(float));
    for (int64_t j0 = 0; j0 < n; j0 += kColumnChunk)
        addRows(p0, p1, j0, std::min(n, j0 + kColumnChunk), x, incx, b, ldb, sum);
}

}  // namespace

void gemvRowMajor(int64_t k, int64_t n, float alpha, const float* x, int64_t incx, const float* b,
                  int64_t ldb, float beta, float* y) {
    const AddRowsFn addRows = addRowsForThisCpu();
    // The rows are split among the threads, each summing its own contiguous stretch of B
    // into partial sums that are added up at the end: every thread streams its rows in
    // order. Four stretches a thread, taken in turn, so a thread whose core is busy holds
    // nothing up. One thread below 64k multiply-adds, where waking a second costs more than
    // it saves (MobileNetV3's squeeze-excite layers, 960 x 240, gain from two).
    const int threads = int(std::min<int64_t>({omp_get_max_threads(), std::max<int64_t>(1, k / 16),
                                               std::max<int64_t>(1, k * n / 65536)}));
    const int64_t pieces =
        threads <= 1 || omp_in_parallel() ? 1 : std::min<int64_t>(k / 4, 4 * int64_t(threads));
    const auto partials = std::make_unique_for_overwrite<float[]>(size_t(pieces * n));
    const auto finish = [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
            float sum = 0.f;
            for (int64_t piece = 0; piece < pieces; ++piece) sum += partials[size_t(piece * n + j)];
            y[j] = alpha * sum + (beta != 0.f ? beta * y[j] : 0.f);
        }
    };
    if (pieces == 1) {
        sumRows(addRows, 0, k, n, x, incx, b, ldb, partials.get());
        finish(0, n);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(dynamic, 1)
        for (int64_t piece = 0; piece < pieces; ++piece)
            sumRows(addRows, k * piece / pieces, k * (piece + 1) / pieces, n, x, incx, b, ldb,
                    partials.get() + piece * n);
        const int t = omp_get_thread_num();
        finish(n * t / threads, n * (t + 1) / threads);
    }
}

void matrixTimesVector(int64_t rows, int64_t cols, const float* a, int64_t lda, const float* x,
                       float* y) {
    static const DotRowsFn dotRows = vec16::forThisCpu<DotRowsFn>(dotRowsAvx512, dotRowsAvx2, dotRowsBaseline);
    // Stretches of 32 rows taken in turn (a thread whose core is busy holds nothing up); one
    // thread below 64k multiply-adds, as gemvRowMajor.
    constexpr int64_t kRowsPerPiece = 32;
    const int64_t pieces = (rows + kRowsPerPiece - 1) / kRowsPerPiece;
    const int threads = int(std::min<int64_t>({omp_get_max_threads(), pieces, std::max<int64_t>(1, rows * cols / 65536)}));
    if (threads <= 1 || omp_in_parallel()) return dotRows(0, rows, cols, a, lda, x, y);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t piece = 0; piece < pieces; ++piece)
        dotRows(piece * kRowsPerPiece, std::min(rows, (piece + 1) * kRowsPerPiece), cols, a, lda, x, y);
}

}  // namespace fsc::cpu
