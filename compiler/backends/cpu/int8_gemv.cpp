#include "compiler/backends/cpu/int8_gemv.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fsc::cpu {
namespace {

constexpr int64_t kColumns = 16;  // one vector of int32 sums
constexpr int kRowsAtOnce = 4;

int64_t groupsOf(int64_t K) { return (K + 3) / 4; }

#if defined(__x86_64__)
// Sums of rows [0, R) (R <= kRowsAtOnce) of a4 (rows of `groups` x 4 bytes, padded with zeros)
// over blocks [first, last) of 16 columns, into sums [R, blocks x 16]. Each block's bytes load
// once for all R rows.
template <int R>
[[gnu::target("avx512f,avx512bw,avx512vnni")]] void blockSums(const uint8_t* a4, const PackedInt8Columns& b, int64_t first,
                                                              int64_t last, int32_t* sums, int64_t sumsStride) {
    const int64_t groups = groupsOf(b.K), blockBytes = groups * kColumns * 4;
    constexpr int64_t kAtOnce = R == 1 ? 4 : 2;  // blocks at once: R x kAtOnce sums in registers
    int64_t block = first;
    for (; block < last; block += kAtOnce) {
        const int64_t count = std::min<int64_t>(kAtOnce, last - block);
        __m512i acc[R][kAtOnce];
        for (auto& row : acc)
            for (auto& v : row) v = _mm512_setzero_si512();
        const int8_t* w = b.data.data() + block * blockBytes;
        for (int64_t g = 0; g < groups; ++g) {
            __m512i x[R];
            for (int r = 0; r < R; ++r) {
                int32_t four;
                std::memcpy(&four, a4 + r * groups * 4 + 4 * g, 4);
                x[r] = _mm512_set1_epi32(four);
            }
            for (int64_t j = 0; j < kAtOnce; ++j) {
                if (j >= count) break;
                const __m512i wv = _mm512_loadu_si512(w + j * blockBytes + g * 64);
                for (int r = 0; r < R; ++r) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], x[r], wv);
            }
        }
        for (int r = 0; r < R; ++r)
            for (int64_t j = 0; j < count; ++j) _mm512_storeu_si512(sums + r * sumsStride + (block + j) * kColumns, acc[r][j]);
    }
}

// One row with AVX2 (no VNNI): per 4 columns of a group, their 16 bytes widened to int16 and
// multiplied by a's 4 bytes as int16 pairs (vpmaddwd: exact), each column's two pair sums
// kept apart until the end.
[[gnu::target("avx2")]] void blockSumsAvx2(const uint8_t* a4, const PackedInt8Columns& b, int64_t first, int64_t last,
                                           int32_t* sums) {
    const int64_t groups = groupsOf(b.K), blockBytes = groups * kColumns * 4;
    for (int64_t block = first; block < last; ++block) {
        __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
        const int8_t* w = b.data.data() + block * blockBytes;
        for (int64_t g = 0; g < groups; ++g) {
            const uint8_t* x = a4 + 4 * g;
            const int64_t pattern = int64_t(x[0]) | int64_t(x[1]) << 16 | int64_t(x[2]) << 32 | int64_t(x[3]) << 48;
            const __m256i xv = _mm256_set1_epi64x(pattern);
            for (int j = 0; j < 4; ++j) {
                const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + g * 64 + j * 16));
                acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(_mm256_cvtepi8_epi16(bytes), xv));
            }
        }
        for (int j = 0; j < 4; ++j) {
            alignas(32) int32_t pairs[8];
            _mm256_store_si256(reinterpret_cast<__m256i*>(pairs), acc[j]);
            for (int c = 0; c < 4; ++c) sums[block * kColumns + j * 4 + c] = pairs[2 * c] + pairs[2 * c + 1];
        }
    }
}

bool hasVnni512() {
    static const bool available = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                  __builtin_cpu_supports("avx512vnni");
    return available;
}
#endif

}  // namespace

bool int8GemvAvailable() {
#if defined(__x86_64__)
    static const bool available = hasVnni512() || __builtin_cpu_supports("avx2");
    return available;
#else
    return false;
#endif
}

PackedInt8Columns packInt8Columns(const uint8_t* b, bool isSigned, int64_t K, int64_t N, int32_t zero) {
    PackedInt8Columns p;
    p.K = K;
    p.N = N;
    p.zero = isSigned ? zero : zero - 128;
    const int64_t groups = groupsOf(K), blocks = (N + kColumns - 1) / kColumns;
    p.data.assign(size_t(blocks * groups * kColumns * 4), 0);
    p.columnSums.assign(size_t(N), 0);
    for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n) {
            const int8_t v = isSigned ? int8_t(b[k * N + n]) : int8_t(int32_t(b[k * N + n]) - 128);
            const int64_t block = n / kColumns, column = n % kColumns, group = k / 4;
            p.data[size_t(((block * groups + group) * kColumns + column) * 4 + k % 4)] = v;
            p.columnSums[size_t(n)] += v;
        }
    return p;
}

void int8RowsTimesColumns(ThreadPool& pool, const uint8_t* a, int64_t rows, int32_t aZero, const PackedInt8Columns& b,
                          int32_t* y) {
    const int64_t groups = groupsOf(b.K), blocks = (b.N + kColumns - 1) / kColumns, stride = blocks * kColumns;
    std::vector<uint8_t> a4(size_t(rows * groups * 4), 0);
    std::vector<int32_t> aSums(size_t(rows), 0);
    for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(&a4[size_t(r * groups * 4)], a + r * b.K, size_t(b.K));
        for (int64_t k = 0; k < b.K; ++k) aSums[size_t(r)] += a[r * b.K + k];
    }
    std::vector<int32_t> sums(size_t(rows * stride));
    pool.parallelFor(blocks, 4, [&](int64_t first, int64_t last) {
        for (int64_t r = 0; r < rows; r += kRowsAtOnce) {
            const uint8_t* at = &a4[size_t(r * groups * 4)];
            int32_t* out = &sums[size_t(r * stride)];
            const int64_t count = std::min<int64_t>(kRowsAtOnce, rows - r);
#if defined(__x86_64__)
            if (hasVnni512()) {
                switch (count) {
                    case 1: blockSums<1>(at, b, first, last, out, stride); break;
                    case 2: blockSums<2>(at, b, first, last, out, stride); break;
                    case 3: blockSums<3>(at, b, first, last, out, stride); break;
                    default: blockSums<4>(at, b, first, last, out, stride); break;
                }
                continue;
            }
            if (int8GemvAvailable()) {  // AVX2
                for (int64_t q = 0; q < count; ++q) blockSumsAvx2(at + q * groups * 4, b, first, last, out + q * stride);
                continue;
            }
#endif
            const int64_t blockBytes = groups * kColumns * 4;
            for (int64_t q = 0; q < count; ++q)
                for (int64_t block = first; block < last; ++block)
                    for (int64_t c = 0; c < kColumns; ++c) {
                        int32_t s = 0;
                        for (int64_t k = 0; k < groups * 4; ++k)
                            s += int32_t(at[size_t(q * groups * 4 + k)]) *
                                 b.data[size_t(block * blockBytes + ((k / 4) * kColumns + c) * 4 + k % 4)];
                        out[q * stride + block * kColumns + c] = s;
                    }
        }
    });
    const int32_t both = int32_t(b.K) * aZero * b.zero;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t n = 0; n < b.N; ++n)
            y[r * b.N + n] = sums[size_t(r * stride + n)] - aZero * b.columnSums[size_t(n)] - b.zero * aSums[size_t(r)] + both;
}

}  // namespace fsc::cpu
