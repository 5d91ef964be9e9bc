#include "compiler/backends/cpu/conv_nhwc.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "compiler/backends/cpu/gemv.h"
#include "compiler/backends/cpu/vec16.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {

namespace {

using vec16::kLanes;
using vec16::load;
using vec16::store;
using vec16::Vec16;
using vec16::Vec8;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// A tile's accumulators start at the bias (or 0) of their channels...
template <typename Vec, int P, int V>
[[gnu::always_inline]] inline void seed(Vec (&acc)[P][V], const DepthwiseEpilogue& ep, int64_t c0) {
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[p][v] = ep.bias ? load<Vec>(ep.bias + c0 + kLanes<Vec> * v) : Vec{};
}
// ... and are clamped and stored once, pixel p at out + p * c. The bounds are read into
// registers first: read from `ep` between the stores, which may alias it, they were read
// again for every vector (72 channels on 56 x 56 at one thread: 59 -> 71 us).
template <typename Vec, int P, int V>
[[gnu::always_inline]] inline void storeTile(const Vec (&acc)[P][V], float* out, int64_t c, int64_t c0,
                                             const DepthwiseEpilogue& ep) {
    const Vec lo = Vec{} + ep.lo, hi = Vec{} + ep.hi;
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
            Vec x = acc[p][v] < lo ? lo : acc[p][v];  // NaN stays NaN, as in PyTorch's relu and clamp
            store(out + p * c + c0 + kLanes<Vec> * v, x > hi ? hi : x);
        }
}

// P neighbouring output pixels by V vectors of channels from c0, every tap's product
// accumulated in registers and stored once. `clip` checks each column against the image
// (border pixels); interior tiles skip it.
template <typename Vec, int P, int V, bool Clip>
[[gnu::always_inline]] inline void tile(const NhwcWindow& s, const float* img, const float* w,
                                        const DepthwiseEpilogue& ep, float* out, int64_t oy, int64_t ox0, int64_t c0) {
    Vec acc[P][V];
    seed(acc, ep, c0);
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
        if (iy < 0 || iy >= s.ih) continue;
        const float* row = img + iy * s.iw * s.c + c0;
        for (int64_t kx = 0; kx < s.kw; ++kx) {
            const float* tap = w + (ky * s.kw + kx) * s.c + c0;
            Vec wv[V];
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) wv[v] = load<Vec>(tap + kLanes<Vec> * v);
#pragma GCC unroll 4
            for (int p = 0; p < P; ++p) {
                const int64_t ix = (ox0 + p) * s.sw - s.pw + kx * s.dw;
                if (Clip && (ix < 0 || ix >= s.iw)) continue;
                const float* in = row + ix * s.c;
#pragma GCC unroll 4
                for (int v = 0; v < V; ++v) acc[p][v] += load<Vec>(in + kLanes<Vec> * v) * wv[v];
            }
        }
    }
    storeTile(acc, out, s.c, c0, ep);
}

// The same tile at stride S (1 or 2) and no dilation with KW taps per kernel row: the row's
// (P - 1) S + KW input pixels are loaded once and each serves up to KW taps from registers,
// instead of every tap loading its own (EfficientNet's 5x5 layers: about half the loads;
// MobileNetV2's stride-2 3x3 layers: 9 loads a row where there were 12).
// With Clip, input columns outside the image read as zeros (the padding), so a tile that
// touches the border slides too: on a 7 x 7 map a 5x5 window has 3 interior columns, fewer
// than a tile, and every pixel went through the one-pixel, load-per-tap tile (mnasnet's
// 1152-channel 5x5 layers: 43 GFLOP/s).
template <typename Vec, int P, int V, int KW, int S, bool Clip = false>
[[gnu::always_inline]] inline void slidingTile(const NhwcWindow& s, const float* img, const float* w,
                                               const DepthwiseEpilogue& ep, float* out, int64_t oy, int64_t ox0, int64_t c0) {
    constexpr int kInputs = (P - 1) * S + KW;
    Vec acc[P][V];
    seed(acc, ep, c0);
    const int64_t ix0 = ox0 * S - s.pw;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
        if (iy < 0 || iy >= s.ih) continue;
        const float* row = img + iy * s.iw * s.c + c0;
        Vec in[kInputs][V];
#pragma GCC unroll 16
        for (int q = 0; q < kInputs; ++q) {
            const int64_t ix = ix0 + q;
            const bool inside = !Clip || (ix >= 0 && ix < s.iw);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) in[q][v] = inside ? load<Vec>(row + ix * s.c + kLanes<Vec> * v) : Vec{};
        }
