#include "compiler/backends/cpu/qlinear_depthwise.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/depthwise_plane.h"
#include "compiler/backends/cpu/requantize.h"

namespace fsc::cpu {
namespace {

bool eightBit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// What one plane needs besides its data: the taps (w - w_zero), and the requantization.
struct PlaneParams {
    const float* taps;
    int32_t bias;
    float scale, yZero, xZero;
};

// One plane, start to end in one call: x - x_zero into the bordered buffer's inside (its
// border stays zero), the float loops, the requantization. A 7 x 7 plane is a few dozen
// vector steps, so a call (and the clone's dispatch) per step was most of its time.
template <typename X, typename Y>
[[gnu::always_inline]] inline void quantizedPlane(const DepthwisePlane& g, const X* x, const PlaneParams& p, Y* y,
                                                  float* padded, float* strided, float* sums) {
    const int64_t x0 = std::max<int64_t>(0, g.pw), x1 = std::min<int64_t>(g.paddedW, g.iw + g.pw);
    for (int64_t r = 0; r < g.paddedH && x0 < x1; ++r) {
        const int64_t sy = r - g.ph;
        if (sy < 0 || sy >= g.ih) continue;
        const X* __restrict in = x + sy * g.iw + (x0 - g.pw);
        float* __restrict out = padded + r * g.paddedW + x0;
        for (int64_t i = 0; i < x1 - x0; ++i) out[i] = float(in[i]) - p.xZero;
    }
    depthwiseBordered<float>(g, padded, p.taps, 0.0f, sums, strided);
    requantizeRow(sums, y, g.oh * g.ow, p.bias, p.scale, p.yZero);
}

#define FSC_QUANTIZED_PLANE(name, X, Y)                                                                          \
    [[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void name(                                   \
        const DepthwisePlane& g, const X* x, const PlaneParams& p, Y* y, float* padded, float* strided, float* sums) { \
        quantizedPlane(g, x, p, y, padded, strided, sums);                                                       \
    }
FSC_QUANTIZED_PLANE(planeU8U8, uint8_t, uint8_t)
FSC_QUANTIZED_PLANE(planeU8S8, uint8_t, int8_t)
FSC_QUANTIZED_PLANE(planeS8U8, int8_t, uint8_t)
FSC_QUANTIZED_PLANE(planeS8S8, int8_t, int8_t)
#undef FSC_QUANTIZED_PLANE

void runPlane(const DepthwisePlane& g, const RtTensor& x, int64_t plane, const PlaneParams& p, RtTensor& y,
              float* padded, float* strided, float* sums) {
    const int64_t in = plane * g.ih * g.iw, out = plane * g.oh * g.ow;
    const bool xu = x.dtype == DType::UInt8, yu = y.dtype == DType::UInt8;
    if (xu && yu) planeU8U8(g, x.as<uint8_t>() + in, p, y.as<uint8_t>() + out, padded, strided, sums);
    else if (xu) planeU8S8(g, x.as<uint8_t>() + in, p, y.as<int8_t>() + out, padded, strided, sums);
    else if (yu) planeS8U8(g, x.as<int8_t>() + in, p, y.as<uint8_t>() + out, padded, strided, sums);
    else planeS8S8(g, x.as<int8_t>() + in, p, y.as<int8_t>() + out, padded, strided, sums);
}

}  // namespace

Result<bool> qlinearDepthwise(KernelContext& ctx, const WindowAttrs& attrs, int64_t group) {
    // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
    const RtTensor *x = ctx.input(0), *xzp = ctx.input(2), *w = ctx.input(3), *wzp = ctx.input(5);
    if (!x || !w || x->rank() != 4 || w->rank() != 4 || !eightBit(x->dtype) || !eightBit(w->dtype)) return false;
    const int64_t n = x->dims[0], c = x->dims[1], kh = w->dims[2], kw = w->dims[3];
    if (group <= 1 || group != c || w->dims[0] != c || w->dims[1] != 1) return false;
    if ((xzp && (xzp->numel() != 1 || xzp->dtype != x->dtype)) ||
        (wzp && ((wzp->numel() != 1 && wzp->numel() != c) || wzp->dtype != w->dtype)))
        return false;
    // |x - x_zero|, |w - w_zero| <= 255: the sums stay below 2^24 for up to 258 taps.
    if (kh * kw * 255 * 255 >= (int64_t(1) << 24)) return false;
    auto geo = convGeometry(ctx, attrs, {x->dims[2], x->dims[3]}, {kh, kw}, false);
    if (!geo) return geo.status();
    auto rq = readRequantization(ctx, c);
    if (!rq) return rq.status();
    auto out = ctx.output(0, rq->outType, {n, c, geo->out[0], geo->out[1]});
    if (!out) return out.status();

    const float xZero = xzp ? float(elementAsDouble(*xzp, 0)) : 0.0f;
    std::vector<float> taps(static_cast<size_t>(c * kh * kw));
    for (int64_t ch = 0; ch < c; ++ch) {
        const float wZero = wzp ? float(elementAsDouble(*wzp, wzp->numel() > 1 ? ch : 0)) : 0.0f;
        for (int64_t k = 0; k < kh * kw; ++k)
            taps[size_t(ch * kh * kw + k)] = float(elementAsDouble(*w, ch * kh * kw + k)) - wZero;
    }
    const DepthwisePlane g = planeGeometry(*geo);
    RtTensor& y = **out;
    ctx.pool().parallelFor(n * c, 1, [&](int64_t first, int64_t last) {
        std::vector<float> padded(static_cast<size_t>(g.paddedH * g.paddedW), 0.0f);
        std::vector<float> strided(static_cast<size_t>(stridedScratchSize(g))), sums(static_cast<size_t>(g.oh * g.ow));
        for (int64_t p = first; p < last; ++p) {
            const int64_t ch = p % c;
            const PlaneParams params{taps.data() + ch * kh * kw, rq->bias[size_t(ch)], rq->scale[size_t(ch)], rq->yZero,
                                     xZero};
            runPlane(g, *x, p, params, y, padded.data(), strided.data(), sums.data());
        }
    });
    return true;
}

}  // namespace fsc::cpu
