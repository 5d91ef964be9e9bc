#include "compiler/backends/cpu/qlinear_conv_nhwc.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "compiler/backends/cpu/conv_nhwc.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/im2col.h"
#include "compiler/backends/cpu/qlinear_depthwise_avx512.h"
#include "compiler/backends/cpu/qlinear_conv_vnni.h"
#include "compiler/backends/cpu/requantize.h"
#include "compiler/backends/cpu/thread_scratch.h"
#include "compiler/runtime/thread_pool.h"

#include "compiler/backends/cpu/requantize_avx512.h"

namespace fsc::cpu {
namespace {

bool eightBit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// Rows of m channels (a pixel's) requantized, each channel with its own scale and bias.
#define FSC_REQUANTIZE_ROWS(name, A, Q)                                                                     \
    [[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void name(                              \
        const A* acc, int64_t rows, int64_t m, const Requantization& rq, Q* y) {                           \
        for (int64_t r = 0; r < rows; ++r)                                                                  \
            requantizeChannels(acc + r * m, y + r * m, m, rq.bias.data(), rq.scale.data(), rq.yZero, rq.finite); \
    }
FSC_REQUANTIZE_ROWS(rowsI32ToU8, int32_t, uint8_t)
FSC_REQUANTIZE_ROWS(rowsI32ToS8, int32_t, int8_t)
FSC_REQUANTIZE_ROWS(rowsF32ToU8, float, uint8_t)
FSC_REQUANTIZE_ROWS(rowsF32ToS8, float, int8_t)
#undef FSC_REQUANTIZE_ROWS

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass an undefined merge source, which its own
// -Wmaybe-uninitialized (or -Wuninitialized) then reports at every inlined call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// The same arithmetic in AVX-512 (requantize_avx512.h): 0.8 ms of MobileNetV2's 4.4 million
// GEMM outputs at one thread went to the generic loop's instructions.
template <typename A, bool Signed>
[[gnu::target("avx512f,avx512bw,avx512vl")]] void requantizeRowsAvx512(const A* acc, int64_t rows, int64_t m,
                                                                      const Requantization& rq, void* y) {
    const Requantize512 r = requantize512<Signed>(rq.yZero);
    for (int64_t row = 0; row < rows; ++row) {
        const A* in = acc + row * m;
        auto* out = static_cast<int8_t*>(y) + row * m;
        for (int64_t j = 0; j < m; j += 16) {
            const __mmask16 k = m - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (m - j)) - 1);
            __m512i a;
            if constexpr (std::is_same_v<A, float>) a = _mm512_cvtps_epi32(_mm512_maskz_loadu_ps(k, in + j));
            else a = _mm512_maskz_loadu_epi32(k, in + j);
            a = _mm512_add_epi32(a, _mm512_maskz_loadu_epi32(k, rq.bias.data() + j));
            const __m128i bytes = requantized16<Signed>(r, a, _mm512_maskz_loadu_ps(k, rq.scale.data() + j));
            if (k == 0xFFFF) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), bytes);
            else _mm_mask_storeu_epi8(out + j, k, bytes);
        }
    }
}
#pragma GCC diagnostic pop
#endif

// The per-channel scales and biases repeated over enough pixels that one call requantizes
// a few hundred values: a 16-channel layer's rows one at a time spent more in each call's
// setup than in its one vector of work.
struct TiledRequantization {
    Requantization params;
    int64_t pixels = 1;  // a tile's
    TiledRequantization(const Requantization& rq, int64_t m) : params(rq) {
        pixels = std::max<int64_t>(1, 512 / std::max<int64_t>(m, 1));
        params.scale.clear();
        params.bias.clear();
        for (int64_t p = 0; p < pixels; ++p) {
            params.scale.insert(params.scale.end(), rq.scale.begin(), rq.scale.end());
            params.bias.insert(params.bias.end(), rq.bias.begin(), rq.bias.end());
        }
    }
};

