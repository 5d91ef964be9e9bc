// Exact int8 GEMM for x86 CPUs without VNNI: both operands widened to int16 with their zero
// points taken off, multiplied by vpmaddwd (pairs of int16 products summed into int32, which
// cannot saturate: 2 x 255 x 255 < 2^31). The alternative there, oneDNN's u8 x s8 GEMM, sums
// pairs into int16 with saturation and so needs the operand split into two GEMMs
// (gemmS8S8BySplitting); docs/benchmarks.md has the two measured against each other.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/gemm_int8_tiles.h"
#include "compiler/backends/cpu/packed_rows_cache.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace fsc::cpu {
namespace {

using namespace int8_tiles;

// A tile: 6 rows x 2 vectors of 8 int32 accumulators, 2 vectors of B and 1 of A, 15 of the
// 16 registers. B is packed 256 K pairs at a time: 256 x 16 int32 words, 16 KiB, in L1.
constexpr int64_t kBlockPairs = 256;

int64_t pairsOf(const Operands& o) { return (o.k + 1) / 2; }
int16_t aAt(const Operands& o, int64_t i, int64_t p) {
    return p < o.k ? int16_t(int16_t(o.rawA(i, p)) - o.aZero) : 0;
}
int16_t bAt(const Operands& o, int64_t p, int64_t j) {
    return p < o.k && j < o.n ? int16_t(int16_t(o.rawB(p, j)) - o.bZero) : 0;
}

// A's rows as int32 words, each two consecutive int16 of one row (an odd K's last pads with 0),
// so one broadcast feeds vpmaddwd. Rows of an untransposed A are widened 16 bytes at a time:
// a large layer's weights are millions of bytes per call.
[[gnu::target("avx2")]] PackedRowsCache::Rows packRowsOfA(const Operands& o) {
    const int64_t pairs = pairsOf(o), whole = o.transA ? 0 : o.k / 16 * 16;
    auto rows = std::make_shared<PackedRows>();
    rows->words = std::make_unique_for_overwrite<int32_t[]>(size_t(o.m * pairs));
    int32_t* packed = rows->words.get();
    const __m256i aOffset = _mm256_set1_epi16(o.aZero);
    const __m128i flip = _mm_set1_epi8(o.aFlip);
#pragma omp parallel for schedule(static) if (o.m * o.k > (1 << 16))
    for (int64_t i = 0; i < o.m; ++i) {
        int32_t* out = packed + i * pairs;
        for (int64_t p = 0; p < whole; p += 16) {
            const __m128i bytes = _mm_xor_si128(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(o.a + i * o.lda + p)), flip);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p / 2),
                                _mm256_sub_epi16(_mm256_cvtepi8_epi16(bytes), aOffset));
        }
        for (int64_t q = whole / 2; q < pairs; ++q)
            out[q] = int32_t(uint32_t(uint16_t(aAt(o, i, 2 * q))) |
                             (uint32_t(uint16_t(aAt(o, i, 2 * q + 1))) << 16));
    }
    return rows;
}

// 16 bytes as int16 less the zero point.
[[gnu::target("avx2")]] inline __m256i widenedBytes(const int8_t* bytes, __m128i flip, __m256i offset) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
    return _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_xor_si128(raw, flip)), offset);
}

// Pairs [q0, q1) of the 16 columns from j0 of B, as the kernel reads them: per pair, columns
// 0-7 then 8-15, each column's two rows side by side.
[[gnu::target("avx2")]] void packPanelOfB(const Operands& o, int64_t q0, int64_t q1, int64_t j0,
                                          int16_t* out) {
    const bool vectorRows = !o.transB && j0 + kTileColumns <= o.n;
    const __m256i bOffset = _mm256_set1_epi16(o.bZero);
    const __m128i flip = _mm_set1_epi8(o.bFlip);
    for (int64_t q = q0; q < q1; ++q, out += 2 * kTileColumns) {
        const int64_t p = 2 * q;
        if (vectorRows && p + 1 < o.k) {
            const __m256i x0 = widenedBytes(o.b + p * o.ldb + j0, flip, bOffset);
            const __m256i x1 = widenedBytes(o.b + (p + 1) * o.ldb + j0, flip, bOffset);
            const __m256i low = _mm256_unpacklo_epi16(x0, x1);   // columns 0-3 | 8-11
            const __m256i high = _mm256_unpackhi_epi16(x0, x1);  // columns 4-7 | 12-15
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                                _mm256_permute2x128_si256(low, high, 0x20));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kTileColumns),
                                _mm256_permute2x128_si256(low, high, 0x31));
            continue;
        }
        for (int j = 0; j < kTileColumns; ++j) {
            out[2 * j] = bAt(o, p, j0 + j);
            out[2 * j + 1] = bAt(o, p + 1, j0 + j);
        }
    }
}