#pragma GCC unroll 8
        for (int kx = 0; kx < KW; ++kx) {
            const float* tap = w + (ky * KW + kx) * s.c + c0;
            Vec wv[V];
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) wv[v] = load<Vec>(tap + kLanes<Vec> * v);
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
                for (int v = 0; v < V; ++v) acc[p][v] += in[p * S + kx][v] * wv[v];
        }
    }
    storeTile(acc, out, s.c, c0, ep);
}

// fn(pixel, tap) for each tap of output pixel (oy, ox) that falls inside the image: the
// pixel's index in the image and the tap's, ky * kw + kx. Callers mark fn always_inline, so
// its loop is built for their clone's vector width (not inlined, MaxPool's ran 0.14 -> 0.18 ms).
template <typename F>
[[gnu::always_inline]] inline void forEachTapInside(const NhwcWindow& s, int64_t oy, int64_t ox, F&& fn) {
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
        if (iy < 0 || iy >= s.ih) continue;
        for (int64_t kx = 0; kx < s.kw; ++kx) {
            const int64_t ix = ox * s.sw - s.pw + kx * s.dw;
            if (ix >= 0 && ix < s.iw) fn(iy * s.iw + ix, ky * s.kw + kx);
        }
    }
}

// The channels past the last multiple of 16, one at a time.
inline void tailChannels(const NhwcWindow& s, const float* img, const float* w, const DepthwiseEpilogue& ep, float* out,
                         int64_t oy, int64_t ox, int64_t c0, int64_t cEnd) {
    for (int64_t ch = c0; ch < cEnd; ++ch) {
        float acc = ep.bias ? ep.bias[ch] : 0.f;
        forEachTapInside(s, oy, ox, [&](int64_t pixel, int64_t tap) __attribute__((always_inline)) {
            acc += img[pixel * s.c + ch] * w[tap * s.c + ch];
        });
        acc = acc < ep.lo ? ep.lo : acc;
        out[ch] = acc > ep.hi ? ep.hi : acc;
    }
}

// A tile of a 5-wide window at stride 1 or 2. At stride 2 a row's 11 input pixels by two
// vectors would not fit AVX-512's registers beside the accumulators: one vector at a time.
template <typename Vec, int P, int V, bool Clip>
[[gnu::always_inline]] inline void fiveWide(const NhwcWindow& s, const float* img, const float* w, const DepthwiseEpilogue& ep,
                                            float* out, int64_t oy, int64_t ox0, int64_t c0) {
    if (s.sw == 1) {
        slidingTile<Vec, P, V, 5, 1, Clip>(s, img, w, ep, out, oy, ox0, c0);
        return;
    }
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) slidingTile<Vec, P, 1, 5, 2, Clip>(s, img, w, ep, out, oy, ox0, c0 + kLanes<Vec> * v);
}

// How a target tiles an output row: P neighbouring pixels a tile, channels 16 MaxV at a
// time at most, and whether windows slide (stride-1 3x3 and 5x5, stride-2 3x3: loading the
// row's (P - 1) S + KW input pixels once for all KW taps, which needs that many more registers).
template <typename V, int P, int MaxV, bool Slide>
struct RowTiling {
    using Vec = V;
    static constexpr int kPixels = P, kMaxVectors = MaxV;
    static constexpr bool kSlides = Slide;
};

// The output row's pixels for the V vectors of channels from c0: interior pixels a tile at
// a time, the borders one at a time.
template <typename T, int V>
[[gnu::always_inline]] inline void rowSweep(const NhwcWindow& s, const float* img, const float* w, const DepthwiseEpilogue& ep,
                                            float* out, int64_t oy, int64_t c0, int64_t lo, int64_t hi,
                                            int kernelWidth) {
    using Vec = typename T::Vec;
    constexpr int P = T::kPixels;
    if (T::kSlides && (kernelWidth == 5 || kernelWidth == 7) && s.ow >= P) {
        // 5x5 and 7x7 windows: every tile slides, those at the borders reading zeros outside
        // the image (on a 7 x 7 map borders are most of the row); the last overlaps the one
        // before it (its pixels computed twice, stored alike) rather than leaving a remainder.
        for (int64_t ox = 0; ox < s.ow; ox += P) {
            const int64_t at = std::min(ox, s.ow - P);
            float* o = out + at * s.c;
            const bool inside = at >= lo && at + P <= hi;
            if (kernelWidth == 7) {  // ConvNeXt's depthwise layers (stride 1 only)
                if (inside) slidingTile<Vec, P, V, 7, 1, false>(s, img, w, ep, o, oy, at, c0);
                else slidingTile<Vec, P, V, 7, 1, true>(s, img, w, ep, o, oy, at, c0);
            } else if (inside) {
                fiveWide<Vec, P, V, false>(s, img, w, ep, o, oy, at, c0);
            } else {
                fiveWide<Vec, P, V, true>(s, img, w, ep, o, oy, at, c0);
            }
        }
        return;
    }
    for (int64_t ox = 0; ox < lo; ++ox) tile<Vec, 1, V, true>(s, img, w, ep, out + ox * s.c, oy, ox, c0);
    int64_t ox = lo;
    for (; ox + P <= hi; ox += P) {
        float* o = out + ox * s.c;
        if (T::kSlides && kernelWidth == 3 && s.sw == 1) slidingTile<Vec, P, V, 3, 1>(s, img, w, ep, o, oy, ox, c0);
        else if (T::kSlides && kernelWidth == 3) slidingTile<Vec, P, V, 3, 2>(s, img, w, ep, o, oy, ox, c0);
        else tile<Vec, P, V, false>(s, img, w, ep, o, oy, ox, c0);
    }
    for (; ox < hi; ++ox) tile<Vec, 1, V, false>(s, img, w, ep, out + ox * s.c, oy, ox, c0);
    for (ox = hi; ox < s.ow; ++ox) tile<Vec, 1, V, true>(s, img, w, ep, out + ox * s.c, oy, ox, c0);
}