// Pixels [first, first + count) of m channels each requantized into Y's bytes.
template <typename A>
void requantizePixels(const A* acc, int64_t count, int64_t m, const TiledRequantization& rq, uint8_t* y,
                      bool unsignedOut) {
    const int64_t tiles = count / rq.pixels, width = rq.pixels * m;
    auto rows = [&](const A* in, int64_t n, int64_t w, uint8_t* out) {
#if defined(__x86_64__)
        static const bool avx512 = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
        if (avx512 && rq.params.finite) {
            if (unsignedOut) requantizeRowsAvx512<A, false>(in, n, w, rq.params, out);
            else requantizeRowsAvx512<A, true>(in, n, w, rq.params, out);
            return;
        }
#endif
        if constexpr (std::is_same_v<A, float>) {
            if (unsignedOut) rowsF32ToU8(in, n, w, rq.params, out);
            else rowsF32ToS8(in, n, w, rq.params, reinterpret_cast<int8_t*>(out));
        } else {
            if (unsignedOut) rowsI32ToU8(in, n, w, rq.params, out);
            else rowsI32ToS8(in, n, w, rq.params, reinterpret_cast<int8_t*>(out));
        }
    };
    rows(acc, tiles, width, y);
    rows(acc + tiles * width, count - tiles * rq.pixels, m, y + tiles * width);
}

// The same over the pool's threads.
template <typename A>
void requantizePixels(ThreadPool& pool, const A* acc, int64_t pixels, int64_t m, const TiledRequantization& rq,
                      uint8_t* y, bool unsignedOut) {
    pool.parallelFor(pixels, std::max<int64_t>(1, 8192 / std::max<int64_t>(m, 1)), [&](int64_t first, int64_t last) {
        requantizePixels(acc + first * m, last - first, m, rq, y + first * m, unsignedOut);
    });
}

// The layer's sizes; X's element (img, ch, iy, ix) at `at` in either layout.
struct Layer {
    int64_t n, c, h, w, m, kh, kw;
    ConvGeometry geo;
    bool nchwIn;
    int64_t oh() const { return geo.out[0]; }
    int64_t ow() const { return geo.out[1]; }
    int64_t at(int64_t img, int64_t ch, int64_t iy, int64_t ix) const {
        return nchwIn ? ((img * c + ch) * h + iy) * w + ix : ((img * h + iy) * w + ix) * c + ch;
    }
};

int32_t zeroOf(const RtTensor* zero) { return zero && zero->numel() ? int32_t(elementAsInt(*zero, 0)) : 0; }

