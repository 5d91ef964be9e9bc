#include "compiler/backends/cpu/qlinear_conv_vnni.h"

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

// A 1x1 layer's pixels: one tap, each pixel's K bytes one row of X.
template <int P>
struct RowTaps {
    const uint8_t* x;  // the tile's first pixel
    int64_t k;
    static constexpr int64_t count() { return 1; }
    [[gnu::always_inline]] void pointers(int64_t, const uint8_t* (&xp)[P]) const {
        for (int p = 0; p < P; ++p) xp[p] = x + p * k;
    }
};

// A window's taps: for tap (ky, kx), each pixel's C bytes at that tap of its window, or x_zero's
// row where the tap falls outside X.
template <int P>
struct WindowTaps {
    const VnniWindow& g;
    const uint8_t* x;
    const uint8_t* zeroRow;
    int64_t image[P], iy0[P], ix0[P];
    WindowTaps(const VnniWindow& geo, const uint8_t* in, const uint8_t* zeros, int64_t first)
        : g(geo), x(in), zeroRow(zeros) {
        for (int p = 0; p < P; ++p) {
            const int64_t pixel = first + p, perImage = g.oh * g.ow;
            image[p] = pixel / perImage;
            iy0[p] = (pixel % perImage) / g.ow * g.sh - g.ph;
            ix0[p] = pixel % g.ow * g.sw - g.pw;
        }
    }
    int64_t count() const { return g.kh * g.kw; }
    [[gnu::always_inline]] void pointers(int64_t tap, const uint8_t* (&xp)[P]) const {
        const int64_t ky = tap / g.kw, kx = tap % g.kw;
        for (int p = 0; p < P; ++p) {
            const int64_t iy = iy0[p] + ky * g.dh, ix = ix0[p] + kx * g.dw;
            xp[p] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? x + ((image[p] * g.h + iy) * g.w + ix) * g.c : zeroRow;
        }
    }
};

// Where a tile's sums go: requantized to bytes (Signed: int8) with each channel's offset and
// scale, the row of pixel p at y + p * m. A store reads a vector's per-channel terms once
// (column) and then takes each pixel's sums by value (put): with the tile's accumulator array
// handed over by reference instead, GCC kept it in memory inside the K loop.
template <bool Signed>
struct RequantizedStore {
    const ChannelTerms& t;
    int8_t* y;  // the tile's first pixel's output row
    struct Column {
        int64_t c0;
        __mmask16 mask;
        __m512i offset;
        __m512 scale;
        Requantize512 r;
    };
    RequantizedStore at(int64_t pixel) const { return {t, y + pixel * t.m}; }
    [[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] Column column(int64_t c0) const {
        const int64_t valid = std::min<int64_t>(16, t.m - c0);
        return {c0, valid >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << valid) - 1), _mm512_loadu_si512(t.offset + c0),
                _mm512_loadu_ps(t.scale + c0), requantize512<Signed>(t.yZero)};
    }
    [[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] void put(const Column& c, int p, __m512i sums) const {
        const __m128i bytes = requantized16<Signed>(c.r, _mm512_add_epi32(sums, c.offset), c.scale);
        _mm_mask_storeu_epi8(y + p * t.m + c.c0, c.mask, bytes);
    }
};

// Or as float: float(sum + offset) x scale + bias, a multiply and then an add (no fused
// multiply-add), as the Cast, Mul and Add that MatMulIntegerToFloat stands for round them.
struct FloatStore {
    const ChannelTerms& t;
    const float* bias;  // padded to whole blocks, zeros where there is none
    float* y;
    struct Column {
        int64_t c0;
        __mmask16 mask;
        __m512i offset;
        __m512 scale, bias;
    };
    FloatStore at(int64_t pixel) const { return {t, bias, y + pixel * t.m}; }
    [[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] Column column(int64_t c0) const {
        const int64_t valid = std::min<int64_t>(16, t.m - c0);
        return {c0, valid >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << valid) - 1), _mm512_loadu_si512(t.offset + c0),
                _mm512_loadu_ps(t.scale + c0), _mm512_loadu_ps(bias + c0)};
    }
    [[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] void put(const Column& c, int p, __m512i sums) const {
        const __m512 scaled = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sums, c.offset)), c.scale);
        _mm512_mask_storeu_ps(y + p * t.m + c.c0, c.mask, _mm512_add_ps(scaled, c.bias));
    }
};