// A row of sliding windows, tile-major: each tile of P pixels takes every vector of channels
// in turn, the last one overlapping the one before when cEnd is not a multiple of the vector
// (recomputed alike, before any activation). One vector leaves room for eight pixels, so a
// row's input pixels are loaded once for eight outputs' taps instead of four, and the tile's
// input lines are all used before the next tile's are loaded. Against sweeping the whole row
// 32 channels at a time (the loop below), at one thread: mnasnet's 72-channel 56 x 56 layer
// 76 -> 58 us, its 48-channel stride-2 layer on 112 x 112 108 -> 90 us, a 96-channel 7x7
// layer on 56 x 56 270 -> 232 us.
template <typename Vec, int P, int K, int S, bool Clip>
[[gnu::always_inline]] inline void squareTile(const NhwcWindow& s, const float* const (&rows)[K], const float* w,
                                              const DepthwiseEpilogue& ep, float* out, int64_t ox0, int64_t c0) {
    constexpr int kInputs = (P - 1) * S + K;
    Vec acc[P][1];
    seed(acc, ep, c0);
    const int64_t ix0 = ox0 * S - s.pw;
#pragma GCC unroll 13
    for (int ky = 0; ky < K; ++ky) {
        if (!rows[ky]) continue;  // above or below the image
        const float* row = rows[ky] + c0;
        Vec in[kInputs];
#pragma GCC unroll 32
        for (int q = 0; q < kInputs; ++q) {
            const int64_t ix = ix0 + q;
            in[q] = !Clip || (ix >= 0 && ix < s.iw) ? load<Vec>(row + ix * s.c) : Vec{};
        }
#pragma GCC unroll 13
        for (int kx = 0; kx < K; ++kx) {
            const Vec wv = load<Vec>(w + (ky * K + kx) * s.c + c0);
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p) acc[p][0] += in[p * S + kx] * wv;
        }
    }
    storeTile(acc, out, s.c, c0, ep);
}

template <typename Vec, int P, int K, int S>
[[gnu::always_inline]] inline void slidingRow(const NhwcWindow& s, const float* img, const float* w, const DepthwiseEpilogue& ep,
                                              float* out, int64_t oy, int64_t cEnd, int64_t lo, int64_t hi) {
    constexpr int64_t L = kLanes<Vec>;
    const float* rows[K];
    for (int ky = 0; ky < K; ++ky) {
        const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
        rows[ky] = iy >= 0 && iy < s.ih ? img + iy * s.iw * s.c : nullptr;
    }
    for (int64_t ox = 0; ox < s.ow; ox += P) {
        const int64_t at = std::min(ox, s.ow - P);  // the last tile overlaps the one before
        const bool inside = at >= lo && at + P <= hi;
        float* o = out + at * s.c;
        for (int64_t c0 = 0; c0 < cEnd; c0 += L) {
            const int64_t cb = std::min(c0, cEnd - L);
            if (inside) squareTile<Vec, P, K, S, false>(s, rows, w, ep, o, at, cb);
            else squareTile<Vec, P, K, S, true>(s, rows, w, ep, o, at, cb);
        }
    }
}