// x - x_zero as float, in vector lanes (the baseline build converted bytes one at a time).
#define FSC_SHIFTED(name, X)                                                                                  \
    [[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void name(const X* __restrict in, int64_t n, \
                                                                             float xZero, float* __restrict out) { \
        for (int64_t i = 0; i < n; ++i) out[i] = float(in[i]) - xZero;                                      \
    }
FSC_SHIFTED(shiftedU8, uint8_t)
FSC_SHIFTED(shiftedS8, int8_t)
#undef FSC_SHIFTED

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// The same in AVX-512, 16 bytes widened at a time: GCC's vectorization of the loop above went
// through 16-bit halves in 256-bit registers, three instructions a value where this takes one,
// and the conversion took 8% of MobileNetV2-QDQ's time.
template <typename X>
[[gnu::target("avx512f")]] void shiftedAvx512(const X* __restrict in, int64_t n, float xZero, float* __restrict out) {
    const __m512 zero = _mm512_set1_ps(xZero);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
        __m512i widened;
        if constexpr (std::is_same_v<X, uint8_t>) widened = _mm512_cvtepu8_epi32(bytes);
        else widened = _mm512_cvtepi8_epi32(bytes);
        _mm512_storeu_ps(out + i, _mm512_sub_ps(_mm512_cvtepi32_ps(widened), zero));
    }
    for (; i < n; ++i) out[i] = float(in[i]) - xZero;
}
#pragma GCC diagnostic pop
#endif

template <typename X>
void shifted(const X* in, int64_t n, float xZero, float* out) {
#if defined(__x86_64__)
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    if (avx512) return shiftedAvx512(in, n, xZero, out);
#endif
    if constexpr (std::is_same_v<X, uint8_t>) shiftedU8(in, n, xZero, out);
    else shiftedS8(in, n, xZero, out);
}

// Rows [first, last) of image img, x - x_zero as float in NHWC.
template <typename X>
void shiftedRows(const Layer& l, const X* x, float xZero, int64_t img, int64_t first, int64_t last, float* out) {
    if (!l.nchwIn) return shifted(x + (img * l.h + first) * l.w * l.c, (last - first) * l.w * l.c, xZero, out);
    for (int64_t iy = first; iy < last; ++iy)
        for (int64_t ch = 0; ch < l.c; ++ch) {
            const X* in = x + l.at(img, ch, iy, 0);
            float* o = out + (iy - first) * l.w * l.c + ch;
            for (int64_t ix = 0; ix < l.w; ++ix) o[ix * l.c] = float(in[ix]) - xZero;
        }
}

// A band of output rows at a time, start to end on one thread: its input rows as float, the
// float NHWC depthwise loops over them, the requantization, while the band is in cache.
// Converting the whole image first and requantizing it after made three passes over memory
// (a 112 x 112 x 32 layer took 1.7x the NCHW kernel's time).
// `taps`: w - w_zero as float, [kh * kw, c] (tap-major).
Status depthwiseLayer(KernelContext& ctx, const Layer& l, const RtTensor& x, const RtTensor* xzp, const float* taps,
                      const TiledRequantization& rq, RtTensor& y) {
    const float xZero = float(zeroOf(xzp));
    const int64_t sh = l.geo.strides[0], dh = l.geo.dilations[0], ph = l.geo.padBegin[0];
    // About 16k output values a band: with its input rows, within a core's L2.
    const int64_t bandRows = std::clamp<int64_t>(16384 / std::max<int64_t>(1, l.ow() * l.c), 1, l.oh());
    const int64_t bands = (l.oh() + bandRows - 1) / bandRows;
    const bool xu = x.dtype == DType::UInt8;
    const DepthwiseShape shape{l.n, l.c, l.h, l.w, l.oh(), l.ow(), l.kh, sh, ph, l.geo.padBegin[1]};
    if (!l.nchwIn && l.kh == l.kw && rq.params.finite &&
        directDepthwiseTakes(shape, dh, l.geo.dilations[1], l.geo.strides[1], l.kw)) {
        const int64_t padded = (l.c + 15) / 16 * 16;
        std::vector<int32_t> offsets(static_cast<size_t>(padded), 0);
        std::vector<float> scales(static_cast<size_t>(padded), 0.0f);
        for (int64_t ch = 0; ch < l.c; ++ch) {
            int64_t tapSum = 0;  // the taps are integers
            for (int64_t t = 0; t < l.kh * l.kw; ++t) tapSum += int64_t(taps[t * l.c + ch]);
            offsets[size_t(ch)] = int32_t(uint32_t(rq.params.bias[size_t(ch)]) - uint32_t(int32_t(xZero)) * uint32_t(tapSum));
            scales[size_t(ch)] = rq.params.scale[size_t(ch)];
        }
        ctx.pool().parallelFor(l.n * bands, 1, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) {
                const int64_t img = t / bands, oy0 = (t % bands) * bandRows, oy1 = std::min(l.oh(), oy0 + bandRows);
                directDepthwiseRows(shape, x.data, !xu, int32_t(xZero), taps, offsets.data(), scales.data(),
                                    rq.params.yZero, y.dtype == DType::Int8, y.data, img, oy0, oy1);
            }
        });
        return Status::ok();
    }
    ctx.pool().parallelFor(l.n * bands, 1, [&](int64_t b, int64_t e) {
        thread_local std::vector<float> in, sums;
        for (int64_t t = b; t < e; ++t) {
            const int64_t img = t / bands, oy0 = (t % bands) * bandRows, oy1 = std::min(l.oh(), oy0 + bandRows);
            // The input rows the band's windows reach inside X (one, if none: it then reads padding only).
            int64_t r0 = std::clamp<int64_t>(oy0 * sh - ph, 0, l.h - 1);
            const int64_t r1 = std::clamp<int64_t>((oy1 - 1) * sh - ph + (l.kh - 1) * dh + 1, r0 + 1, l.h);
            in.resize(size_t((r1 - r0) * l.w * l.c));
            sums.resize(size_t((oy1 - oy0) * l.ow() * l.c));
            if (xu) shiftedRows(l, x.as<uint8_t>(), xZero, img, r0, r1, in.data());
            else shiftedRows(l, x.as<int8_t>(), xZero, img, r0, r1, in.data());
            const NhwcWindow s{1, l.c, r1 - r0, l.w, oy1 - oy0, l.ow(), l.kh, l.kw, sh, l.geo.strides[1],
                               dh, l.geo.dilations[1], ph + r0 - oy0 * sh, l.geo.padBegin[1]};
            depthwiseNhwc(ctx.pool(), s, in.data(), taps, nullptr, sums.data(), Activation{});  // nested: inline
            requantizePixels(sums.data(), (oy1 - oy0) * l.ow(), l.c, rq,
                             static_cast<uint8_t*>(y.data) + (img * l.oh() + oy0) * l.ow() * l.c, y.dtype == DType::UInt8);
        }
    });
    return Status::ok();
}