// P pixels by V vectors of 16 channels, from vector `v0` on; sums over all of K (the taps'
// channels in turn, `perTap` bytes each) in registers, then handed to `out`.
template <int P, int V, typename Taps, typename Store>
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] inline void tile(const Taps& taps, int64_t perTap,
                                                                        const int32_t* packed, int64_t groups,
                                                                        int64_t v0, const Store& out) {
    const int64_t groupsPerTap = perTap / 4;
    __m512i acc[P][V];
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[p][v] = _mm512_setzero_si512();
    for (int64_t tap = 0; tap < taps.count(); ++tap) {
        const uint8_t* xp[P];
        taps.pointers(tap, xp);
        const int32_t* w = packed + (v0 * groups + tap * groupsPerTap) * 16;
        for (int64_t g = 0; g < groupsPerTap; ++g) {
            __m512i b[V];
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) b[v] = _mm512_loadu_si512(w + (v * groups + g) * 16);
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p) {
                int32_t quad;
                std::memcpy(&quad, xp[p] + g * 4, 4);
                const __m512i a = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
                for (int v = 0; v < V; ++v) acc[p][v] = _mm512_dpbusd_epi32(acc[p][v], a, b[v]);
            }
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
        const auto column = out.column((v0 + v) * 16);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) out.put(column, p, acc[p][v]);
    }
}

// P pixels across vectors [v, end) of 16 channels: blocks of four vectors, then the rest.
template <int P, typename Store>
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] void pixels(const uint8_t* x, int64_t k,
                                                                   const int32_t* packed, int64_t v, int64_t end,
                                                                   const Store& out) {
    const RowTaps<P> taps{x, k};
    for (; v + 4 <= end; v += 4) tile<P, 4>(taps, k, packed, k / 4, v, out);
    switch (end - v) {
        case 3: tile<P, 3>(taps, k, packed, k / 4, v, out); break;
        case 2: tile<P, 2>(taps, k, packed, k / 4, v, out); break;
        case 1: tile<P, 1>(taps, k, packed, k / 4, v, out); break;
        default: break;
    }
}

template <typename Store>
void allPixels(const uint8_t* x, int64_t count, int64_t k, const int32_t* packed, int64_t v0, int64_t v1,
               const Store& out) {
    constexpr int kTile = 5;  // 5 x 4 sums, 4 weight vectors and a broadcast: 25 of 32 registers
    int64_t p = 0;
    for (; p + kTile <= count; p += kTile) pixels<kTile>(x + p * k, k, packed, v0, v1, out.at(p));
    for (; p < count; ++p) pixels<1>(x + p * k, k, packed, v0, v1, out.at(p));
}

// A window layer's pixels [first, first + count) for vectors [v, v + V): 5-pixel tiles.
template <bool Signed, int V>
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] void windowBlock(const VnniWindow& g, const uint8_t* x,
                                                                        const uint8_t* zeroRow, int64_t first,
                                                                        int64_t count, const int32_t* packed,
                                                                        int64_t groups, int64_t v,
                                                                        const ChannelTerms& t, int8_t* y) {
    constexpr int kTile = 5;
    int64_t p = first;
    for (; p + kTile <= first + count; p += kTile)
        tile<kTile, V>(WindowTaps<kTile>(g, x, zeroRow, p), g.c, packed, groups, v, RequantizedStore<Signed>{t, y}.at(p));
    for (; p < first + count; ++p)
        tile<1, V>(WindowTaps<1>(g, x, zeroRow, p), g.c, packed, groups, v, RequantizedStore<Signed>{t, y}.at(p));
}

// Blocks of four vectors outer, so that a block's weights stay in cache across the pixels
// (a 512-channel 3x3 layer's W is 2.3 MiB), pixels inner.
template <bool Signed>
void windowPixels(const VnniWindow& g, const uint8_t* x, const uint8_t* zeroRow, int64_t first, int64_t count,
                  const int32_t* packed, int64_t groups, int64_t v, int64_t end, const ChannelTerms& t, int8_t* y) {
    for (; v + 4 <= end; v += 4) windowBlock<Signed, 4>(g, x, zeroRow, first, count, packed, groups, v, t, y);
    switch (end - v) {
        case 3: windowBlock<Signed, 3>(g, x, zeroRow, first, count, packed, groups, v, t, y); break;
        case 2: windowBlock<Signed, 2>(g, x, zeroRow, first, count, packed, groups, v, t, y); break;
        case 1: windowBlock<Signed, 1>(g, x, zeroRow, first, count, packed, groups, v, t, y); break;
        default: break;
    }
}

}  // namespace
#pragma GCC diagnostic pop
#endif

