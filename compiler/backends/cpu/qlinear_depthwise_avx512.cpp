#include "compiler/backends/cpu/qlinear_depthwise_avx512.h"

#include <algorithm>
#include <type_traits>

#include "compiler/backends/cpu/requantize_avx512.h"

namespace fsc::cpu {

bool directDepthwiseTakes(const DepthwiseShape& s, int64_t dilationH, int64_t dilationW, int64_t strideW,
                          int64_t kernelW) {
#if defined(__x86_64__)
    static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                               __builtin_cpu_supports("avx512vl");
    return avx512 && (s.kernel == 3 || s.kernel == 5) && kernelW == s.kernel && (s.stride == 1 || s.stride == 2) &&
           strideW == s.stride && dilationH == 1 && dilationW == 1 && s.c > 0 && s.ow > 0;
#else
    (void)s, (void)dilationH, (void)dilationW, (void)strideW, (void)kernelW;
    return false;
#endif
}

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass an undefined merge source, which its own
// -Wmaybe-uninitialized (or -Wuninitialized) then reports at every inlined call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
namespace {

// What every tile of one call reads.
struct Terms {
    const DepthwiseShape& s;
    const float* taps;
    const int32_t* offsets;
    const float* scales;
    __m512 zeroPoint;  // x_zero as float: what a tap outside the image reads
    Requantize512 requantize;
};

// 16 channels' bytes (those `mask` keeps) as float.
template <typename X>
[[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] inline __m512 widened(const X* p, __mmask16 mask) {
    const __m128i bytes = _mm_maskz_loadu_epi8(mask, p);
    if constexpr (std::is_same_v<X, uint8_t>) return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
    else return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
}

// P output pixels from ox0 on, by 16 channels from c0. `rows`: the window's input rows (null
// above or below the image); `Clip`: some of the tile's taps fall left or right of it.
template <typename X, bool SignedY, int P, int K, int S, bool Clip>
[[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] inline void tile(const Terms& t,
                                                                                 const X* const (&rows)[K],
                                                                                 int64_t ox0, int64_t c0,
                                                                                 __mmask16 mask, int8_t* out) {
    constexpr int kInputs = (P - 1) * S + K;
    const DepthwiseShape& s = t.s;
    __m512 acc[P];
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
    const int64_t ix0 = ox0 * S - s.padLeft;
#pragma GCC unroll 5
    for (int ky = 0; ky < K; ++ky) {
        __m512 in[kInputs];
#pragma GCC unroll 32
        for (int q = 0; q < kInputs; ++q) {
            const int64_t ix = ix0 + q;
            in[q] = rows[ky] && (!Clip || (ix >= 0 && ix < s.iw)) ? widened(rows[ky] + ix * s.c + c0, mask) : t.zeroPoint;
        }
#pragma GCC unroll 5
        for (int kx = 0; kx < K; ++kx) {
            const __m512 w = _mm512_maskz_loadu_ps(mask, t.taps + (ky * K + kx) * s.c + c0);
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p) acc[p] = _mm512_fmadd_ps(in[p * S + kx], w, acc[p]);
        }
    }
    const __m512i offset = _mm512_loadu_si512(t.offsets + c0);
    const __m512 scale = _mm512_loadu_ps(t.scales + c0);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
        const __m512i sums = _mm512_add_epi32(_mm512_cvtps_epi32(acc[p]), offset);
        _mm_mask_storeu_epi8(out + (ox0 + p) * s.c + c0, mask, requantized16<SignedY>(t.requantize, sums, scale));
    }
}

// One output row's pixels, P a tile, by 16 channels from c0; the last tile overlaps the one
// before it (its pixels computed twice, stored alike) rather than leaving a remainder.
template <typename X, bool SignedY, int P, int K, int S>
[[gnu::target("avx512f,avx512bw,avx512vl")]] inline void rowTiles(const Terms& t, const X* const (&rows)[K],
                                                                 int64_t lo, int64_t hi, int64_t c0, __mmask16 mask,
                                                                 int8_t* out) {
    for (int64_t ox = 0; ox < t.s.ow; ox += P) {
        const int64_t at = std::min(ox, t.s.ow - P);
        if (at >= lo && at + P <= hi) tile<X, SignedY, P, K, S, false>(t, rows, at, c0, mask, out);
        else tile<X, SignedY, P, K, S, true>(t, rows, at, c0, mask, out);
    }
}

// Output rows [oy0, oy1) of one image, each row 16 channels at a time (the input rows'
// slices stay in L1 across the row).
template <typename X, bool SignedY, int K, int S>
[[gnu::target("avx512f,avx512bw,avx512vl")]] void rowsOf(const Terms& t, const X* x, int8_t* y, int64_t image,
                                                        int64_t oy0, int64_t oy1) {
    const DepthwiseShape& s = t.s;
    // Interior columns [lo, hi): every tap inside the image.
    const int64_t lo = std::min(s.ow, (s.padLeft + S - 1) / S);
    const int64_t lastIn = s.iw - K + s.padLeft;  // the largest ox * S allowed
    const int64_t hi = std::max(lo, std::min(s.ow, lastIn >= 0 ? lastIn / S + 1 : 0));
    constexpr int kWide = S == 1 ? 8 : 4;
    for (int64_t oy = oy0; oy < oy1; ++oy) {
        const X* rows[K];
        for (int ky = 0; ky < K; ++ky) {
            const int64_t iy = oy * S - s.padTop + ky;
            rows[ky] = iy >= 0 && iy < s.ih ? x + (image * s.ih + iy) * s.iw * s.c : nullptr;
        }
        int8_t* out = y + (image * s.oh + oy) * s.ow * s.c;
        for (int64_t c0 = 0; c0 < s.c; c0 += 16) {
            const __mmask16 mask = s.c - c0 >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (s.c - c0)) - 1);
            if (s.ow >= kWide) rowTiles<X, SignedY, kWide, K, S>(t, rows, lo, hi, c0, mask, out);
            else if (s.ow >= 4) rowTiles<X, SignedY, 4, K, S>(t, rows, lo, hi, c0, mask, out);
            else rowTiles<X, SignedY, 1, K, S>(t, rows, lo, hi, c0, mask, out);
        }
    }
}