// Each output pixel's window of NHWC X as one row of bytes in (ky, kx, ch) order (a tap's
// channels are one copy), `pad` where it falls outside X.
void windowRows(ThreadPool& pool, const Layer& l, const uint8_t* x, uint8_t pad, int64_t first, int64_t count,
                uint8_t* rows) {
    const int64_t k = l.kh * l.kw * l.c, perImage = l.oh() * l.ow();
    pool.parallelFor(count, std::max<int64_t>(1, 16384 / std::max<int64_t>(k, 1)), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const int64_t p = first + r, img = p / perImage, oy = (p % perImage) / l.ow(), ox = p % l.ow();
            uint8_t* row = rows + r * k;
            for (int64_t ky = 0; ky < l.kh; ++ky) {
                const int64_t iy = oy * l.geo.strides[0] + ky * l.geo.dilations[0] - l.geo.padBegin[0];
                for (int64_t kx = 0; kx < l.kw; ++kx) {
                    const int64_t ix = ox * l.geo.strides[1] + kx * l.geo.dilations[1] - l.geo.padBegin[1];
                    uint8_t* dst = row + (ky * l.kw + kx) * l.c;
                    if (iy >= 0 && iy < l.h && ix >= 0 && ix < l.w) std::memcpy(dst, x + l.at(img, 0, iy, ix), size_t(l.c));
                    else std::memset(dst, pad, size_t(l.c));
                }
            }
        }
    });
}

