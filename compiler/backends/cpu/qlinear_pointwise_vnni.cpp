#include "compiler/backends/cpu/qlinear_pointwise_vnni.h"

#include <algorithm>
#include <cstring>

#include "compiler/backends/cpu/requantize.h"
#include "compiler/backends/cpu/requantize_avx512.h"


namespace fsc::cpu {

bool vnniPointwiseAvailable() {
#if defined(__x86_64__)
    static const bool available = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    return available;
#else
    return false;
#endif
}

VnniPointwiseWeights packVnniPointwise(const int8_t* w, int64_t m, int64_t k) {
    VnniPointwiseWeights out;
    out.m = m;
    out.k = k;
    const int64_t blocks = (m + 15) / 16, groups = k / 4;
    out.packed.assign(size_t(blocks * groups * 16), 0);
    out.sums.assign(size_t(blocks * 16), 0);
    for (int64_t oc = 0; oc < m; ++oc) {
        int32_t sum = 0;
        for (int64_t g = 0; g < groups; ++g) {
            uint32_t lane = 0;
            for (int b = 0; b < 4; ++b) {
                const int8_t v = w[oc * k + g * 4 + b];
                lane |= uint32_t(uint8_t(v)) << (8 * b);
                sum += v;
            }
            out.packed[size_t(((oc / 16) * groups + g) * 16 + oc % 16)] = int32_t(lane);
        }
        out.sums[size_t(oc)] = sum;
    }
    return out;
}

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass an undefined merge source, which its own
// -Wmaybe-uninitialized (or -Wuninitialized) then reports at every inlined call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
namespace {

// What a tile's requantization reads per channel: the int32 added to each sum (the bias less
// x_zero times the weights' sum), the scale, padded to whole blocks.
struct ChannelTerms {
    const int32_t* offset;
    const float* scale;
    float yZero;
    int64_t m;  // channels with outputs (the last block's lanes past it are not stored)
};

// P pixels by V vectors of 16 channels, from vector `v0` on; sums over all of K in registers.
template <int P, int V, bool Signed>
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] inline void tile(const uint8_t* x, int64_t k,
                                                                        const int32_t* packed, int64_t v0,
                                                                        const ChannelTerms& t, int8_t* y) {
    const int64_t groups = k / 4;
    __m512i acc[P][V];
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[p][v] = _mm512_setzero_si512();
    for (int64_t g = 0; g < groups; ++g) {
        __m512i b[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) b[v] = _mm512_loadu_si512(packed + ((v0 + v) * groups + g) * 16);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
            int32_t quad;
            std::memcpy(&quad, x + p * k + g * 4, 4);
            const __m512i a = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[p][v] = _mm512_dpbusd_epi32(acc[p][v], a, b[v]);
        }
    }
    const Requantize512 r = requantize512<Signed>(t.yZero);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
        const int64_t c0 = (v0 + v) * 16;
        const int64_t valid = std::min<int64_t>(16, t.m - c0);
        const __mmask16 mask = valid >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << valid) - 1);
        const __m512i offset = _mm512_loadu_si512(t.offset + c0);
        const __m512 scale = _mm512_loadu_ps(t.scale + c0);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
            const __m128i bytes = requantized16<Signed>(r, _mm512_add_epi32(acc[p][v], offset), scale);
            _mm_mask_storeu_epi8(y + p * t.m + c0, mask, bytes);
        }
    }
}

// P pixels across vectors [v, end) of 16 channels: blocks of four vectors, then the rest.
template <int P, bool Signed>
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] void pixels(const uint8_t* x, int64_t k,
                                                                   const int32_t* packed, int64_t v, int64_t end,
                                                                   const ChannelTerms& t, int8_t* y) {
    for (; v + 4 <= end; v += 4) tile<P, 4, Signed>(x, k, packed, v, t, y);
    switch (end - v) {
        case 3: tile<P, 3, Signed>(x, k, packed, v, t, y); break;
        case 2: tile<P, 2, Signed>(x, k, packed, v, t, y); break;
        case 1: tile<P, 1, Signed>(x, k, packed, v, t, y); break;
        default: break;
    }
}

template <bool Signed>
void allPixels(const uint8_t* x, int64_t count, int64_t k, const int32_t* packed, int64_t v0, int64_t v1,
               const ChannelTerms& t, int8_t* y) {
    constexpr int kTile = 5;  // 5 x 4 sums, 4 weight vectors and a broadcast: 25 of 32 registers
    int64_t p = 0;
    for (; p + kTile <= count; p += kTile) pixels<kTile, Signed>(x + p * k, k, packed, v0, v1, t, y + p * t.m);
    for (; p < count; ++p) pixels<1, Signed>(x + p * k, k, packed, v0, v1, t, y + p * t.m);
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void vnniPointwise(const uint8_t* x, int64_t count, int32_t xZero, const VnniPointwiseWeights& w,
                   const Requantization& rq, bool signedOut, void* y) {
    vnniPointwiseBlocks(x, count, xZero, w, rq, signedOut, y, 0, vnniBlocks(w));
}

void vnniPointwiseBlocks(const uint8_t* x, int64_t count, int32_t xZero, const VnniPointwiseWeights& w,
                         const Requantization& rq, bool signedOut, void* y, int64_t firstBlock, int64_t lastBlock) {
#if defined(__x86_64__)
    const int64_t vectors = vnniBlocks(w);
    std::vector<int32_t> offset(size_t(vectors * 16), 0);
    std::vector<float> scale(size_t(vectors * 16), 0.0f);
    for (int64_t c = firstBlock * 16; c < std::min(w.m, lastBlock * 16); ++c) {
        offset[size_t(c)] = int32_t(uint32_t(rq.bias[size_t(c)]) - uint32_t(xZero) * uint32_t(w.sums[size_t(c)]));
        scale[size_t(c)] = rq.scale[size_t(c)];
    }
    const ChannelTerms t{offset.data(), scale.data(), rq.yZero, w.m};
    if (signedOut) allPixels<true>(x, count, w.k, w.packed.data(), firstBlock, lastBlock, t, static_cast<int8_t*>(y));
    else allPixels<false>(x, count, w.k, w.packed.data(), firstBlock, lastBlock, t, static_cast<int8_t*>(y));
#else
    (void)x, (void)count, (void)xZero, (void)w, (void)rq, (void)signedOut, (void)y, (void)firstBlock, (void)lastBlock;
#endif
}

}  // namespace fsc::cpu