// slidingRow for this window: eight pixels a tile at stride 1 on rows that wide, else four.
// False where it does not apply (no sliding window, fewer channels than a vector, rows
// narrower than a tile).
template <typename Vec>
[[gnu::always_inline]] inline bool slidingRowFor(const NhwcWindow& s, const float* img, const float* w, const DepthwiseEpilogue& ep,
                                                 float* out, int64_t oy, int64_t cEnd, int64_t lo, int64_t hi,
                                                 int kernelWidth) {
    if (kernelWidth == 0 || s.kh != s.kw || cEnd < kLanes<Vec> || s.ow < 4) return false;
    const bool eight = s.sw == 1 && s.ow >= 8;
    if (kernelWidth == 3 && eight) slidingRow<Vec, 8, 3, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 3 && s.sw == 1) slidingRow<Vec, 4, 3, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 3) slidingRow<Vec, 4, 3, 2>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 5 && eight) slidingRow<Vec, 8, 5, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 5 && s.sw == 1) slidingRow<Vec, 4, 5, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 5) slidingRow<Vec, 4, 5, 2>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 7 && eight) slidingRow<Vec, 8, 7, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 7) slidingRow<Vec, 4, 7, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    // Large kernels at stride 1 (ConvMixer's 9 x 9, RepLKNet-style 11 and 13): eight pixels
    // take 7 + K inputs, 8 accumulators and a tap, at most 29 of the 32 registers.
    else if (kernelWidth == 9 && eight) slidingRow<Vec, 8, 9, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 11 && eight) slidingRow<Vec, 8, 11, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else if (kernelWidth == 13 && eight) slidingRow<Vec, 8, 13, 1>(s, img, w, ep, out, oy, cEnd, lo, hi);
    else return false;
    return true;
}

// One output row of one image, channels [0, cEnd) of the s.c each pixel holds: MaxV vectors
// of channels at a time across the whole row (so the input rows' slices and the taps it reads
// stay in L1 from one tile to the next), then one vector, then the channels past the last
// vector one by one.
template <typename T>
[[gnu::always_inline]] inline void depthwiseRowWith(const NhwcWindow& s, const float* img, const float* w,
                                                    const DepthwiseEpilogue& ep, float* out, int64_t oy, int64_t cEnd) {
    // Interior columns: every tap inside the image.
    const int64_t lo = std::min(s.ow, (s.pw + s.sw - 1) / s.sw);
    const int64_t lastIn = s.iw - 1 - (s.kw - 1) * s.dw + s.pw;  // the largest ox * sw allowed
    const int64_t hi = std::max(lo, std::min(s.ow, lastIn >= 0 ? lastIn / s.sw + 1 : 0));
    // Windows that slide: 3x3 and 5x5 at stride 1 and 2, 7x7 to 13x13 at stride 1, without dilation.
    const bool slides = s.dw == 1 && (((s.sw == 1 || s.sw == 2) && (s.kw == 3 || s.kw == 5)) ||
                                      (s.sw == 1 && (s.kw == 7 || s.kw == 9 || s.kw == 11 || s.kw == 13)));
    const int kernelWidth = slides ? int(s.kw) : 0;
    if constexpr (T::kSlides)
        if (slidingRowFor<typename T::Vec>(s, img, w, ep, out, oy, cEnd, lo, hi, kernelWidth)) return;
    constexpr int64_t L = kLanes<typename T::Vec>, MaxV = T::kMaxVectors;
    int64_t c0 = 0;
    if constexpr (MaxV > 1)
        for (; c0 + L * MaxV <= cEnd; c0 += L * MaxV) rowSweep<T, MaxV>(s, img, w, ep, out, oy, c0, lo, hi, kernelWidth);
    for (; c0 + L <= cEnd; c0 += L) rowSweep<T, 1>(s, img, w, ep, out, oy, c0, lo, hi, kernelWidth);
    if (c0 == cEnd) return;
    // The channels past the last whole vector: one more vector ending at cEnd, overlapping
    // channels already done (recomputed alike, before any activation). Copying them into a
    // zero-padded image instead cost as much as all the other channels (mnasnet's 72-channel
    // 56 x 56 layer: 152 us at one thread against 77 for 64 channels) and kept two threads
    // waiting on one thread's copies.
    if (cEnd >= L)
        rowSweep<T, 1>(s, img, w, ep, out, oy, cEnd - L, lo, hi, kernelWidth);
    else
        for (int64_t ox = 0; ox < s.ow; ++ox) tailChannels(s, img, w, ep, out + ox * s.c, oy, ox, c0, cEnd);
}

// AVX-512's 32 registers hold four pixels by 32 channels and the inputs they share. AVX2
// has 16 registers of half the width: four pixels by 16 channels is 8 of them, and sliding
// would spill (EfficientNet-B0 at 1 thread on a Zen 3 VM, --profile: 26.5 -> 20.0 ms with
// these tiles of 8-float vectors and FMA, against the AVX-512 tiles built for AVX2, whose
// 16-float halves GCC kept on the stack).
using DepthwiseRowFn = void (*)(const NhwcWindow&, const float*, const float*, const DepthwiseEpilogue&, float*,
                                 int64_t, int64_t);
