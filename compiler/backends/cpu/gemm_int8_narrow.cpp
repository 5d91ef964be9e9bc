// Exact int8 GEMM for x86 CPUs without VNNI where A, less its zero point, lies within
// [-64, 64]: 7-bit weights (`--reduce-range`, ONNX Runtime's reduce_range). B goes to uint8
// (b + 128, its zero point with it) and is multiplied as bytes by vpmaddubsw, which sums pairs
// of u8 x s8 products into int16 with saturation; a pair here stays within 2 x 255 x 64 =
// 32640 < 32768, so none saturates. vpmaddwd by ones then sums pairs of those into int32:
// 32 products per three instructions, against the widened kernel's 16 per two. B's zero
// point comes off through A's row sums:
//   sum_p a' (b - bz) = sum_p a' (b + 128) - (bz + 128) sum_p a',   a' = a - az.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/gemm_int8_tiles.h"
#include "compiler/backends/cpu/packed_rows_cache.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace fsc::cpu {
namespace {

using namespace int8_tiles;

// A tile: 5 rows x 2 vectors of 8 int32 accumulators, 2 vectors of B, the ones of vpmaddwd,
// A's broadcast and one product in flight: 15 of the 16 registers (6 rows spilled). B is
// packed 256 K quads at a time: 256 x 16 columns x 4 bytes, 16 KiB, in L1.
constexpr int kNarrowTileRows = 5;
constexpr int64_t kBlockQuads = 256;
constexpr int kNarrowLimit = 64;

int64_t quadsOf(const Operands& o) {
    return (o.k + 3) / 4;
}

// Row by row, so that an A of 8-bit weights (most rows reach outside) is turned down at once.
bool aIsNarrow(const Operands& o) {
    for (int64_t i = 0; i < o.m; ++i) {
        int8_t lowest = 127, highest = -128;
        for (int64_t p = 0; p < o.k; ++p) {
            const int8_t v = o.rawA(i, p);
            lowest = std::min(lowest, v);
            highest = std::max(highest, v);
        }
        if (highest - o.aZero > kNarrowLimit || lowest - o.aZero < -kNarrowLimit) return false;
    }
    return true;
}

// A's rows as int32 words of four consecutive a - az bytes (K padded with 0), so one broadcast
// feeds vpmaddubsw, with each row's sum; no words where some a - az leaves [-64, 64].
PackedRowsCache::Rows packRowsOfA(const Operands& o) {
    auto rows = std::make_shared<PackedRows>();
    if (!aIsNarrow(o)) return rows;
    const int64_t quads = quadsOf(o);
    rows->words = std::make_unique<int32_t[]>(size_t(o.m * quads));  // zeroed: K's padding
    rows->rowSums.resize(size_t(o.m));
    for (int64_t i = 0; i < o.m; ++i) {
        auto* bytes = reinterpret_cast<int8_t*>(rows->words.get() + i * quads);
        int32_t sum = 0;
        for (int64_t p = 0; p < o.k; ++p) {
            bytes[p] = int8_t(o.rawA(i, p) - o.aZero);
            sum += bytes[p];
        }
        rows->rowSums[size_t(i)] = sum;
    }
    return rows;
}

// Quads [q0, q1) of the 16 columns from j0 of B as uint8, as the kernel reads them: per quad,
// columns 0-7 then 8-15, each column's four rows side by side.
[[gnu::target("avx2")]] void packPanelOfB(const Operands& o, int64_t q0, int64_t q1, int64_t j0,
                                          uint8_t* out) {
    const bool vectorRows = !o.transB && j0 + kTileColumns <= o.n;
    const __m128i flip = _mm_set1_epi8(char(0x80));
    for (int64_t q = q0; q < q1; ++q, out += 4 * kTileColumns) {
        const int64_t p = 4 * q;
        if (vectorRows && p + 3 < o.k) {
            __m128i r[4];
            for (int t = 0; t < 4; ++t)
                r[t] = _mm_xor_si128(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(o.b + (p + t) * o.ldb + j0)),
                    flip);
            const __m128i rows01Low = _mm_unpacklo_epi8(r[0], r[1]),
                          rows01High = _mm_unpackhi_epi8(r[0], r[1]);
            const __m128i rows23Low = _mm_unpacklo_epi8(r[2], r[3]),
                          rows23High = _mm_unpackhi_epi8(r[2], r[3]);
            auto* columns = reinterpret_cast<__m128i*>(out);
            _mm_storeu_si128(columns + 0, _mm_unpacklo_epi16(rows01Low, rows23Low));  // columns 0-3
            _mm_storeu_si128(columns + 1, _mm_unpackhi_epi16(rows01Low, rows23Low));  // 4-7
            _mm_storeu_si128(columns + 2, _mm_unpacklo_epi16(rows01High, rows23High));  // 8-11
            _mm_storeu_si128(columns + 3, _mm_unpackhi_epi16(rows01High, rows23High));  // 12-15
            continue;
        }
        for (int64_t j = 0; j < kTileColumns; ++j)
            for (int64_t t = 0; t < 4; ++t)
                out[4 * j + t] = p + t < o.k && j0 + j < o.n
                                     ? uint8_t(uint8_t(o.rawB(p + t, j0 + j)) ^ 0x80)
                                     : 0;
    }
}