// `weights`: W's bytes in the rows' order; `vnni`: W packed for vnniPointwise (a 1x1 layer's
// int8 W with zero point 0, where this CPU has VNNI), which then takes the uint8 pixels.
Status gemmLayer(KernelContext& ctx, const Layer& l, const RtTensor& x, const RtTensor* xzp, const RtTensor& w,
                 const int8_t* weights, const VnniPointwiseWeights* vnni, const RtTensor* wzp,
                 const TiledRequantization& rq, RtTensor& y) {
    const int64_t k = l.kh * l.kw * l.c, pixels = l.n * l.oh() * l.ow();
    const bool xu = x.dtype == DType::UInt8, wu = w.dtype == DType::UInt8;
    const int32_t xZero = zeroOf(xzp), wZero = zeroOf(wzp);
    // The GEMM's operands are int8, a uint8 one read less 128 with its zero point (gemm.h).
    const int8_t aZero = int8_t(xu ? xZero - 128 : xZero), bZero = int8_t(wu ? wZero - 128 : wZero);
    const Uint8Operands stored{xu, wu};
    const bool pointwise = !l.nchwIn && l.kh == 1 && l.kw == 1 && l.geo.strides[0] == 1 && l.geo.strides[1] == 1 &&
                           l.geo.padBegin[0] == 0 && l.geo.padBegin[1] == 0 && l.oh() == l.h && l.ow() == l.w;
    const auto* xb = static_cast<const uint8_t*>(x.data);
    auto* yb = static_cast<uint8_t*>(y.data);
    const bool unsignedOut = y.dtype == DType::UInt8;
    // The slices run on the pool's threads, each start to end (its GEMM on that thread alone:
    // oneDNN's is serial inside a parallel region), where there are enough of them; else one
    // after another with each step threaded. A GEMM and a requantization threaded per slice
    // cost two fork-joins a slice (MobileNetV2's 112 x 112 expansion had 37 slices).
    auto slices = [&](int64_t count, const std::function<void(int64_t)>& slice) {
        if (ctx.pool().size() > 1 && count >= 2 * ctx.pool().size()) {
            ctx.pool().parallelFor(count, 1, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) slice(i);
            });
            return;
        }
        for (int64_t i = 0; i < count; ++i) slice(i);
    };
    if (l.nchwIn) {
        // NCHW X (a region's first layer, reading the image): im2col's columns [K, pixels] in
        // W's (ch, ky, kx) order, multiplied transposed, a slice of output rows at a time.
        const int64_t ow = l.ow(), sliceRows = std::clamp<int64_t>((int64_t(1) << 16) / std::max<int64_t>(1, ow * l.m), 1, l.oh());
        const int64_t perImage = (l.oh() + sliceRows - 1) / sliceRows;
        slices(l.n * perImage, [&](int64_t i) {
            const int64_t img = i / perImage, first = (i % perImage) * sliceRows;
            const int64_t count = std::min(sliceRows, l.oh() - first) * ow;
            uint8_t* cols = threadScratch<uint8_t, ScratchSlot::WindowBytes>(size_t(k * sliceRows * ow));
            int32_t* acc = threadScratch<int32_t, ScratchSlot::NhwcAccumulators>(size_t(sliceRows * ow * l.m));
            im2col<uint8_t>(xb + img * l.c * l.h * l.w, l.c, l.geo, cols, ctx.pool(), uint8_t(xZero), OutputSlice{first, count / ow});
            gemmS8S8(true, true, count, l.m, k, reinterpret_cast<const int8_t*>(cols), count, aZero, weights, k, bZero, acc,
                     l.m, nullptr, stored);
            requantizePixels(ctx.pool(), acc, count, l.m, rq, yb + ((img * l.oh() + first) * ow) * l.m, unsignedOut);
        });
        return Status::ok();
    }
    // A slice of pixels at a time, so that the accumulators (and the window rows) are still in
    // cache when they are requantized (and multiplied): about 128 KiB of them. The int32 round
    // trip is what the requantization costs; slices of 512 KiB measured 5% slower over
    // MobileNetV2, 64 KiB no faster.
    const int64_t slice = std::max<int64_t>(256, (int64_t(1) << 17) / (4 * std::max(k, l.m)));
    if ((!pointwise || k * l.m > 8192) && !l.nchwIn && vnni && xu && rq.params.finite && l.c % 4 == 0) {
        // The VNNI kernel reading each window where it lies: slices of pixels by blocks of 64
        // channels over the threads (a 7 x 7 layer has one slice, but 8 blocks of 512 channels).
        // A large 1x1 layer too (see prepare()).
        const VnniWindow g{l.n, l.h, l.w, l.c, l.oh(), l.ow(), l.kh, l.kw, l.geo.strides[0], l.geo.strides[1],
                           l.geo.padBegin[0], l.geo.padBegin[1], l.geo.dilations[0], l.geo.dilations[1]};
        const int64_t blocks = vnniBlocks(*vnni), groups = (blocks + 3) / 4, sliceCount = (pixels + slice - 1) / slice;
        ctx.pool().parallelFor(sliceCount * groups, 1, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
                const int64_t first = i / groups * slice, group = i % groups;
                vnniWindowConv(xb, g, xZero, *vnni, rq.params, !unsignedOut, yb, first, std::min(slice, pixels - first),
                               group * 4, std::min(blocks, group * 4 + 4));
            }
        });
        return Status::ok();
    }
    const bool direct = pointwise && vnni && xu && rq.params.finite;
    slices((pixels + slice - 1) / slice, [&](int64_t i) {
        const int64_t first = i * slice, count = std::min(slice, pixels - first);
        if (direct) return vnniPointwise(xb + first * k, count, xZero, *vnni, rq.params, !unsignedOut, yb + first * l.m);
        int32_t* acc = threadScratch<int32_t, ScratchSlot::NhwcAccumulators>(size_t(slice * l.m));
        const uint8_t* a = xb + first * k;
        if (!pointwise) {
            uint8_t* rows = threadScratch<uint8_t, ScratchSlot::WindowBytes>(size_t(slice * k));
            windowRows(ctx.pool(), l, xb, uint8_t(xZero), first, count, rows);
            a = rows;
        }
        gemmS8S8(false, true, count, l.m, k, reinterpret_cast<const int8_t*>(a), k, aZero, weights, k, bZero, acc, l.m,
                 nullptr, stored);
        requantizePixels(ctx.pool(), acc, count, l.m, rq, yb + first * l.m, unsignedOut);
    });
    return Status::ok();
}

}  // namespace

