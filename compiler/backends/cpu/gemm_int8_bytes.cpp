// Exact int8 GEMM with B multiplied as bytes: B goes to uint8 (ub = b + 128, its zero point
// with it) in 16-column panels of 4-row quads, and A to rows of int8 quads, on two routes:
// - AVX-VNNI without AVX-512 (Intel client cores since Alder Lake): vpdpbusd sums four
//   u8 x s8 products into int32, exactly, for any A. oneDNN 2.6's own integer GEMM takes a
//   reference loop there once zero points are given (20-80x slower than this;
//   docs/benchmarks.md).
// - AVX2 without VNNI, where A less its zero point lies within [-64, 64] (7-bit weights,
//   `--reduce-range`, ONNX Runtime's reduce_range): vpmaddubsw sums pairs of u8 x s8 products
//   into int16 with saturation; a pair here stays within 2 x 255 x 64 = 32640 < 32768, so none
//   saturates. vpmaddwd by ones then sums pairs of those into int32: 32 products per three
//   instructions, against the widened kernel's 16 per two.
// A is packed less a shift s (its zero point on the narrow route; 0 on VNNI's, as a - az may
// not fit a byte), which leaves the zero point z = az - s; with ubz = bz + 128:
//   sum_p (a - az)(b - bz) = sum_p (a - s) ub - ubz sum_p (a - s) - z sum_p ub + k z ubz,
// the second and last terms from A's row sums, the third from B's column sums (only where z
// is not 0).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/gemm_int8_tiles.h"
#include "compiler/backends/cpu/packed_rows_cache.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace fsc::cpu {
namespace {

using namespace int8_tiles;

enum class Route { Narrow, Vnni };

// A narrow tile: 5 rows x 2 vectors of 8 int32 accumulators, 2 vectors of B, the ones of
// vpmaddwd, A's broadcast and one product in flight: 15 of the 16 registers (6 rows
// spilled). VNNI's tile needs neither the ones nor the product: 6 rows. B is packed 256 K
// quads at a time: 256 x 16 columns x 4 bytes, 16 KiB, in L1.
template <Route R>
constexpr int kBytesTileRows = R == Route::Vnni ? 6 : 5;
constexpr int64_t kBlockQuads = 256;
constexpr int kNarrowLimit = 64;

int64_t quadsOf(const Operands& o) {
    return (o.k + 3) / 4;
}

// The lowest and highest int8 values of k bytes stored with `flip` (Operands::aFlip).
[[gnu::target("avx2")]] std::pair<int8_t, int8_t> rangeOf(const int8_t* row, int64_t k, int8_t flip) {
    const __m256i flips = _mm256_set1_epi8(flip);
    __m256i lowest = _mm256_set1_epi8(127), highest = _mm256_set1_epi8(-128);
    int64_t p = 0;
    for (; p + 32 <= k; p += 32) {
        const __m256i v =
            _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + p)), flips);
        lowest = _mm256_min_epi8(lowest, v);
        highest = _mm256_max_epi8(highest, v);
    }
    alignas(32) int8_t lows[32], highs[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lows), lowest);
    _mm256_store_si256(reinterpret_cast<__m256i*>(highs), highest);
    int8_t low = *std::min_element(lows, lows + 32), high = *std::max_element(highs, highs + 32);
    for (; p < k; ++p) {
        low = std::min(low, int8_t(row[p] ^ flip));
        high = std::max(high, int8_t(row[p] ^ flip));
    }
    return {low, high};
}

// Row by row, so that an A of 8-bit weights (most rows reach outside) is turned down at once.
bool aIsNarrow(const Operands& o) {
    for (int64_t i = 0; i < o.m; ++i) {
        int8_t lowest = 127, highest = -128;
        if (o.transA) {
            for (int64_t p = 0; p < o.k; ++p) {
                lowest = std::min(lowest, o.rawA(i, p));
                highest = std::max(highest, o.rawA(i, p));
            }
        } else {
            std::tie(lowest, highest) = rangeOf(o.a + i * o.lda, o.k, o.aFlip);
        }
        if (highest - o.aZero > kNarrowLimit || lowest - o.aZero < -kNarrowLimit) return false;
    }
    return true;
}

// The shift s taken off A as packed.
template <Route R>
int16_t shiftOf(const Operands& o) {
    return R == Route::Narrow ? o.aZero : 0;
}