// C's rows [i0, i0 + Rows) x 8 * Vectors columns from j0, over the packed pairs of one block;
// the first block writes C, later ones add to it.
template <int Rows, int Vectors>
[[gnu::target("avx2")]] void multiplyTile(const Operands& o, const int32_t* packedA, int64_t i0,
                                          int64_t q0, int64_t q1, const int16_t* panel, int64_t j0,
                                          bool accumulate) {
    __m256i acc[Rows][Vectors];
#pragma GCC unroll 12
    for (int r = 0; r < Rows * Vectors; ++r) acc[r / Vectors][r % Vectors] = _mm256_setzero_si256();
    const int64_t pairs = pairsOf(o);
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

// One tile of rows against the panel from j0: one vector serves a last panel of 8 columns
// or fewer (ResNet-50's 7 x 7 layers: 49 columns).
template <int Rows>
void multiplyPanelTile(const Operands& o, const int32_t* packedA, int64_t i0, int64_t q0, int64_t q1,
                       const int16_t* panel, int64_t j0, bool accumulate) {
    if (o.n - j0 <= 8) multiplyTile<Rows, 1>(o, packedA, i0, q0, q1, panel, j0, accumulate);
    else multiplyTile<Rows, 2>(o, packedA, i0, q0, q1, panel, j0, accumulate);
}

void multiplyRowsOf(const Operands& o, const int32_t* packedA, int64_t i0, int64_t i1, int64_t q0,
                    int64_t q1, const int16_t* panel, int64_t j0, bool accumulate) {
    forEachRowTile<kTileRows>(i0, i1, [&]<int Rows>(int64_t i) {
        multiplyPanelTile<Rows>(o, packedA, i, q0, q1, panel, j0, accumulate);
    });
}

// Whether C has so few columns (a 7 x 7 layer's 49: 4 panels) that B, packed whole, stays in
// L2. Then multiplyFewColumns runs each tile of A's rows over every panel at once: cut into
// one panel per work item, every item read its rows of A (ResNet-50's layer 4: 4.7 MB
// widened) from memory again for each panel, and the multiply ran at about 60% of its speed
// on wide layers.
bool fewColumns(const Operands& o) {
    const int64_t panels = (o.n + kTileColumns - 1) / kTileColumns;
    const int64_t packedBytes = panels * pairsOf(o) * 2 * kTileColumns * int64_t(sizeof(int16_t));
    return panels < 8 * omp_get_max_threads() && packedBytes <= (1 << 20);
}

// All of B packed once (its panels across the threads), then the rows of C in parts of
// whole tiles, each tile over all of K and every panel while its rows of A stay in cache.
void multiplyFewColumns(const Operands& o, const int32_t* packedA) {
    const int64_t pairs = pairsOf(o), panels = (o.n + kTileColumns - 1) / kTileColumns;
    const int64_t panelWords = pairs * 2 * kTileColumns;
    const auto packedB = std::make_unique_for_overwrite<int16_t[]>(size_t(panels * panelWords));
    const int64_t rowTiles = (o.m + kTileRows - 1) / kTileRows;
    const int64_t parts = std::min<int64_t>(rowTiles, 4 * omp_get_max_threads());
    const int64_t tilesPerPart = (rowTiles + parts - 1) / parts;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int64_t p = 0; p < panels; ++p) packPanelOfB(o, 0, pairs, p * kTileColumns, packedB.get() + p * panelWords);
#pragma omp for schedule(dynamic)
        for (int64_t part = 0; part < parts; ++part) {
            const int64_t i1 = std::min(o.m, (part + 1) * tilesPerPart * kTileRows);
            forEachRowTile<kTileRows>(part * tilesPerPart * kTileRows, i1, [&]<int Rows>(int64_t i) {
                for (int64_t p = 0; p < panels; ++p) {
                    const int16_t* panel = packedB.get() + p * panelWords;
                    multiplyPanelTile<Rows>(o, packedA, i, 0, pairs, panel, p * kTileColumns, false);
                }
            });
        }
    }
}