[[gnu::target("avx512f")]] void depthwiseRowAvx512(const NhwcWindow& s, const float* img, const float* w,
                                                   const DepthwiseEpilogue& ep, float* out, int64_t oy, int64_t cEnd) {
    depthwiseRowWith<RowTiling<Vec16, 4, 2, true>>(s, img, w, ep, out, oy, cEnd);
}
[[gnu::target("avx2,fma")]] void depthwiseRowAvx2(const NhwcWindow& s, const float* img, const float* w,
                                                  const DepthwiseEpilogue& ep, float* out, int64_t oy, int64_t cEnd) {
    depthwiseRowWith<RowTiling<Vec8, 4, 2, false>>(s, img, w, ep, out, oy, cEnd);
}
void depthwiseRowBaseline(const NhwcWindow& s, const float* img, const float* w, const DepthwiseEpilogue& ep, float* out,
                          int64_t oy, int64_t cEnd) {
    depthwiseRowWith<RowTiling<Vec16, 1, 1, false>>(s, img, w, ep, out, oy, cEnd);
}

DepthwiseRowFn depthwiseRowForThisCpu() {
    static const DepthwiseRowFn chosen = vec16::forThisCpu<DepthwiseRowFn>(depthwiseRowAvx512, depthwiseRowAvx2,
                                                                           depthwiseRowBaseline);
    return chosen;
}
#pragma GCC diagnostic pop

template <typename E>
void permute(const E* src, E* dst, int64_t n, int64_t a, int64_t b, int64_t c) {
    // [n, a, b, c] -> [n, c, a, b]
    for (int64_t i = 0; i < n; ++i) {
        const E* s = src + i * a * b * c;
        E* d = dst + i * a * b * c;
        for (int64_t ab = 0; ab < a * b; ++ab)
            for (int64_t k = 0; k < c; ++k) d[k * a * b + ab] = s[ab * c + k];
    }
}

template <typename E>
void unpermute(const E* src, E* dst, int64_t n, int64_t c, int64_t a, int64_t b) {
    // [n, c, a, b] -> [n, a, b, c]
    for (int64_t i = 0; i < n; ++i) {
        const E* s = src + i * a * b * c;
        E* d = dst + i * a * b * c;
        for (int64_t k = 0; k < c; ++k)
            for (int64_t ab = 0; ab < a * b; ++ab) d[ab * c + k] = s[k * a * b + ab];
    }
}

template <template <typename> class F, typename... Args>
void bySize(int bytes, Args... args) {
    if (bytes == 1) F<uint8_t>::run(args...);
    else if (bytes == 2) F<uint16_t>::run(args...);
    else if (bytes == 8) F<uint64_t>::run(args...);
    else F<uint32_t>::run(args...);
}

template <typename E>
struct ToNchw {
    static void run(const void* s, void* d, int64_t n, int64_t h, int64_t w, int64_t c) {
        permute(static_cast<const E*>(s), static_cast<E*>(d), n, h, w, c);
    }
};
template <typename E>
struct ToNhwc {
    static void run(const void* s, void* d, int64_t n, int64_t c, int64_t h, int64_t w) {
        unpermute(static_cast<const E*>(s), static_cast<E*>(d), n, c, h, w);
    }
};

}  // namespace

// B channels from ch summed over the pixels in registers, in pixel order.
template <int B>
[[gnu::always_inline]] inline void sumChannelBlock(const float* __restrict row, int64_t pixels, int64_t c, int64_t ch,
                                                   float* __restrict sums) {
    float acc[B] = {};
    for (int64_t p = 0; p < pixels; ++p)
#pragma GCC unroll 64
        for (int j = 0; j < B; ++j) acc[j] += row[p * c + ch + j];
#pragma GCC unroll 64
    for (int j = 0; j < B; ++j) sums[ch + j] = acc[j];
}

// sums[ch] = the sum over `pixels` NHWC pixels of channel ch, a block of channels at a time
// held in registers across the pixels. Summed in place in `sums`, every pixel went through
// memory: EfficientNet-B0's 32-channel 112 x 112 layer spent 0.12 ms here on a Zen 4 VM.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] static void sumPixels(const float* row, int64_t pixels, int64_t c,
                                                                           float* sums) {
    int64_t ch = 0;
    for (; ch + 32 <= c; ch += 32) sumChannelBlock<32>(row, pixels, c, ch, sums);
    for (; ch + 8 <= c; ch += 8) sumChannelBlock<8>(row, pixels, c, ch, sums);
    for (; ch < c; ++ch) sumChannelBlock<1>(row, pixels, c, ch, sums);
}

// An image of fewer than 16 channels, copied into pixels of 16 channels padded with zeros,
// so it runs as one vector instead of one channel at a time (wider images end with an
// overlapping vector instead: depthwiseRowWith).
struct PaddedTail {
    static constexpr int64_t kWidth = 16;
    int64_t first = 0;  // the first channel copied
    NhwcWindow s{};
    std::vector<float> x, w, bias, y;  // y: the padded output rows, [n * oh, ow, 16]

