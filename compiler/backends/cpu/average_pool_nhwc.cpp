#include "compiler/backends/cpu/average_pool_nhwc.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "compiler/backends/cpu/conv_geometry.h"
#include "compiler/backends/cpu/conv_nhwc.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/vec16.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {

namespace {

using vec16::kLanes;
using vec16::load;
using vec16::store;
using vec16::Vec16;
using vec16::Vec8;

// What each output pixel's sum is divided by: the taps inside the image, or with
// count_include_pad those inside the image and its explicit pads (not the extra row or
// column ceil_mode may add), as the NCHW kernel counts them. Per output row and column.
struct Divisors {
    std::vector<int64_t> rows, columns;
    static std::vector<int64_t> along(int64_t out, int64_t in, int64_t k, int64_t stride,
                                      int64_t dilation, int64_t padBegin, int64_t padEnd,
                                      bool includePad) {
        std::vector<int64_t> counts(static_cast<size_t>(out));
        for (int64_t o = 0; o < out; ++o) {
            const int64_t start = o * stride - padBegin;
            if (includePad) {
                const int64_t end = std::min(start + (k - 1) * dilation + 1, in + padEnd);
                counts[size_t(o)] = (end - start + dilation - 1) / dilation;
            } else {
                int64_t inside = 0;
                for (int64_t t = 0; t < k; ++t)
                    inside += start + t * dilation >= 0 && start + t * dilation < in;
                counts[size_t(o)] = inside;
            }
        }
        return counts;
    }
    float of(int64_t oy, int64_t ox) const {
        return float(std::max<int64_t>(1, rows[size_t(oy)] * columns[size_t(ox)]));
    }
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// V vectors of channels from c0 of output pixel (oy, ox): the window's pixels inside the
// image summed in registers, then divided once.
template <typename Vec, int V>
[[gnu::always_inline]] inline void averageBlock(const NhwcWindow& s, const float* image, float* out,
                                                int64_t oy, int64_t ox, int64_t c0, float divisor) {
    constexpr int L = kLanes<Vec>;
    Vec acc[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[v] = Vec{};
    for (int64_t ky = 0; ky < s.kh; ++ky) {
        const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
        if (iy < 0 || iy >= s.ih) continue;
        for (int64_t kx = 0; kx < s.kw; ++kx) {
            const int64_t ix = ox * s.sw - s.pw + kx * s.dw;
            if (ix < 0 || ix >= s.iw) continue;
            const float* in = image + (iy * s.iw + ix) * s.c + c0;
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[v] += load<Vec>(in + L * v);
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) store(out + c0 + L * v, acc[v] / divisor);
}

// One output row: blocks of four vectors of channels, then single vectors, then one more
// vector overlapping the last (the same sums again); under one vector, channel by channel.
template <typename Vec>
[[gnu::always_inline]] inline void averageRowOf(const NhwcWindow& s, const Divisors& d,
                                                const float* image, float* row, int64_t oy) {
    constexpr int L = kLanes<Vec>;
    for (int64_t ox = 0; ox < s.ow; ++ox) {
        float* out = row + ox * s.c;
        const float divisor = d.of(oy, ox);
        if (s.c < L) {
            for (int64_t ch = 0; ch < s.c; ++ch) {
                float sum = 0.f;
                for (int64_t ky = 0; ky < s.kh; ++ky)
                    for (int64_t kx = 0; kx < s.kw; ++kx) {
                        const int64_t iy = oy * s.sh - s.ph + ky * s.dh,
                                      ix = ox * s.sw - s.pw + kx * s.dw;
                        if (iy >= 0 && iy < s.ih && ix >= 0 && ix < s.iw)
                            sum += image[(iy * s.iw + ix) * s.c + ch];
                    }
                out[ch] = sum / divisor;
            }
            continue;
        }
        int64_t c0 = 0;
        for (; c0 + 4 * L <= s.c; c0 += 4 * L)
            averageBlock<Vec, 4>(s, image, out, oy, ox, c0, divisor);
        for (; c0 + L <= s.c; c0 += L) averageBlock<Vec, 1>(s, image, out, oy, ox, c0, divisor);
        if (c0 < s.c) averageBlock<Vec, 1>(s, image, out, oy, ox, s.c - L, divisor);
    }
}

using RowFn = void (*)(const NhwcWindow&, const Divisors&, const float*, float*, int64_t);
[[gnu::target("avx512f")]] void rowAvx512(const NhwcWindow& s, const Divisors& d,
                                          const float* image, float* row, int64_t oy) {
    averageRowOf<Vec16>(s, d, image, row, oy);
}
[[gnu::target("avx2")]] void rowAvx2(const NhwcWindow& s, const Divisors& d, const float* image,
                                     float* row, int64_t oy) {
    averageRowOf<Vec8>(s, d, image, row, oy);
}
void rowBaseline(const NhwcWindow& s, const Divisors& d, const float* image, float* row,
                 int64_t oy) {
    averageRowOf<Vec16>(s, d, image, row, oy);
}

#pragma GCC diagnostic pop

RowFn rowForThisCpu() {
    static const RowFn chosen = vec16::forThisCpu<RowFn>(rowAvx512, rowAvx2, rowBaseline);
    return chosen;
}

class ChannelsLastAveragePool : public Kernel {
public:
    explicit ChannelsLastAveragePool(const KernelInit& init)
        : m_attrs(readWindowAttrs(init)),
          m_ceil(init.getInt("ceil_mode", 0) != 0),
          m_countIncludePad(init.getInt("count_include_pad", 0) != 0) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x || x->rank() != 4)
            return bad(ctx, "a channels-last AveragePool needs X [N, H, W, C]");
        if (x->dtype != DType::Float32)
            return bad(ctx, "a channels-last AveragePool takes float32");
        if (m_attrs.kernelShape.size() != 2) return bad(ctx, "kernel_shape must have 2 dims");
        const int64_t n = x->dims[0], c = x->dims[3];
        auto geo =
            convGeometry(ctx, m_attrs, {x->dims[1], x->dims[2]}, m_attrs.kernelShape, m_ceil);
        if (!geo) return geo.status();
        auto out = ctx.output(0, x->dtype, {n, geo->out[0], geo->out[1], c});
        if (!out) return out.status();
        if ((*out)->numel() == 0) return Status::ok();
        const NhwcWindow s{n,
                           c,
                           x->dims[1],
                           x->dims[2],
                           geo->out[0],
                           geo->out[1],
                           geo->kernel[0],
                           geo->kernel[1],
                           geo->strides[0],
                           geo->strides[1],
                           geo->dilations[0],
                           geo->dilations[1],
                           geo->padBegin[0],
                           geo->padBegin[1]};
        // Only explicit pads count for count_include_pad (auto_pad's are not), as in NCHW.
        const bool explicitPads = !m_attrs.pads.empty() && m_attrs.autoPad == "NOTSET";
        const Divisors d{Divisors::along(s.oh, s.ih, s.kh, s.sh, s.dh, s.ph,
                                         explicitPads ? m_attrs.pads[2] : 0, m_countIncludePad),
                         Divisors::along(s.ow, s.iw, s.kw, s.sw, s.dw, s.pw,
                                         explicitPads ? m_attrs.pads[3] : 0, m_countIncludePad)};
        const RowFn row = rowForThisCpu();
        const float* px = x->as<float>();
        float* py = (*out)->as<float>();
        ctx.pool().parallelFor(
            n * s.oh, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, s.ow * c * s.kh * s.kw)),
            [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r)
                    row(s, d, px + (r / s.oh) * s.ih * s.iw * c, py + r * s.ow * c, r % s.oh);
            });
        return Status::ok();
    }