// One row of A (a classifier's last layer at batch 1): C is a row of dot products, and B,
// used once, is read straight from its bytes, each pair of its rows widened and interleaved
// in registers 64 columns (a cache line) at a time. Packed first, as for more rows, B was
// written out at twice its size and read back, for 2 MB of weights every run.
[[gnu::target("avx2")]] void multiplyOneRow(const Operands& o, const int32_t* packedA) {
    constexpr int64_t kBlock = 4 * kTileColumns, kAhead = 8;
    const int64_t blocks = o.n / kBlock, pairs = pairsOf(o);
    const __m256i bOffset = _mm256_set1_epi16(o.bZero);
    const __m128i flip = _mm_set1_epi8(o.bFlip);
#pragma omp parallel for schedule(static) if (blocks > 1 && o.k * o.n > (1 << 16))
    for (int64_t block = 0; block < blocks; ++block) {
        const int64_t j0 = block * kBlock;
        __m256i low[4], high[4];  // per 16 columns: columns 0-3 | 8-11 and 4-7 | 12-15
        for (int s = 0; s < 4; ++s) low[s] = high[s] = _mm256_setzero_si256();
        for (int64_t q = 0; q < pairs; ++q) {
            const int8_t* row0 = o.b + 2 * q * o.ldb + j0;
            const bool second = 2 * q + 1 < o.k;  // an odd K's last row pairs with zeros
            // Rows a stride apart defeat the hardware's prefetcher: B comes from memory (it is
            // read once a run), so ask for the rows some pairs ahead.
            if (q + kAhead < pairs)
                for (int r = 0; r < 2; ++r) {
                    const int8_t* ahead = row0 + (2 * kAhead + r) * o.ldb;
                    _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
                    _mm_prefetch(reinterpret_cast<const char*>(ahead + kBlock - 1), _MM_HINT_T0);
                }
            const __m256i a = _mm256_set1_epi32(packedA[q]);
#pragma GCC unroll 4
            for (int s = 0; s < 4; ++s) {
                const __m256i x0 = widenedBytes(row0 + s * kTileColumns, flip, bOffset);
                const __m256i x1 = second ? widenedBytes(row0 + o.ldb + s * kTileColumns, flip, bOffset)
                                          : _mm256_setzero_si256();
                low[s] = _mm256_add_epi32(low[s], _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), a));
                high[s] = _mm256_add_epi32(high[s], _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), a));
            }
        }
        for (int s = 0; s < 4; ++s) {
            auto* out = reinterpret_cast<__m256i*>(o.c + j0 + s * kTileColumns);
            _mm256_storeu_si256(out, _mm256_permute2x128_si256(low[s], high[s], 0x20));
            _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(low[s], high[s], 0x31));
        }
    }
    // The last columns, fewer than a block, as panels packed the usual way.
    std::vector<int16_t> panel(size_t(pairs * 2 * kTileColumns));
    for (int64_t j0 = blocks * kBlock; j0 < o.n; j0 += kTileColumns) {
        packPanelOfB(o, 0, pairs, j0, panel.data());
        multiplyPanelTile<1>(o, packedA, 0, 0, pairs, panel.data(), j0, false);
    }
}

void multiply(const Operands& o, PackedRowsCache* constantA) {
    const PackedRowsCache::Rows packedA =
        constantA ? constantA->rowsFor({o.a, o.m, o.k, o.lda, o.transA, o.aZero, o.aFlip,
                                        PackedRowsCache::Packing::WidenedPairs},
                                       [&] { return packRowsOfA(o); })
                  : packRowsOfA(o);
    if (o.m == 1 && !o.transB) return multiplyOneRow(o, packedA->words.get());
    if (fewColumns(o)) return multiplyFewColumns(o, packedA->words.get());
    const int64_t pairs = pairsOf(o);
    forEachWorkItem<int16_t>(o, kTileRows, size_t(std::min(pairs, kBlockPairs) * 2 * kTileColumns),
                             [&](const WorkItem& item, int16_t* panel) {
        for (int64_t p = item.firstPanel; p < item.lastPanel; ++p)
            for (int64_t q0 = 0; q0 < pairs; q0 += kBlockPairs) {
                const int64_t q1 = std::min(pairs, q0 + kBlockPairs), j0 = p * kTileColumns;
                packPanelOfB(o, q0, q1, j0, panel);
                multiplyRowsOf(o, packedA->words.get(), item.i0, item.i1, q0, q1, panel, j0, q0 > 0);
            }
    });
}

}  // namespace

bool gemmS8S8ByWidening(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a,
                        int64_t lda, int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero,
                        int32_t* c, int64_t ldc, PackedRowsCache* constantA, Uint8Operands stored) {
    if (!__builtin_cpu_supports("avx2")) return false;
    if (int8_tiles::nothingToMultiply(m, n, k, c, ldc)) return true;
    multiply(Operands{transA, transB, m, n, k, lda, ldb, ldc, a, b, aZero, bZero, c,
                      flipOf(stored.a), flipOf(stored.b)},
             constantA);
    return true;
}

}  // namespace fsc::cpu

#else

namespace fsc::cpu {
bool gemmS8S8ByWidening(bool, bool, int64_t, int64_t, int64_t, const int8_t*, int64_t, int8_t,
                        const int8_t*, int64_t, int8_t, int32_t*, int64_t, PackedRowsCache*, Uint8Operands) {
    return false;
}
}  // namespace fsc::cpu

#endif