struct QLinearConvNhwc::Prepared {
    DType outType;
    TiledRequantization rq;
    std::vector<float> taps;  // a depthwise layer's w - w_zero, [kh * kw, c]
    bool oneWeightZero = true;
    std::optional<VnniPointwiseWeights> vnni;  // W for vnniPointwise (1x1) or vnniWindowConv
};

Result<const QLinearConvNhwc::Prepared*> QLinearConvNhwc::prepare(KernelContext& ctx, int64_t m, int64_t taps,
                                                                  bool depthwise, bool pointwise, bool windowed) {
    std::vector<const void*> from;
    bool constant = true;
    for (size_t i = 1; i <= 8; ++i) {
        const RtTensor* t = ctx.input(i);
        from.push_back(t ? t->data : nullptr);
        constant = constant && (!t || ctx.inputConstant(i));
    }
    if (m_prepared && constant && from == m_preparedFrom) return m_prepared.get();
    auto read = readRequantization(ctx, m);
    if (!read) return read.status();
    const RtTensor *w = ctx.input(3), *wzp = ctx.input(5);
    auto made = std::make_shared<Prepared>(Prepared{read->outType, TiledRequantization(*read, m), {}, true, std::nullopt});
    for (int64_t i = 1; wzp && i < wzp->numel(); ++i) made->oneWeightZero &= elementAsInt(*wzp, i) == elementAsInt(*wzp, 0);
    if (depthwise) {
        made->taps.resize(size_t(taps * m));
        for (int64_t ch = 0; ch < m; ++ch) {
            const float wZero = wzp ? float(elementAsDouble(*wzp, wzp->numel() > 1 ? ch : 0)) : 0.0f;
            for (int64_t k = 0; k < taps; ++k) made->taps[size_t(k * m + ch)] = float(elementAsDouble(*w, ch * taps + k)) - wZero;
        }
    }
    const int64_t k = w->numel() / std::max<int64_t>(m, 1);
    const bool zeroWeightPoint = !wzp || (made->oneWeightZero && elementAsInt(*wzp, 0) == 0);
    // W for the VNNI kernel: a 1x1 layer's with K x M up to 8 KiB for vnniPointwise (pixels
    // outer: MobileNetV2's expansions with K of 16-32), every other group-1 layer's on NHWC X
    // whose taps' channels make whole groups of four, in the window's order, for
    // vnniWindowConv (blocks of channels outer, so a block's weights stay in cache: pixels
    // outer, MobileNetV2's 14 x 14 and 7 x 7 1x1 layers took 1.1-1.5x oneDNN's GEMM and
    // requantization; blocks outer, 0.75-0.9x of it, and GoogLeNet's large 1x1 branches too).
    const int64_t perTap = w->rank() == 4 ? w->dims[1] : 0;
    if (w->dtype == DType::Int8 && zeroWeightPoint && k % 4 == 0 && vnniPointwiseAvailable()) {
        if (pointwise && k * m <= 8192) made->vnni = packVnniPointwise(w->as<int8_t>(), m, k);
        else if ((windowed || pointwise) && perTap % 4 == 0) made->vnni = packVnniPointwise(windowOrderWeights(*w, false), m, k);
    }
    m_prepared = std::move(made);
    m_preparedFrom = constant ? from : std::vector<const void*>{};
    return m_prepared.get();
}

const int8_t* QLinearConvNhwc::windowOrderWeights(const RtTensor& w, bool constant) {
    if (constant && m_reorderedFrom == w.data) return m_reordered.data();
    const int64_t m = w.dims[0], c = w.dims[1], taps = w.dims[2] * w.dims[3], k = c * taps;
    m_reordered.resize(size_t(m * k));
    const auto* from = static_cast<const int8_t*>(w.data);
    for (int64_t oc = 0; oc < m; ++oc)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t t = 0; t < taps; ++t) m_reordered[size_t(oc * k + t * c + ch)] = from[(oc * c + ch) * taps + t];
    m_reorderedFrom = constant ? w.data : nullptr;
    return m_reordered.data();
}