private:
    WindowAttrs m_attrs;
    bool m_ceil, m_countIncludePad;
};

// com.microsoft.QLinearAveragePool: AveragePool of 8-bit X, quantized again (X, x_scale,
// x_zero_point, y_scale, y_zero_point; AveragePool's attributes and `channels_last`). Each
// window's bytes are summed exactly in int32, less x_zero per tap, scaled by x_scale over the
// divisor in float32 and quantized as QuantizeLinear does: within a step of the QDQ form's
// DequantizeLinear, AveragePool, QuantizeLinear, which round each dequantized value and each
// partial sum. NCHW X runs as [N x C, H, W, 1] NHWC images.
struct BytePoolTerms {
    float xZero, xScale, yScale, yZero;
};

template <typename Q>
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void averageRowBytes(
    const NhwcWindow& s, const Divisors& d, const Q* image, Q* row, int64_t oy, const BytePoolTerms& t) {
    thread_local std::vector<int32_t> sums;
    thread_local std::vector<float> values;
    sums.resize(size_t(s.c));
    values.resize(size_t(s.c));
    for (int64_t ox = 0; ox < s.ow; ++ox) {
        std::fill(sums.begin(), sums.end(), 0);
        int64_t taps = 0;
        for (int64_t ky = 0; ky < s.kh; ++ky) {
            const int64_t iy = oy * s.sh - s.ph + ky * s.dh;
            if (iy < 0 || iy >= s.ih) continue;
            for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t ix = ox * s.sw - s.pw + kx * s.dw;
                if (ix < 0 || ix >= s.iw) continue;
                const Q* in = image + (iy * s.iw + ix) * s.c;
                int32_t* __restrict acc = sums.data();
                for (int64_t ch = 0; ch < s.c; ++ch) acc[ch] += int32_t(in[ch]);
                ++taps;
            }
        }
        const float scale = t.xScale / d.of(oy, ox), offset = float(taps) * t.xZero;
        for (int64_t ch = 0; ch < s.c; ++ch) values[size_t(ch)] = (float(sums[size_t(ch)]) - offset) * scale;
        Q* out = row + ox * s.c;
        if constexpr (std::is_same_v<Q, uint8_t>) quantizeUint8Array(values.data(), out, s.c, t.yScale, t.yZero);
        else quantizeInt8Array(values.data(), out, s.c, t.yScale, t.yZero);
    }
}