// One row of A, k bytes stored with `flip`, as int8 less `shift` (which must not wrap: on the
// narrow route every a - az is within 64), into `out`; returns their sum.
[[gnu::target("avx2")]] int32_t packRowOfA(const int8_t* row, int64_t k, int8_t flip, int8_t shift,
                                           int8_t* out) {
    const __m256i flips = _mm256_set1_epi8(flip), shifts = _mm256_set1_epi8(shift),
                  top = _mm256_set1_epi8(char(0x80));
    // Sums of the bytes as uint8 (flipped again), 8 at a time; 128 each comes off at the end.
    __m256i sums = _mm256_setzero_si256();
    int64_t p = 0;
    for (; p + 32 <= k; p += 32) {
        const __m256i v = _mm256_sub_epi8(
            _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + p)), flips),
            shifts);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p), v);
        sums = _mm256_add_epi64(sums, _mm256_sad_epu8(_mm256_xor_si256(v, top), _mm256_setzero_si256()));
    }
    alignas(32) int64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
    int64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3] - 128 * p;
    for (; p < k; ++p) {
        out[p] = int8_t(int8_t(row[p] ^ flip) - shift);
        sum += out[p];
    }
    return int32_t(sum);
}

// A's rows as int32 words of four consecutive a - s bytes (K padded with 0), so one broadcast
// feeds a multiply, with each row's sum; on the narrow route no words where some a - az
// leaves [-64, 64].
template <Route R>
PackedRowsCache::Rows packRowsOfA(const Operands& o) {
    auto rows = std::make_shared<PackedRows>();
    if (R == Route::Narrow && !aIsNarrow(o)) return rows;
    const int64_t quads = quadsOf(o);
    const int16_t shift = shiftOf<R>(o);
    rows->words = std::make_unique<int32_t[]>(size_t(o.m * quads));  // zeroed: K's padding
    rows->rowSums.resize(size_t(o.m));
#pragma omp parallel for schedule(static) if (o.m * o.k > (1 << 16))
    for (int64_t i = 0; i < o.m; ++i) {
        auto* bytes = reinterpret_cast<int8_t*>(rows->words.get() + i * quads);
        if (!o.transA) {
            rows->rowSums[size_t(i)] = packRowOfA(o.a + i * o.lda, o.k, o.aFlip, int8_t(shift), bytes);
            continue;
        }
        int32_t sum = 0;
        for (int64_t p = 0; p < o.k; ++p) {
            bytes[p] = int8_t(o.rawA(i, p) - shift);
            sum += bytes[p];
        }
        rows->rowSums[size_t(i)] = sum;
    }
    return rows;
}

[[gnu::target("avx2")]] void packPanelOfB(const Operands& o, int64_t q0, int64_t q1, int64_t j0,
                                          uint8_t* out) {
    const bool vectorRows = !o.transB && j0 + kTileColumns <= o.n;
    // To uint8: int8 bytes have their top bit flipped, uint8 ones (bFlip) are taken as they are.
    const __m128i flip = _mm_set1_epi8(char(0x80 ^ uint8_t(o.bFlip)));
    for (int64_t q = q0; q < q1; ++q, out += 4 * kTileColumns) {
        const int64_t p = 4 * q;
        if (vectorRows) {
            // Rows past K (in the last quad) are zeros, not flipped.
            __m128i r[4];
            for (int t = 0; t < 4; ++t)
                r[t] = p + t < o.k ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                                       o.b + (p + t) * o.ldb + j0)),
                                                   flip)
                                   : _mm_setzero_si128();
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

// What a block's tile takes into account beside A's rows' products with B: whether it is the
// first block (which writes C and adds the row terms, from A's row sums), and each of the 16
// columns' term from B's column sums over the block (null where z is 0).
struct ZeroTerms {
    const int32_t* columnTerms;
    bool firstBlock;
};

// C's rows [i0, i0 + Rows) x 8 * Vectors columns from j0, from a block's sums: the first
// block writes C, later ones add to it.
template <int Rows, int Vectors>
[[gnu::target("avx2"), gnu::always_inline]] inline void storeTile(
    const Operands& o, const PackedRows& packedA, int64_t i0, int64_t j0, const ZeroTerms& terms,
    uint32_t rowTermPerK, __m256i (&acc)[Rows][Vectors]) {
    // Sums modulo 2^32, as the vector adds: C is exact when it fits int32.
    const uint32_t bZero = uint32_t(o.bZero + 128);
    const int64_t columns = std::min<int64_t>(8 * Vectors, o.n - j0);
    __m256i columnTerm[Vectors];
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v)
        columnTerm[v] = terms.columnTerms ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                                terms.columnTerms + 8 * v))
                                          : _mm256_setzero_si256();