    PaddedTail(ThreadPool& pool, const NhwcWindow& whole, const float* xs, const float* ws,
               const float* bs)
        : first(whole.c >= kWidth ? whole.c : 0), s(whole) {
        if (first == whole.c) return;
        const int64_t count = whole.c - first, pixels = whole.n * whole.ih * whole.iw, taps = whole.kh * whole.kw;
        s.c = kWidth;
        x.assign(size_t(pixels * kWidth), 0.f);
        w.assign(size_t(taps * kWidth), 0.f);
        bias.assign(size_t(kWidth), 0.f);
        y.resize(size_t(whole.n * whole.oh * whole.ow * kWidth));
        pool.parallelFor(pixels, 4096, [&](int64_t b, int64_t e) {
            for (int64_t p = b; p < e; ++p) std::memcpy(&x[size_t(p * kWidth)], xs + p * whole.c + first, size_t(count) * 4);
        });
        for (int64_t t = 0; t < taps; ++t) std::memcpy(&w[size_t(t * kWidth)], ws + t * whole.c + first, size_t(count) * 4);
        if (bs) std::memcpy(bias.data(), bs + first, size_t(count) * 4);
    }
    bool empty() const { return x.empty(); }
    // Output row r of the padded channels, computed and copied into the whole row `out`.
    void row(DepthwiseRowFn depthwiseRow, int64_t r, int64_t wholeC, const DepthwiseEpilogue& clamp, float* out) {
        const int64_t img = r / s.oh, oy = r % s.oh, count = wholeC - first;
        float* padded = &y[size_t(r * s.ow * kWidth)];
        depthwiseRow(s, &x[size_t(img * s.ih * s.iw * kWidth)], w.data(), {bias.data(), clamp.lo, clamp.hi}, padded, oy,
                     kWidth);
        for (int64_t ox = 0; ox < s.ow; ++ox)
            std::memcpy(out + ox * wholeC + first, padded + ox * kWidth, size_t(count) * 4);
    }
};

void depthwiseNhwc(ThreadPool& pool, const NhwcWindow& s, const float* x, const float* w, const float* bias,
                   float* y, const Activation& act, float* rowSums) {
    // 64k multiply-adds a chunk: MobileNetV2's 7x7x960 layers (7 rows of 60k) ran on one
    // thread at 256k, 0.017 ms; on two, 0.011 ms.
    const int64_t rowWork = std::max<int64_t>(1, s.ow * s.c * s.kh * s.kw);
    const DepthwiseRowFn depthwiseRow = depthwiseRowForThisCpu();
    PaddedTail tail(pool, s, x, w, bias);
    // Relu and Clip are applied to the sums in registers; other activations after each row.
    DepthwiseEpilogue ep{bias};
    const bool clamps = act.kind == Activation::Kind::None || act.kind == Activation::Kind::Relu ||
                        act.kind == Activation::Kind::Clip;
    if (act.kind == Activation::Kind::Relu) ep.lo = 0.f;
    if (act.kind == Activation::Kind::Clip) ep = {bias, act.a, act.b};
    // On one thread, rows from the last to the first: the layer before (oneDNN's, first row
    // to last) left its last rows in the core's cache, and the first rows written here are
    // the last left in it for the layer after. Over tensors larger than the cache, walking
    // forward found every row gone (mnasnet1_0 at one thread: its 112 x 112 depthwise layer
    // 174 -> 153 us, the pointwise layer after it 163 -> 139 us). Split across threads,
    // walking each share backward measured slower (that depthwise layer at two threads
    // 106 -> 118 us): oneDNN need not split the layers around it by rows.
    const bool backward = pool.size() == 1;
    pool.parallelFor(s.n * s.oh, std::max<int64_t>(1, 65536 / rowWork), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            const int64_t r = backward ? b + e - 1 - i : i;
            const int64_t img = r / s.oh, oy = r % s.oh;
            float* out = y + r * s.ow * s.c;
            depthwiseRow(s, x + img * s.ih * s.iw * s.c, w, ep, out, oy, tail.first);
            if (!tail.empty()) tail.row(depthwiseRow, r, s.c, ep, out);
            if (!clamps) act.apply(out, s.ow * s.c);  // while the row is in cache
            if (rowSums) sumPixels(out, s.ow, s.c, rowSums + r * s.c);
        }
    });
}

// Row by row of the transposed weights: each input value scales a contiguous row into the
// outputs, which stay in cache.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] static void axpyRows(const float* x, const float* wT, float* y,
                                                                          int64_t c, int64_t m, int64_t j0, int64_t j1) {
    for (int64_t k = 0; k < c; ++k) {
        const float v = x[k];
        const float* row = wT + k * m;
        for (int64_t j = j0; j < j1; ++j) y[j] += v * row[j];
    }
}