class QLinearAveragePool : public Kernel {
public:
    explicit QLinearAveragePool(const KernelInit& init)
        : m_attrs(readWindowAttrs(init)),
          m_ceil(init.getInt("ceil_mode", 0) != 0),
          m_countIncludePad(init.getInt("count_include_pad", 0) != 0),
          m_channelsLast(init.getInt("channels_last", 0) != 0) {}

    Status compute(KernelContext& ctx) override {
        // X, x_scale, x_zero_point, y_scale, y_zero_point
        const RtTensor *x = ctx.input(0), *xs = ctx.input(1), *xz = ctx.input(2), *ys = ctx.input(3), *yz = ctx.input(4);
        if (!x || !xs || !ys) return bad(ctx, "needs X, x_scale and y_scale");
        if (x->dtype != DType::UInt8 && x->dtype != DType::Int8) return unsupportedType(ctx, x->dtype);
        if (x->rank() != 4 || m_attrs.kernelShape.size() != 2) return bad(ctx, "only 2-D pooling of a 4-D X is supported");
        if (xs->numel() != 1 || ys->numel() != 1 || (xz && xz->numel() != 1) || (yz && yz->numel() != 1))
            return bad(ctx, "scales and zero points must be scalars");
        if ((xz && xz->dtype != x->dtype) || (yz && yz->dtype != x->dtype)) return bad(ctx, "zero points must be of X's type");
        const BytePoolTerms t{xz ? float(elementAsDouble(*xz, 0)) : 0.0f, float(elementAsDouble(*xs, 0)),
                              float(elementAsDouble(*ys, 0)), yz ? float(elementAsDouble(*yz, 0)) : 0.0f};
        if (!std::isfinite(t.yScale) || t.yScale == 0) return bad(ctx, "y_scale must be finite and not 0");
        // As NHWC images: [N, H, W, C], or NCHW's planes as [N x C, H, W, 1].
        const int64_t images = m_channelsLast ? x->dims[0] : x->dims[0] * x->dims[1];
        const int64_t h = m_channelsLast ? x->dims[1] : x->dims[2], w = m_channelsLast ? x->dims[2] : x->dims[3];
        const int64_t c = m_channelsLast ? x->dims[3] : 1;
        auto geo = convGeometry(ctx, m_attrs, {h, w}, m_attrs.kernelShape, m_ceil);
        if (!geo) return geo.status();
        const std::vector<int64_t> dims = m_channelsLast
                                              ? std::vector<int64_t>{x->dims[0], geo->out[0], geo->out[1], c}
                                              : std::vector<int64_t>{x->dims[0], x->dims[1], geo->out[0], geo->out[1]};
        auto out = ctx.output(0, x->dtype, dims);
        if (!out) return out.status();
        if ((*out)->numel() == 0) return Status::ok();
        const NhwcWindow s{images, c, h, w, geo->out[0], geo->out[1], geo->kernel[0], geo->kernel[1], geo->strides[0],
                           geo->strides[1], geo->dilations[0], geo->dilations[1], geo->padBegin[0], geo->padBegin[1]};
        const bool explicitPads = !m_attrs.pads.empty() && m_attrs.autoPad == "NOTSET";
        const Divisors d{Divisors::along(s.oh, s.ih, s.kh, s.sh, s.dh, s.ph, explicitPads ? m_attrs.pads[2] : 0,
                                         m_countIncludePad),
                         Divisors::along(s.ow, s.iw, s.kw, s.sw, s.dw, s.pw, explicitPads ? m_attrs.pads[3] : 0,
                                         m_countIncludePad)};
        auto run = [&](auto tag) {
            using Q = decltype(tag);
            const Q* px = x->as<Q>();
            Q* py = (*out)->as<Q>();
            ctx.pool().parallelFor(images * s.oh, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, s.ow * c * s.kh * s.kw)),
                                   [&](int64_t b, int64_t e) {
                                       for (int64_t r = b; r < e; ++r)
                                           averageRowBytes(s, d, px + (r / s.oh) * s.ih * s.iw * c, py + r * s.ow * c,
                                                           r % s.oh, t);
                                   });
        };
        if (x->dtype == DType::UInt8) run(uint8_t{});
        else run(int8_t{});
        return Status::ok();
    }

private:
    WindowAttrs m_attrs;
    bool m_ceil, m_countIncludePad, m_channelsLast;
};

}  // namespace

KernelFactory qlinearAveragePool() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new QLinearAveragePool(init));
    };
}

KernelFactory channelsLastAveragePool() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new ChannelsLastAveragePool(init));
    };
}

}  // namespace fsc::cpu