namespace {

// Each channel's bias less x_zero times its weights' sum, and its scale, for blocks
// [firstBlock, lastBlock), padded to whole blocks.
struct TermsStorage {
    std::vector<int32_t> offset;
    std::vector<float> scale;
    TermsStorage(const VnniPointwiseWeights& w, const Requantization& rq, int32_t xZero, int64_t firstBlock,
                 int64_t lastBlock)
        : offset(size_t(vnniBlocks(w) * 16), 0), scale(size_t(vnniBlocks(w) * 16), 0.0f) {
        for (int64_t c = firstBlock * 16; c < std::min(w.m, lastBlock * 16); ++c) {
            offset[size_t(c)] = int32_t(uint32_t(rq.bias[size_t(c)]) - uint32_t(xZero) * uint32_t(w.sums[size_t(c)]));
            scale[size_t(c)] = rq.scale[size_t(c)];
        }
    }
};

}  // namespace

void vnniWindowConv(const uint8_t* x, const VnniWindow& g, int32_t xZero, const VnniPointwiseWeights& w,
                    const Requantization& rq, bool signedOut, void* y, int64_t firstPixel, int64_t count,
                    int64_t firstBlock, int64_t lastBlock) {
#if defined(__x86_64__)
    const TermsStorage terms(w, rq, xZero, firstBlock, lastBlock);
    const ChannelTerms t{terms.offset.data(), terms.scale.data(), rq.yZero, w.m};
    const std::vector<uint8_t> zeroRow(size_t(g.c), uint8_t(xZero));
    auto* out = static_cast<int8_t*>(y);
    if (signedOut)
        windowPixels<true>(g, x, zeroRow.data(), firstPixel, count, w.packed.data(), w.k / 4, firstBlock, lastBlock, t, out);
    else
        windowPixels<false>(g, x, zeroRow.data(), firstPixel, count, w.packed.data(), w.k / 4, firstBlock, lastBlock, t, out);
#else
    (void)x, (void)g, (void)xZero, (void)w, (void)rq, (void)signedOut, (void)y, (void)firstPixel, (void)count,
        (void)firstBlock, (void)lastBlock;
#endif
}

void vnniPointwise(const uint8_t* x, int64_t count, int32_t xZero, const VnniPointwiseWeights& w,
                   const Requantization& rq, bool signedOut, void* y) {
    vnniPointwiseBlocks(x, count, xZero, w, rq, signedOut, y, 0, vnniBlocks(w));
}

void vnniPointwiseBlocks(const uint8_t* x, int64_t count, int32_t xZero, const VnniPointwiseWeights& w,
                         const Requantization& rq, bool signedOut, void* y, int64_t firstBlock, int64_t lastBlock) {
#if defined(__x86_64__)
    const TermsStorage terms(w, rq, xZero, firstBlock, lastBlock);
    const ChannelTerms t{terms.offset.data(), terms.scale.data(), rq.yZero, w.m};
    auto* out = static_cast<int8_t*>(y);
    if (signedOut) allPixels(x, count, w.k, w.packed.data(), firstBlock, lastBlock, RequantizedStore<true>{t, out});
    else allPixels(x, count, w.k, w.packed.data(), firstBlock, lastBlock, RequantizedStore<false>{t, out});
#else
    (void)x, (void)count, (void)xZero, (void)w, (void)rq, (void)signedOut, (void)y, (void)firstBlock, (void)lastBlock;
#endif
}

VnniFloatTerms vnniFloatTerms(const VnniPointwiseWeights& w, int32_t xZero, const float* scale, const float* bias) {
    VnniFloatTerms terms;
    const size_t padded = size_t(vnniBlocks(w) * 16);
    terms.offset.assign(padded, 0);
    terms.scale.assign(padded, 0.0f);
    terms.bias.assign(padded, 0.0f);
    for (int64_t c = 0; c < w.m; ++c) {
        terms.offset[size_t(c)] = int32_t(0u - uint32_t(xZero) * uint32_t(w.sums[size_t(c)]));
        terms.scale[size_t(c)] = scale[c];
        if (bias) terms.bias[size_t(c)] = bias[c];
    }
    return terms;
}

void vnniRowsToFloat(const uint8_t* x, int64_t rows, const VnniPointwiseWeights& w, const VnniFloatTerms& terms,
                     float* y, int64_t firstBlock, int64_t lastBlock) {
#if defined(__x86_64__)
    const ChannelTerms t{terms.offset.data(), terms.scale.data(), 0.0f, w.m};
    allPixels(x, rows, w.k, w.packed.data(), firstBlock, lastBlock, FloatStore{t, terms.bias.data(), y});
#else
    (void)x, (void)rows, (void)w, (void)terms, (void)y, (void)firstBlock, (void)lastBlock;
#endif
}

}  // namespace fsc::cpu