void pointwiseDots(ThreadPool& pool, const float* x, const float* wT, const float* bias, float* y, int64_t pixels,
                   int64_t c, int64_t m, const Activation& act) {
    if (pixels == 1) {  // a squeeze-excite layer: one row times the weights, streamed row by row
        gemvRowMajor(c, m, 1.f, x, 1, wT, m, 0.f, y);
        return biasActivationRows(pool, y, 1, m, bias, act);
    }
    pool.parallelFor(m, std::max<int64_t>(16, 65536 / std::max<int64_t>(1, c * pixels)), [&](int64_t j0, int64_t j1) {
        for (int64_t p = 0; p < pixels; ++p) {
            float* out = y + p * m;
            for (int64_t j = j0; j < j1; ++j) out[j] = bias ? bias[j] : 0.f;
            axpyRows(x + p * c, wT, out, c, m, j0, j1);
            act.apply(out + j0, j1 - j0);
        }
    });
}

void biasActivationRows(ThreadPool& pool, float* y, int64_t rows, int64_t m, const float* bias, const Activation& act) {
    if (!bias && act.kind == Activation::Kind::None) return;
    pool.parallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(m, 1)), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            float* row = y + r * m;
            if (bias)
                for (int64_t j = 0; j < m; ++j) row[j] += bias[j];
            act.apply(row, m);
        }
    });
}

// One output row of MaxPool on NHWC: each pixel the lane-wise maximum over its window's
// pixels inside the image, seeded by the first of them as the NCHW kernel is.
template <typename T>
static inline void maxPoolRow(const NhwcWindow& s, const T* image, T* row, int64_t oy) {
    for (int64_t ox = 0; ox < s.ow; ++ox) {
        T* __restrict out = row + ox * s.c;
        bool seeded = false;
        forEachTapInside(s, oy, ox, [&](int64_t pixel, int64_t) __attribute__((always_inline)) {
            const T* __restrict in = image + pixel * s.c;
            if (!seeded)
                std::memcpy(out, in, size_t(s.c) * sizeof(T));
            else
                for (int64_t ch = 0; ch < s.c; ++ch) out[ch] = in[ch] > out[ch] ? in[ch] : out[ch];
            seeded = true;
        });
        if (!seeded)
            std::fill(out, out + s.c,
                      std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest());
    }
}

namespace {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// float: each pixel's channels a block of up to four vectors at a time, its maximum kept in
// registers across the window (the loop above reads and writes the output pixel once per
// tap: squeezenet1_1's first 3x3 pool on 111 x 111 x 64 took 166 us at one thread). The
// channels past the last vector are one more vector overlapping those before (max again
// of the same values), under one vector the loop above.
template <typename Vec, int V>
[[gnu::always_inline]] inline void maxPoolBlock(const NhwcWindow& s, const float* image, float* out,
                                                int64_t oy, int64_t ox, int64_t c0) {
    constexpr int L = kLanes<Vec>;
    Vec acc[V];
    bool seeded = false;
    // The taps as forEachTapInside walks them, written out: a lambda would not take this
    // clone's target, and its vectors would go through memory.
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
        if (iy < 0 || iy >= s.ih) continue;
        for (int64_t kx = 0; kx < s.kw; ++kx) {
            const int64_t ix = ox * s.sw - s.pw + kx * s.dw;
            if (ix < 0 || ix >= s.iw) continue;
            const float* in = image + (iy * s.iw + ix) * s.c + c0;
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) {
                const Vec x = load<Vec>(in + L * v);
                acc[v] = seeded ? (x > acc[v] ? x : acc[v]) : x;
            }
            seeded = true;
        }
    }
    if (!seeded)
        for (int v = 0; v < V; ++v) acc[v] = Vec{} - std::numeric_limits<float>::infinity();
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) store(out + c0 + L * v, acc[v]);
}

template <typename Vec>
[[gnu::always_inline]] inline void maxPoolRowVectors(const NhwcWindow& s, const float* image,
                                                     float* row, int64_t oy) {
    constexpr int L = kLanes<Vec>;
    if (s.c < L) return maxPoolRow(s, image, row, oy);
    for (int64_t ox = 0; ox < s.ow; ++ox) {
        float* out = row + ox * s.c;
        int64_t c0 = 0;
        for (; c0 + 4 * L <= s.c; c0 += 4 * L) maxPoolBlock<Vec, 4>(s, image, out, oy, ox, c0);
        for (; c0 + L <= s.c; c0 += L) maxPoolBlock<Vec, 1>(s, image, out, oy, ox, c0);
        if (c0 < s.c) maxPoolBlock<Vec, 1>(s, image, out, oy, ox, s.c - L);
    }
}