#pragma GCC unroll 6
    for (int r = 0; r < Rows; ++r) {
        const uint32_t rowTerm =
            terms.firstBlock ? rowTermPerK - bZero * uint32_t(packedA.rowSums[size_t(i0 + r)]) : 0;
        const __m256i zeroTerm = _mm256_set1_epi32(int32_t(rowTerm));
        int32_t* out = o.c + (i0 + r) * o.ldc + j0;
        __m256i sums[Vectors];
#pragma GCC unroll 2
        for (int v = 0; v < Vectors; ++v)
            sums[v] = _mm256_add_epi32(_mm256_add_epi32(acc[r][v], zeroTerm), columnTerm[v]);
        if (columns == 8 * Vectors) {
            auto* vectors = reinterpret_cast<__m256i*>(out);
#pragma GCC unroll 2
            for (int v = 0; v < Vectors; ++v)
                _mm256_storeu_si256(vectors + v,
                                    terms.firstBlock
                                        ? sums[v]
                                        : _mm256_add_epi32(_mm256_loadu_si256(vectors + v), sums[v]));
            continue;
        }
        alignas(32) int32_t lanes[kTileColumns];
#pragma GCC unroll 2
        for (int v = 0; v < Vectors; ++v)
            _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 8 * v), sums[v]);
        for (int64_t j = 0; j < columns; ++j)
            out[j] = terms.firstBlock ? lanes[j] : int32_t(uint32_t(out[j]) + uint32_t(lanes[j]));
    }
}

// The product of a tile of A's rows with the block of B's panel, on the narrow route.
template <int Rows, int Vectors>
[[gnu::target("avx2")]] void multiplyNarrowTile(const Operands& o, const PackedRows& packedA,
                                                int64_t i0, int64_t q0, int64_t q1,
                                                const uint8_t* panel, int64_t j0,
                                                const ZeroTerms& terms, uint32_t rowTermPerK) {
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
    storeTile<Rows, Vectors>(o, packedA, i0, j0, terms, rowTermPerK, acc);
}

// The same on VNNI's route: one vpdpbusd per four products of each lane.
template <int Rows, int Vectors>
[[gnu::target("avx2,avxvnni")]] void multiplyVnniTile(const Operands& o, const PackedRows& packedA,
                                                      int64_t i0, int64_t q0, int64_t q1,
                                                      const uint8_t* panel, int64_t j0,
                                                      const ZeroTerms& terms, uint32_t rowTermPerK) {
    __m256i acc[Rows][Vectors];
#pragma GCC unroll 12
    for (int r = 0; r < Rows * Vectors; ++r) acc[r / Vectors][r % Vectors] = _mm256_setzero_si256();
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
                acc[r][v] = _mm256_dpbusd_avx_epi32(acc[r][v], b[v], a);
                asm volatile("" : "+x"(acc[r][v]));  // as on the narrow route
            }
        }
    }
    storeTile<Rows, Vectors>(o, packedA, i0, j0, terms, rowTermPerK, acc);
}

// columnTerms[j] = -z * (sum of ub over the block's quads) for the panel's 16 columns.
[[gnu::target("avx2,avxvnni")]] void columnTermsOf(const uint8_t* panel, int64_t quads, int16_t z,
                                                    int32_t* columnTerms) {
    const __m256i ones = _mm256_set1_epi8(1);
    __m256i sums[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t q = 0; q < quads; ++q, panel += 4 * kTileColumns)
        for (int v = 0; v < 2; ++v)
            sums[v] = _mm256_dpbusd_avx_epi32(
                sums[v], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + v * 4 * 8)),
                ones);
    const __m256i factor = _mm256_set1_epi32(-int32_t(z));
    for (int v = 0; v < 2; ++v)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(columnTerms + 8 * v),
                            _mm256_mullo_epi32(sums[v], factor));
}

template <Route R, int Vectors>
void multiplyRowsOf(const Operands& o, const PackedRows& packedA, int64_t i0, int64_t i1,
                    int64_t q0, int64_t q1, const uint8_t* panel, int64_t j0,
                    const ZeroTerms& terms, uint32_t rowTermPerK) {
    forEachRowTile<kBytesTileRows<R>>(i0, i1, [&]<int Rows>(int64_t i) {
        if constexpr (R == Route::Vnni)
            multiplyVnniTile<Rows, Vectors>(o, packedA, i, q0, q1, panel, j0, terms, rowTermPerK);
        else
            multiplyNarrowTile<Rows, Vectors>(o, packedA, i, q0, q1, panel, j0, terms, rowTermPerK);
    });
}

