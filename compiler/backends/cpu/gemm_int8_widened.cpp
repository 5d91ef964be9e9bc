// Exact int8 GEMM for x86 CPUs without VNNI: both operands widened to int16 with their zero
// points taken off, multiplied by vpmaddwd (pairs of int16 products summed into int32, which
// cannot saturate: 2 x 255 x 255 < 2^31). The alternative there, oneDNN's u8 x s8 GEMM, sums
// pairs into int16 with saturation and so needs the operand split into two GEMMs
// (gemmS8S8BySplitting); docs/benchmarks.md has the two measured against each other.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/widened_rows_cache.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace fsc::cpu {
namespace {

// A tile: 6 rows x 2 vectors of 8 int32 accumulators, 2 vectors of B and 1 of A, 15 of the
// 16 registers. B is packed 256 K pairs at a time: 256 x 16 int32 words, 16 KiB, in L1.
constexpr int kTileRows = 6;
constexpr int kTileColumns = 16;
constexpr int64_t kBlockPairs = 256;

struct Operands {
    bool transA, transB;
    int64_t m, n, k, lda, ldb, ldc;
    const int8_t* a;
    const int8_t* b;
    int16_t aZero, bZero;
    int32_t* c;
    int64_t pairs() const { return (k + 1) / 2; }
    int16_t aAt(int64_t i, int64_t p) const {
        return p < k ? int16_t(int16_t(transA ? a[p * lda + i] : a[i * lda + p]) - aZero) : 0;
    }
    int16_t bAt(int64_t p, int64_t j) const {
        return p < k && j < n ? int16_t(int16_t(transB ? b[j * ldb + p] : b[p * ldb + j]) - bZero)
                              : 0;
    }
};

// A's rows as int32 words, each two consecutive int16 of one row (an odd K's last pads with 0),
// so one broadcast feeds vpmaddwd. Rows of an untransposed A are widened 16 bytes at a time:
// a large layer's weights are millions of bytes per call.
[[gnu::target("avx2")]] std::unique_ptr<int32_t[]> packRowsOfA(const Operands& o) {
    const int64_t pairs = o.pairs(), whole = o.transA ? 0 : o.k / 16 * 16;
    auto packed = std::make_unique_for_overwrite<int32_t[]>(size_t(o.m * pairs));
    const __m256i aOffset = _mm256_set1_epi16(o.aZero);
#pragma omp parallel for schedule(static) if (o.m * o.k > (1 << 16))
    for (int64_t i = 0; i < o.m; ++i) {
        int32_t* out = packed.get() + i * pairs;
        for (int64_t p = 0; p < whole; p += 16) {
            const __m128i bytes =
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(o.a + i * o.lda + p));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p / 2),
                                _mm256_sub_epi16(_mm256_cvtepi8_epi16(bytes), aOffset));
        }
        for (int64_t q = whole / 2; q < pairs; ++q)
            out[q] = int32_t(uint32_t(uint16_t(o.aAt(i, 2 * q))) |
                             (uint32_t(uint16_t(o.aAt(i, 2 * q + 1))) << 16));
    }
    return packed;
}

// Pairs [q0, q1) of the 16 columns from j0 of B, as the kernel reads them: per pair, columns
// 0-7 then 8-15, each column's two rows side by side.
[[gnu::target("avx2")]] void packPanelOfB(const Operands& o, int64_t q0, int64_t q1, int64_t j0,
                                          int16_t* out) {
    const bool vectorRows = !o.transB && j0 + kTileColumns <= o.n;
    const __m256i bOffset = _mm256_set1_epi16(o.bZero);
    for (int64_t q = q0; q < q1; ++q, out += 2 * kTileColumns) {
        const int64_t p = 2 * q;
        if (vectorRows && p + 1 < o.k) {
            const auto* row0 = reinterpret_cast<const __m128i*>(o.b + p * o.ldb + j0);
            const auto* row1 = reinterpret_cast<const __m128i*>(o.b + (p + 1) * o.ldb + j0);
            const __m256i x0 =
                _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(row0)), bOffset);
            const __m256i x1 =
                _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(row1)), bOffset);
            const __m256i low = _mm256_unpacklo_epi16(x0, x1);   // columns 0-3 | 8-11
            const __m256i high = _mm256_unpackhi_epi16(x0, x1);  // columns 4-7 | 12-15
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                                _mm256_permute2x128_si256(low, high, 0x20));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kTileColumns),
                                _mm256_permute2x128_si256(low, high, 0x31));
            continue;
        }
        for (int j = 0; j < kTileColumns; ++j) {
            out[2 * j] = o.bAt(p, j0 + j);
            out[2 * j + 1] = o.bAt(p + 1, j0 + j);
        }
    }
}