#pragma GCC diagnostic pop

using MaxPoolRowFn = void (*)(const NhwcWindow&, const float*, float*, int64_t);
[[gnu::target("avx512f")]] void maxPoolRowAvx512(const NhwcWindow& s, const float* image,
                                                 float* row, int64_t oy) {
    maxPoolRowVectors<Vec16>(s, image, row, oy);
}
[[gnu::target("avx2")]] void maxPoolRowAvx2(const NhwcWindow& s, const float* image, float* row,
                                            int64_t oy) {
    maxPoolRowVectors<Vec8>(s, image, row, oy);
}
void maxPoolRowBaseline(const NhwcWindow& s, const float* image, float* row, int64_t oy) {
    maxPoolRowVectors<Vec16>(s, image, row, oy);
}

MaxPoolRowFn maxPoolRowForThisCpu() {
    static const MaxPoolRowFn chosen =
        vec16::forThisCpu<MaxPoolRowFn>(maxPoolRowAvx512, maxPoolRowAvx2, maxPoolRowBaseline);
    return chosen;
}

// Bytes (a quantized CNN's pool): each pixel's channels 64 at a time, the maximum kept in a
// register across the window, the last block overlapping the one before; under 64 channels
// the loop above. The loop above alone took 0.92 ms on ResNet-18's 56 x 56 x 64 pool at one
// thread (ONNX Runtime 0.11).
template <typename T>
struct Bytes64 {
    typedef T type __attribute__((vector_size(64)));
};

template <typename T>
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void maxPoolRowBytes(const NhwcWindow& s,
                                                                                   const T* image, T* row,
                                                                                   int64_t oy) {
    using V = typename Bytes64<T>::type;
    constexpr int64_t L = 64;
    if (s.c < L) return maxPoolRow(s, image, row, oy);
    for (int64_t ox = 0; ox < s.ow; ++ox) {
        T* out = row + ox * s.c;
        for (int64_t c = 0; c < s.c; c += L) {
            const int64_t c0 = std::min(c, s.c - L);
            V acc;
            bool seeded = false;
            for (int64_t ky = 0; ky < s.kh; ++ky) {
                const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
                if (iy < 0 || iy >= s.ih) continue;
                for (int64_t kx = 0; kx < s.kw; ++kx) {
                    const int64_t ix = ox * s.sw - s.pw + kx * s.dw;
                    if (ix < 0 || ix >= s.iw) continue;
                    V in;
                    std::memcpy(&in, image + (iy * s.iw + ix) * s.c + c0, sizeof(V));
                    acc = seeded ? (in > acc ? in : acc) : in;
                    seeded = true;
                }
            }
            if (!seeded) acc = V{} + std::numeric_limits<T>::lowest();
            std::memcpy(out + c0, &acc, sizeof(V));
        }
    }
}

}  // namespace

template <typename T>
void maxPoolNhwc(ThreadPool& pool, const NhwcWindow& s, const T* x, T* y) {
    MaxPoolRowFn floatRow = nullptr;
    if constexpr (std::is_same_v<T, float>) floatRow = maxPoolRowForThisCpu();
    pool.parallelFor(s.n * s.oh, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, s.ow * s.c * s.kh * s.kw)),
                     [&](int64_t b, int64_t e) {
                         for (int64_t r = b; r < e; ++r) {
                             const int64_t img = r / s.oh, oy = r % s.oh;
                             const T* image = x + img * s.ih * s.iw * s.c;
                             if constexpr (std::is_same_v<T, float>)
                                 floatRow(s, image, y + r * s.ow * s.c, oy);
                             else if constexpr (sizeof(T) == 1)
                                 maxPoolRowBytes(s, image, y + r * s.ow * s.c, oy);
                             else
                                 maxPoolRow(s, image, y + r * s.ow * s.c, oy);
                         }
                     });
}
template void maxPoolNhwc<float>(ThreadPool&, const NhwcWindow&, const float*, float*);
template void maxPoolNhwc<double>(ThreadPool&, const NhwcWindow&, const double*, double*);
template void maxPoolNhwc<uint8_t>(ThreadPool&, const NhwcWindow&, const uint8_t*, uint8_t*);  // a quantized CNN's
template void maxPoolNhwc<int8_t>(ThreadPool&, const NhwcWindow&, const int8_t*, int8_t*);

void nhwcToNchw(const void* src, void* dst, int64_t n, int64_t h, int64_t w, int64_t c, int bytes) {
    bySize<ToNchw>(bytes, src, dst, n, h, w, c);
}

void nchwToNhwc(const void* src, void* dst, int64_t n, int64_t c, int64_t h, int64_t w, int bytes) {
    bySize<ToNhwc>(bytes, src, dst, n, c, h, w);
}

}  // namespace fsc::cpu