template <Route R>
void multiply(const Operands& o, const PackedRows& packedA) {
    const int64_t quads = quadsOf(o);
    const int16_t z = int16_t(o.aZero - shiftOf<R>(o));  // 0 on the narrow route
    // k z ubz, modulo 2^32 as every term.
    const uint32_t rowTermPerK = uint32_t(o.k) * uint32_t(int32_t(z)) * uint32_t(o.bZero + 128);
    forEachWorkItem<uint8_t>(
        o, kBytesTileRows<R>, size_t(std::min(quads, kBlockQuads) * 4 * kTileColumns),
        [&](const WorkItem& item, uint8_t* panel) {
            alignas(32) int32_t columnTerms[kTileColumns];
            for (int64_t p = item.firstPanel; p < item.lastPanel; ++p)
                for (int64_t q0 = 0; q0 < quads; q0 += kBlockQuads) {
                    const int64_t q1 = std::min(quads, q0 + kBlockQuads), j0 = p * kTileColumns;
                    packPanelOfB(o, q0, q1, j0, panel);
                    if constexpr (R == Route::Vnni)
                        if (z != 0) columnTermsOf(panel, q1 - q0, z, columnTerms);
                    const ZeroTerms terms{z != 0 ? columnTerms : nullptr, q0 == 0};
                    // One vector serves a last panel of 8 columns or fewer.
                    if (o.n - j0 <= 8)
                        multiplyRowsOf<R, 1>(o, packedA, item.i0, item.i1, q0, q1, panel, j0, terms, rowTermPerK);
                    else
                        multiplyRowsOf<R, 2>(o, packedA, item.i0, item.i1, q0, q1, panel, j0, terms, rowTermPerK);
                }
        });
}

template <Route R>
bool multiplyAsBytes(const Operands& o, PackedRowsCache* constantA) {
    const auto packing =
        R == Route::Vnni ? PackedRowsCache::Packing::VnniQuads : PackedRowsCache::Packing::NarrowQuads;
    const PackedRowsCache::Rows packedA =
        constantA ? constantA->rowsFor({o.a, o.m, o.k, o.lda, o.transA, o.aZero, o.aFlip, packing},
                                       [&] { return packRowsOfA<R>(o); })
                  : packRowsOfA<R>(o);
    if (!packedA->words) return false;
    multiply<R>(o, *packedA);
    return true;
}

}  // namespace

bool sevenBitWeightsAreFaster() { return __builtin_cpu_supports("avx2") && !oneDnnInt8IsExact(); }

bool gemmS8S8WithNarrowA(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a,
                         int64_t lda, int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero,
                         int32_t* c, int64_t ldc, PackedRowsCache* constantA, Uint8Operands stored) {
    if (!__builtin_cpu_supports("avx2")) return false;
    if (int8_tiles::nothingToMultiply(m, n, k, c, ldc)) return true;
    return multiplyAsBytes<Route::Narrow>({transA, transB, m, n, k, lda, ldb, ldc, a, b, aZero, bZero, c, flipOf(stored.a), flipOf(stored.b)},
                                          constantA);
}

bool gemmS8S8WithAvxVnni(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const int8_t* a,
                         int64_t lda, int8_t aZero, const int8_t* b, int64_t ldb, int8_t bZero,
                         int32_t* c, int64_t ldc, PackedRowsCache* constantA, Uint8Operands stored) {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("avxvnni")) return false;
    if (int8_tiles::nothingToMultiply(m, n, k, c, ldc)) return true;
    return multiplyAsBytes<Route::Vnni>({transA, transB, m, n, k, lda, ldb, ldc, a, b, aZero, bZero, c, flipOf(stored.a), flipOf(stored.b)},
                                        constantA);
}

}  // namespace fsc::cpu

#else

namespace fsc::cpu {
bool sevenBitWeightsAreFaster() { return false; }
bool gemmS8S8WithNarrowA(bool, bool, int64_t, int64_t, int64_t, const int8_t*, int64_t, int8_t,
                         const int8_t*, int64_t, int8_t, int32_t*, int64_t, PackedRowsCache*, Uint8Operands) {
    return false;
}
bool gemmS8S8WithAvxVnni(bool, bool, int64_t, int64_t, int64_t, const int8_t*, int64_t, int8_t,
                         const int8_t*, int64_t, int8_t, int32_t*, int64_t, PackedRowsCache*, Uint8Operands) {
    return false;
}
}  // namespace fsc::cpu

#endif