// C's rows [i0, i0 + Rows) x 8 * Vectors columns from j0, over the packed pairs of one block;
// the first block writes C, later ones add to it. One vector serves a last panel of 8
// columns or fewer (ResNet-50's 7 x 7 layers: 49 columns).
template <int Rows, int Vectors>
[[gnu::target("avx2")]] void multiplyTile(const Operands& o, const int32_t* packedA, int64_t i0,
                                          int64_t q0, int64_t q1, const int16_t* panel, int64_t j0,
                                          bool accumulate) {
    __m256i acc[Rows][Vectors];
#pragma GCC unroll 12
    for (int r = 0; r < Rows * Vectors; ++r) acc[r / Vectors][r % Vectors] = _mm256_setzero_si256();
    const int64_t pairs = o.pairs();
    const int32_t* aRow = packedA + i0 * pairs;
    for (int64_t q = q0; q < q1; ++q, panel += 2 * kTileColumns) {
        __m256i b[Vectors];
#pragma GCC unroll 2
        for (int v = 0; v < Vectors; ++v)
            b[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + v * kTileColumns));
#pragma GCC unroll 6
        for (int r = 0; r < Rows; ++r) {
            const __m256i a = _mm256_set1_epi32(aRow[r * pairs + q]);
#pragma GCC unroll 2
            for (int v = 0; v < Vectors; ++v)
                acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(b[v], a));
        }
    }
    const int64_t columns = std::min<int64_t>(8 * Vectors, o.n - j0);
    // Sums modulo 2^32, as the vector adds: C is exact when it fits int32.
    if (columns == 8 * Vectors) {
#pragma GCC unroll 6
        for (int r = 0; r < Rows; ++r) {
            auto* out = reinterpret_cast<__m256i*>(o.c + (i0 + r) * o.ldc + j0);
#pragma GCC unroll 2
            for (int v = 0; v < Vectors; ++v)
                _mm256_storeu_si256(out + v, accumulate ? _mm256_add_epi32(_mm256_loadu_si256(out + v), acc[r][v])
                                                        : acc[r][v]);
        }
        return;
    }
#pragma GCC unroll 6
    for (int r = 0; r < Rows; ++r) {
        int32_t* out = o.c + (i0 + r) * o.ldc + j0;
        alignas(32) int32_t sums[kTileColumns];
#pragma GCC unroll 2
        for (int v = 0; v < Vectors; ++v)
            _mm256_store_si256(reinterpret_cast<__m256i*>(sums + 8 * v), acc[r][v]);
        for (int64_t j = 0; j < columns; ++j)
            out[j] = accumulate ? int32_t(uint32_t(out[j]) + uint32_t(sums[j])) : sums[j];
    }
}

template <int Vectors>
[[gnu::target("avx2")]] void multiplyRowsOf(const Operands& o, const int32_t* packedA, int64_t i0,
                                            int64_t i1, int64_t q0, int64_t q1,
                                            const int16_t* panel, int64_t j0, bool accumulate) {
    int64_t i = i0;
    for (; i + kTileRows <= i1; i += kTileRows)
        multiplyTile<kTileRows, Vectors>(o, packedA, i, q0, q1, panel, j0, accumulate);
    switch (i1 - i) {
        case 5:
            return multiplyTile<5, Vectors>(o, packedA, i, q0, q1, panel, j0, accumulate);
        case 4:
            return multiplyTile<4, Vectors>(o, packedA, i, q0, q1, panel, j0, accumulate);
        case 3:
            return multiplyTile<3, Vectors>(o, packedA, i, q0, q1, panel, j0, accumulate);
        case 2:
            return multiplyTile<2, Vectors>(o, packedA, i, q0, q1, panel, j0, accumulate);
        case 1:
            return multiplyTile<1, Vectors>(o, packedA, i, q0, q1, panel, j0, accumulate);
        default:
            return;
    }
}

