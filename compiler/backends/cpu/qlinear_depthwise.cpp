#include "compiler/backends/cpu/qlinear_depthwise.h"

#include <cmath>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/depthwise_float.h"
#include "compiler/backends/cpu/requantize.h"

namespace fsc::cpu {
namespace {

bool eightBit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

template <typename X>
[[gnu::always_inline]] inline void centeredPlane(const X* x, int64_t n, float zero, float* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = float(x[i]) - zero;
}
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void centeredU8(const uint8_t* x, int64_t n, float zero,
                                                                              float* out) {
    centeredPlane(x, n, zero, out);
}
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void centeredS8(const int8_t* x, int64_t n, float zero,
                                                                              float* out) {
    centeredPlane(x, n, zero, out);
}
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void requantizeFloatsU8(const float* a, uint8_t* o,
                                                                                      int64_t n, int32_t bias,
                                                                                      float scale, float yZero) {
    requantizeRow(a, o, n, bias, scale, yZero);
}
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void requantizeFloatsS8(const float* a, int8_t* o,
                                                                                      int64_t n, int32_t bias,
                                                                                      float scale, float yZero) {
    requantizeRow(a, o, n, bias, scale, yZero);
}

void centered(const RtTensor& t, int64_t offset, int64_t n, float zero, float* out) {
    if (t.dtype == DType::UInt8) centeredU8(t.as<uint8_t>() + offset, n, zero, out);
    else centeredS8(t.as<int8_t>() + offset, n, zero, out);
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
    std::vector<float> taps(size_t(c * kh * kw));
    for (int64_t ch = 0; ch < c; ++ch) {
        const float wZero = wzp ? float(elementAsDouble(*wzp, wzp->numel() > 1 ? ch : 0)) : 0.0f;
        centered(*w, ch * kh * kw, kh * kw, wZero, taps.data() + ch * kh * kw);
    }
    const int64_t inSize = x->dims[2] * x->dims[3], outSize = geo->out[0] * geo->out[1];
    RtTensor& y = **out;
    ctx.pool().parallelFor(n * c, 1, [&](int64_t first, int64_t last) {
        std::vector<float> plane(static_cast<size_t>(inSize)), sums(static_cast<size_t>(outSize));
        DepthwiseScratch scratch;
        for (int64_t p = first; p < last; ++p) {
            const size_t ch = size_t(p % c);
            centered(*x, p * inSize, inSize, xZero, plane.data());
            depthwiseFloatPlane(*geo, plane.data(), taps.data() + ch * size_t(kh * kw), sums.data(), scratch);
            if (rq->outType == DType::UInt8)
                requantizeFloatsU8(sums.data(), y.as<uint8_t>() + p * outSize, outSize, rq->bias[ch], rq->scale[ch], rq->yZero);
            else
                requantizeFloatsS8(sums.data(), y.as<int8_t>() + p * outSize, outSize, rq->bias[ch], rq->scale[ch], rq->yZero);
        }
    });
    return true;
}

}  // namespace fsc::cpu