template <typename X, bool SignedY>
[[gnu::target("avx512f,avx512bw,avx512vl")]] void rowsFor(const Terms& t, const void* x, void* y, int64_t image,
                                                         int64_t oy0, int64_t oy1) {
    const auto* in = static_cast<const X*>(x);
    auto* out = static_cast<int8_t*>(y);
    if (t.s.kernel == 3 && t.s.stride == 1) rowsOf<X, SignedY, 3, 1>(t, in, out, image, oy0, oy1);
    else if (t.s.kernel == 3) rowsOf<X, SignedY, 3, 2>(t, in, out, image, oy0, oy1);
    else if (t.s.stride == 1) rowsOf<X, SignedY, 5, 1>(t, in, out, image, oy0, oy1);
    else rowsOf<X, SignedY, 5, 2>(t, in, out, image, oy0, oy1);
}

[[gnu::target("avx512f,avx512bw,avx512vl")]] void start(const DepthwiseShape& s, const void* x, bool signedX,
                                                       int32_t xZero, const float* taps, const int32_t* offsets,
                                                       const float* scales, float yZero, bool signedY, void* y,
                                                       int64_t image, int64_t firstRow, int64_t lastRow) {
    const Terms t{s, taps, offsets, scales, _mm512_set1_ps(float(xZero)),
                  signedY ? requantize512<true>(yZero) : requantize512<false>(yZero)};
    if (!signedX && !signedY) rowsFor<uint8_t, false>(t, x, y, image, firstRow, lastRow);
    else if (!signedX) rowsFor<uint8_t, true>(t, x, y, image, firstRow, lastRow);
    else if (!signedY) rowsFor<int8_t, false>(t, x, y, image, firstRow, lastRow);
    else rowsFor<int8_t, true>(t, x, y, image, firstRow, lastRow);
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void directDepthwiseRows(const DepthwiseShape& s, const void* x, bool signedX, int32_t xZero, const float* taps,
                         const int32_t* offsets, const float* scales, float yZero, bool signedY, void* y,
                         int64_t image, int64_t firstRow, int64_t lastRow) {
#if defined(__x86_64__)
    start(s, x, signedX, xZero, taps, offsets, scales, yZero, signedY, y, image, firstRow, lastRow);
#else
    (void)s, (void)x, (void)signedX, (void)xZero, (void)taps, (void)offsets, (void)scales, (void)yZero, (void)signedY,
        (void)y, (void)image, (void)firstRow, (void)lastRow;
#endif
}

}  // namespace fsc::cpu