[[gnu::target("avx2")]] void multiplyRows(const Operands& o, const int32_t* packedA, int64_t i0,
                                          int64_t i1, int64_t q0, int64_t q1, const int16_t* panel,
                                          int64_t j0, bool accumulate) {
    if (o.n - j0 <= 8) return multiplyRowsOf<1>(o, packedA, i0, i1, q0, q1, panel, j0, accumulate);
    multiplyRowsOf<2>(o, packedA, i0, i1, q0, q1, panel, j0, accumulate);
}

[[gnu::target("avx2")]] void multiply(const Operands& o, WidenedRowsCache* constantA) {
    const WidenedRowsCache::Rows packedA =
        constantA ? constantA->rowsFor({o.a, o.m, o.k, o.lda, o.transA, o.aZero}, [&] { return WidenedRowsCache::Rows(packRowsOfA(o)); })
                  : WidenedRowsCache::Rows(packRowsOfA(o));
    const int64_t pairs = o.pairs(), panels = (o.n + kTileColumns - 1) / kTileColumns;
    // Work items are runs of column panels, about 8 per thread (dynamic, for a busy core), so
    // that threads write apart in C, not to the two halves of one cache line. Where there are
    // fewer panels than that (ResNet-50's 14 x 14 and 7 x 7 layers: 13 and 4 panels), each
    // run's rows are split too, into parts of at least 8 tiles, each part packing its panels
    // itself: whole panels alone left one thread a panel more than the other. A narrow MatMul
    // splits its rows among the threads however few they are.
    const int64_t threads = omp_get_max_threads();
    const int64_t panelsPerItem = std::max<int64_t>(1, panels / (8 * threads));
    const int64_t runs = (panels + panelsPerItem - 1) / panelsPerItem;
    const int64_t rowTiles = (o.m + kTileRows - 1) / kTileRows;
    const int64_t fewPanelsParts = std::min(rowTiles, (2 * threads + runs - 1) / runs);  // a narrow MatMul
    const int64_t rowParts = std::clamp<int64_t>((8 * threads + runs - 1) / runs, 1,
                                                 std::max<int64_t>({1, rowTiles / 8, fewPanelsParts}));
    const int64_t tilesPerPart = (rowTiles + rowParts - 1) / rowParts;
#pragma omp parallel
    {
        std::vector<int16_t> panel(size_t(std::min(pairs, kBlockPairs) * 2 * kTileColumns));
#pragma omp for schedule(dynamic)
        for (int64_t item = 0; item < runs * rowParts; ++item) {
            const int64_t firstPanel = (item / rowParts) * panelsPerItem;
            const int64_t lastPanel = std::min(panels, firstPanel + panelsPerItem);
            const int64_t i0 = (item % rowParts) * tilesPerPart * kTileRows;
            const int64_t i1 = std::min(o.m, i0 + tilesPerPart * kTileRows);
            if (i0 >= i1) continue;
            for (int64_t p = firstPanel; p < lastPanel; ++p)
                for (int64_t q0 = 0; q0 < pairs; q0 += kBlockPairs) {
                    const int64_t q1 = std::min(pairs, q0 + kBlockPairs);
                    packPanelOfB(o, q0, q1, p * kTileColumns, panel.data());
                    multiplyRows(o, packedA.get(), i0, i1, q0, q1, panel.data(), p * kTileColumns,
                                 q0 > 0);
                }
        }
    }
}

}  // namespace

bool gemmS8S8ByWidening(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a,
                        int64_t lda, int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero,
                        int32_t* c, int64_t ldc, WidenedRowsCache* constantA) {
    if (!__builtin_cpu_supports("avx2")) return false;
    if (m == 0 || n == 0) return true;
    if (k == 0) {
        for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0);
        return true;
    }
    multiply(Operands{transA, transB, m, n, k, lda, ldb, ldc, a, b, aZero, bZero, c}, constantA);
    return true;
}

}  // namespace fsc::cpu

#else

namespace fsc::cpu {
bool gemmS8S8ByWidening(bool, bool, int64_t, int64_t, int64_t, const int8_t*, int64_t, int8_t,
                        const int8_t*, int64_t, int8_t, int32_t*, int64_t, WidenedRowsCache*) {
    return false;
}
}  // namespace fsc::cpu

#endif