Status QLinearConvNhwc::run(KernelContext& ctx, const WindowAttrs& attrs, int64_t group, bool inputNchw,
                            bool weightsConstant, const NchwAccumulators& nchw) {
    // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
    const RtTensor *x = ctx.input(0), *xzp = ctx.input(2), *w = ctx.input(3), *wzp = ctx.input(5);
    if (!x || !w) return bad(ctx, "missing x or w");
    if (x->rank() != 4 || w->rank() != 4) return bad(ctx, "a channels-last QLinearConv needs a 4-D X and W");
    if (!eightBit(x->dtype)) return unsupportedType(ctx, x->dtype);
    if (!eightBit(w->dtype)) return unsupportedType(ctx, w->dtype);
    if (xzp && (xzp->numel() != 1 || xzp->dtype != x->dtype)) return bad(ctx, "x_zero_point must be one value of X's type");
    Layer l{};
    l.nchwIn = inputNchw;
    l.n = x->dims[0];
    l.c = x->dims[inputNchw ? 1 : 3];
    l.h = x->dims[inputNchw ? 2 : 1];
    l.w = x->dims[inputNchw ? 3 : 2];
    l.m = w->dims[0];
    l.kh = w->dims[2];
    l.kw = w->dims[3];
    if (group <= 0 || l.c % group || l.m % group || w->dims[1] != l.c / group)
        return bad(ctx, "W " + dimsString(w->dims) + " does not fit X " + dimsString(x->dims) +
                            (inputNchw ? " (NCHW)" : " (NHWC)") + " with group " + std::to_string(group));
    if (wzp && wzp->numel() != 1 && wzp->numel() != l.m)
        return bad(ctx, "w_zero_point " + dimsString(wzp->dims) + " does not fit " + std::to_string(l.m) + " channels");
    auto geo = convGeometry(ctx, attrs, {l.h, l.w}, {l.kh, l.kw}, false);
    if (!geo) return geo.status();
    l.geo = *geo;
    l.geo.channels = l.c;
    // |x - x_zero|, |w - w_zero| <= 255: float holds the sums exactly up to 258 taps.
    const bool depthwise = group == l.c && l.m == l.c && l.kh * l.kw * 255 * 255 < (int64_t(1) << 24);
    std::lock_guard<std::mutex> lock(m_mutex);
    const bool plainPointwise = l.kh * l.kw == 1 && l.geo.strides[0] == 1 && l.geo.strides[1] == 1 &&
                                l.geo.padBegin[0] == 0 && l.geo.padBegin[1] == 0 && l.oh() == l.h && l.ow() == l.w;
    auto prepared = prepare(ctx, l.m, l.kh * l.kw, depthwise, group == 1 && l.kh * l.kw == 1,
                            group == 1 && !inputNchw && !plainPointwise);
    if (!prepared) return prepared.status();
    const Prepared& p = **prepared;
    const TiledRequantization& rq = p.rq;
    auto out = ctx.output(0, p.outType, {l.n, l.oh(), l.ow(), l.m});
    if (!out) return out.status();
    RtTensor& y = **out;
    if (y.numel() == 0) return Status::ok();
    if (depthwise) return depthwiseLayer(ctx, l, *x, xzp, p.taps.data(), rq, y);
    if (group == 1 && p.oneWeightZero)
        return gemmLayer(ctx, l, *x, xzp, *w,
                         inputNchw || l.kh * l.kw == 1 ? static_cast<const int8_t*>(w->data)
                                                       : windowOrderWeights(*w, weightsConstant),
                         p.vnni ? &*p.vnni : nullptr, wzp, rq, y);

    RtTensor copy;  // X as NCHW
    if (!inputNchw) {
        copy = allocateTensor(x->dtype, {l.n, l.c, l.h, l.w});
        nhwcToNchw(x->data, copy.data, l.n, l.h, l.w, l.c, 1);
    }
    auto acc = nchw(inputNchw ? *x : copy);
    if (!acc) return acc.status();
    const int64_t pixels = l.n * l.oh() * l.ow();
    int32_t* accNhwc = threadScratch<int32_t, ScratchSlot::NhwcAccumulators>(size_t(pixels * l.m));
    nchwToNhwc(acc->data, accNhwc, l.n, l.m, l.oh(), l.ow(), 4);
    requantizePixels(ctx.pool(), accNhwc, pixels, l.m, rq, static_cast<uint8_t*>(y.data), y.dtype == DType::UInt8);
    return Status::ok();
}

}  // namespace fsc::cpu