// C's rows [i0, i0 + Rows) x 8 * Vectors columns from j0, over the packed quads of one block;
// the first block writes C, taking B's zero point off, later ones add to it.
template <int Rows, int Vectors>
[[gnu::target("avx2")]] void multiplyTile(const Operands& o, const PackedRows& packedA, int64_t i0,
                                          int64_t q0, int64_t q1, const uint8_t* panel, int64_t j0,
                                          bool accumulate) {
    __m256i acc[Rows][Vectors];
#pragma GCC unroll 12
    for (int r = 0; r < Rows * Vectors; ++r) acc[r / Vectors][r % Vectors] = _mm256_setzero_si256();
    const __m256i ones = _mm256_set1_epi16(1);
    const int64_t quads = quadsOf(o);
    const int32_t* aRow = packedA.words.get() + i0 * quads;
    for (int64_t q = q0; q < q1; ++q, panel += 4 * kTileColumns) {
        __m256i b[Vectors];
#pragma GCC unroll 2
        for (int v = 0; v < Vectors; ++v)
            b[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + v * 4 * 8));
#pragma GCC unroll 6
        for (int r = 0; r < Rows; ++r) {
            const __m256i a = _mm256_set1_epi32(aRow[r * quads + q]);
#pragma GCC unroll 2
            for (int v = 0; v < Vectors; ++v) {
                acc[r][v] = _mm256_add_epi32(
                    acc[r][v], _mm256_madd_epi16(_mm256_maddubs_epi16(b[v], a), ones));
                // Left to itself, GCC loads every row's broadcast of A first and then has too
                // few registers for the accumulators, which go to the stack.
                asm volatile("" : "+x"(acc[r][v]));
            }
        }
    }
    // Sums modulo 2^32, as the vector adds: C is exact when it fits int32.
    const uint32_t bZero = uint32_t(o.bZero + 128);
    const int64_t columns = std::min<int64_t>(8 * Vectors, o.n - j0);
#pragma GCC unroll 6
    for (int r = 0; r < Rows; ++r) {
        const __m256i zeroTerm = _mm256_set1_epi32(
            accumulate ? 0 : int32_t(0u - bZero * uint32_t(packedA.rowSums[size_t(i0 + r)])));
        int32_t* out = o.c + (i0 + r) * o.ldc + j0;
        if (columns == 8 * Vectors) {
            auto* vectors = reinterpret_cast<__m256i*>(out);
#pragma GCC unroll 2
            for (int v = 0; v < Vectors; ++v) {
                const __m256i sum = _mm256_add_epi32(acc[r][v], zeroTerm);
                _mm256_storeu_si256(
                    vectors + v,
                    accumulate ? _mm256_add_epi32(_mm256_loadu_si256(vectors + v), sum) : sum);
            }
            continue;
        }
        alignas(32) int32_t sums[kTileColumns];
#pragma GCC unroll 2
        for (int v = 0; v < Vectors; ++v)
            _mm256_store_si256(reinterpret_cast<__m256i*>(sums + 8 * v),
                               _mm256_add_epi32(acc[r][v], zeroTerm));
        for (int64_t j = 0; j < columns; ++j)
            out[j] = accumulate ? int32_t(uint32_t(out[j]) + uint32_t(sums[j])) : sums[j];
    }
}

template <int Vectors>
void multiplyRowsOf(const Operands& o, const PackedRows& packedA, int64_t i0, int64_t i1,
                    int64_t q0, int64_t q1, const uint8_t* panel, int64_t j0, bool accumulate) {
    forEachRowTile<kNarrowTileRows>(i0, i1, [&]<int Rows>(int64_t i) {
        multiplyTile<Rows, Vectors>(o, packedA, i, q0, q1, panel, j0, accumulate);
    });
}

void multiply(const Operands& o, const PackedRows& packedA) {
    const int64_t quads = quadsOf(o);
    forEachWorkItem<uint8_t>(
        o, kNarrowTileRows, size_t(std::min(quads, kBlockQuads) * 4 * kTileColumns),
        [&](const WorkItem& item, uint8_t* panel) {
            for (int64_t p = item.firstPanel; p < item.lastPanel; ++p)
                for (int64_t q0 = 0; q0 < quads; q0 += kBlockQuads) {
                    const int64_t q1 = std::min(quads, q0 + kBlockQuads), j0 = p * kTileColumns;
                    packPanelOfB(o, q0, q1, j0, panel);
                    // One vector serves a last panel of 8 columns or fewer.
                    if (o.n - j0 <= 8)
                        multiplyRowsOf<1>(o, packedA, item.i0, item.i1, q0, q1, panel, j0, q0 > 0);
                    else
                        multiplyRowsOf<2>(o, packedA, item.i0, item.i1, q0, q1, panel, j0, q0 > 0);
                }
        });
}

}  // namespace

bool sevenBitWeightsAreFaster() { return __builtin_cpu_supports("avx2") && !oneDnnInt8IsExact(); }

bool gemmS8S8WithNarrowA(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a,
                         int64_t lda, int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero,
                         int32_t* c, int64_t ldc, PackedRowsCache* constantA) {
    if (!__builtin_cpu_supports("avx2")) return false;
    if (int8_tiles::nothingToMultiply(m, n, k, c, ldc)) return true;
    const Operands o{transA, transB, m, n, k, lda, ldb, ldc, a, b, aZero, bZero, c};
    const PackedRowsCache::Rows packedA =
        constantA ? constantA->rowsFor(
                        {a, m, k, lda, transA, aZero, PackedRowsCache::Packing::NarrowQuads},
                        [&] { return packRowsOfA(o); })
                  : packRowsOfA(o);
    if (!packedA->words) return false;
    multiply(o, *packedA);
    return true;
}

}  // namespace fsc::cpu

#else

namespace fsc::cpu {
bool sevenBitWeightsAreFaster() { return false; }
bool gemmS8S8WithNarrowA(bool, bool, int64_t, int64_t, int64_t, const int8_t*, int64_t, int8_t,
                         const int8_t*, int64_t, int8_t, int32_t*, int64_t, PackedRowsCache*) {
    return false;
}
}  // namespace fsc::cpu

#endif
