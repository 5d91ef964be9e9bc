// Quantization kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv. Integer products are exact (int8
// GEMMs, or double where every int8/int32 sum fits its 53-bit mantissa), then requantized
// with round-half-to-even and saturation, as ONNX specifies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include <limits>
#include <memory>
#include <mutex>

#include "compiler/backends/cpu/dynamic_quantize.h"
#include "compiler/backends/cpu/conv_geometry.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/int8_products.h"
#include "compiler/backends/cpu/qlinear_conv_nhwc.h"
#include "compiler/backends/cpu/thread_scratch.h"
#include "compiler/backends/cpu/qlinear_depthwise.h"
#include "compiler/backends/cpu/requantize.h"
#include "compiler/backends/cpu/vector_math.h"

namespace fsc::cpu {

DynamicQuantization dynamicQuantizeUint8(ThreadPool& pool, const float* x, int64_t n, uint8_t* y) {
    constexpr int64_t kGrain = 1 << 16;
    float lo = 0, hi = 0;
    std::mutex merge;
    pool.parallelFor(n, kGrain, [&](int64_t b, int64_t e) {
        float l = 0, h = 0;
        minMaxArray(x + b, e - b, l, h);
        std::lock_guard lock(merge);
        lo = std::min(lo, l);
        hi = std::max(hi, h);
    });
    const float scale = (hi - lo) / 255.0f;
    const float zpRaw = scale == 0 ? 0.0f : std::nearbyint(0.0f - lo / scale);  // NaN when lo is -inf
    const float zpF = std::isnan(zpRaw) ? 0.0f : std::clamp(zpRaw, 0.0f, 255.0f);
    if (std::isfinite(scale) && scale != 0) {
        pool.parallelFor(n, kGrain, [&](int64_t b, int64_t e) { quantizeUint8Array(x + b, y + b, e - b, scale, zpF); });
    } else {
        for (int64_t i = 0; i < n; ++i) {
            const float v = scale == 0 ? zpF : std::nearbyint(x[i] / scale) + zpF;
            y[i] = v == v ? uint8_t(std::clamp(v, 0.0f, 255.0f)) : 0;  // NaN saturates to 0
        }
    }
    return {scale, uint8_t(zpF)};
}

namespace {

// Parameter values (scale or zero point) for element i of a tensor quantized along `axis`:
// a scalar applies to everything, a 1-D tensor to the slices along the axis.
struct PerAxis {
    const RtTensor* t = nullptr;
    int64_t axis = 0;
    int64_t inner = 1;  // elements per slice step along the axis
    int64_t len = 1;
    double at(int64_t i) const {
        if (!t || t->numel() == 0) return 0.0;
        if (t->numel() == 1) return elementAsDouble(*t, 0);
        return elementAsDouble(*t, (i / inner) % len);
    }
};

Result<PerAxis> perAxis(const KernelContext& ctx, const RtTensor* param, const RtTensor& data, int64_t axisAttr) {
    PerAxis p;
    p.t = param;
    if (!param || param->numel() <= 1) return p;
    auto axis = normAxis(ctx, axisAttr, int64_t(data.rank()));
    if (!axis) return axis.status();
    p.axis = *axis;
    p.len = data.dims[size_t(*axis)];
    p.inner = product(data.dims, size_t(*axis) + 1);
    if (param->numel() != p.len)
        return bad(ctx, "per-axis parameter has " + std::to_string(param->numel()) + " elements for an axis of " + std::to_string(p.len));
    return p;
}

template <typename T>
T saturate(double v) {
    const double lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
    if (std::isnan(v)) return T(0);  // ONNX leaves NaN open; converting it to an integer is undefined
    return T(std::clamp(std::nearbyint(v), lo, hi));
}

Status writeQuantized(KernelContext& ctx, RtTensor& out, int64_t i, double v) {
    switch (out.dtype) {
        case DType::UInt8: out.as<uint8_t>()[i] = saturate<uint8_t>(v); return Status::ok();
        case DType::Int8: out.as<int8_t>()[i] = saturate<int8_t>(v); return Status::ok();
        case DType::UInt16: out.as<uint16_t>()[i] = saturate<uint16_t>(v); return Status::ok();
        case DType::Int16: out.as<int16_t>()[i] = saturate<int16_t>(v); return Status::ok();
        case DType::Int32: out.as<int32_t>()[i] = saturate<int32_t>(v); return Status::ok();
        default: return unsupportedType(ctx, out.dtype);
    }
}

// x / scale in the input's precision: float32 unless x is double, as ONNX's reference and
// ONNX Runtime divide (in double, a quotient float32 rounds to exactly .5 can fall just
// below it, and the result is one quantization step off).
double quotient(double x, double scale, DType xType) {
    return xType == DType::Float64 ? x / scale : double(float(x) / float(scale));
}

// The common case of QuantizeLinear (float32 in, one scale, 8-bit out) as one typed loop,
// split across the pool.
template <typename Q>
Status quantizeFloats(KernelContext& ctx, const RtTensor& x, double scale, double zero, RtTensor& out) {
    const float* px = x.as<float>();
    Q* po = out.as<Q>();
    const double lo = double(std::numeric_limits<Q>::lowest()), hi = double(std::numeric_limits<Q>::max());
    const float scaleF = float(scale);
    if (std::isfinite(scaleF) && scaleF != 0 && zero >= lo && zero <= hi && zero == std::nearbyint(zero)) {
        ctx.pool().parallelFor(x.numel(), 1 << 14, [&](int64_t b, int64_t e) {
            if constexpr (std::is_same_v<Q, uint8_t>) quantizeUint8Array(px + b, po + b, e - b, scaleF, float(zero));
            else quantizeInt8Array(px + b, po + b, e - b, scaleF, float(zero));
        });
        return Status::ok();
    }
    ctx.pool().parallelFor(x.numel(), 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            const double v = std::nearbyint(quotient(px[i], scale, DType::Float32)) + zero;
            po[i] = std::isnan(v) ? Q(0) : Q(std::clamp(v, lo, hi));  // as saturate()
        }
    });
    return Status::ok();
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void requantizeRowU8(const int32_t* a, uint8_t* o, int64_t n,
                                                                         int32_t bias, float scale, float yZero) {
    requantizeRow(a, o, n, bias, scale, yZero);
}
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void requantizeRowS8(const int32_t* a, int8_t* o, int64_t n,
                                                                         int32_t bias, float scale, float yZero) {
    requantizeRow(a, o, n, bias, scale, yZero);
}

// `inner` elements per channel, channels repeating every `channels` rows.
template <typename Q>
void requantize(KernelContext& ctx, const int32_t* acc, int64_t count, int64_t channels, int64_t inner,
                const std::vector<float>& scale, const std::vector<int32_t>& bias, float yZero, Q* out) {
    ctx.pool().parallelFor(count / inner, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
            const size_t c = size_t(row % channels);
            if constexpr (std::is_same_v<Q, uint8_t>)
                requantizeRowU8(acc + row * inner, out + row * inner, inner, bias[c], scale[c], yZero);
            else
                requantizeRowS8(acc + row * inner, out + row * inner, inner, bias[c], scale[c], yZero);
        }
    });
}

KernelFactory quantizeLinear() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axis = init.getInt("axis", 1);
        const int64_t outputDtype = init.getInt("output_dtype", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* scale = ctx.input(1);
            const RtTensor* zp = ctx.input(2);
            if (!x || !scale) return bad(ctx, "needs x and y_scale");
            DType outType = zp ? zp->dtype : DType::UInt8;
            if (outputDtype) outType = dtypeFromOnnx(int32_t(outputDtype)).value_or(DType::UInt8);
            auto s = perAxis(ctx, scale, *x, axis);
            if (!s) return s.status();
            auto z = perAxis(ctx, zp, *x, axis);
            if (!z) return z.status();
            auto out = ctx.output(0, outType, x->dims);
            if (!out) return out.status();
            if (x->dtype == DType::Float32 && scale->numel() == 1 && (!zp || zp->numel() == 1)) {
                if (outType == DType::UInt8) return quantizeFloats<uint8_t>(ctx, *x, s->at(0), z->at(0), **out);
                if (outType == DType::Int8) return quantizeFloats<int8_t>(ctx, *x, s->at(0), z->at(0), **out);
            }
            for (int64_t i = 0; i < x->numel(); ++i)
                FSC_RETURN_IF_ERROR(writeQuantized(ctx, **out, i,
                                                   std::nearbyint(quotient(elementAsDouble(*x, i), s->at(i), x->dtype)) + z->at(i)));
            return Status::ok();
        }));
    };
}

// DequantizeLinear of 8- and 16-bit integers to float32, a run of elements sharing one scale
// and zero point at a time (the whole tensor, or one slice along the axis): x - zero is exact
// in float, so one rounding, as the double form gives. Activations between the QDQ form's
// layers went through per-element index arithmetic: 15 ns an element.
template <typename Q>
Status dequantizeToFloat(KernelContext& ctx, const RtTensor& x, const PerAxis& s, const PerAxis& z, float* y) {
    const Q* px = x.as<Q>();
    const int64_t n = x.numel();
    const bool scalePerAxis = s.t && s.t->numel() > 1, zeroPerAxis = z.t && z.t->numel() > 1;
    const int64_t run = scalePerAxis ? s.inner : (zeroPerAxis ? z.inner : std::max<int64_t>(n, 1));
    ctx.pool().parallelFor(n, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e;) {
            const int64_t end = std::min(e, (i / run + 1) * run);
            const float scale = float(s.at(i)), zero = float(z.at(i));
            for (int64_t k = i; k < end; ++k) y[k] = (float(px[k]) - zero) * scale;
            i = end;
        }
    });
    return Status::ok();
}

KernelFactory dequantizeLinear() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axis = init.getInt("axis", 1);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* scale = ctx.input(1);
            const RtTensor* zp = ctx.input(2);
            if (!x || !scale) return bad(ctx, "needs x and x_scale");
            auto s = perAxis(ctx, scale, *x, axis);
            if (!s) return s.status();
            auto z = perAxis(ctx, zp, *x, axis);
            if (!z) return z.status();
            auto out = ctx.output(0, scale->dtype, x->dims);
            if (!out) return out.status();
            if (scale->dtype == DType::Float32) {
                float* po = (*out)->as<float>();
                if (x->dtype == DType::UInt8) return dequantizeToFloat<uint8_t>(ctx, *x, *s, *z, po);
                if (x->dtype == DType::Int8) return dequantizeToFloat<int8_t>(ctx, *x, *s, *z, po);
                if (x->dtype == DType::UInt16) return dequantizeToFloat<uint16_t>(ctx, *x, *s, *z, po);
                if (x->dtype == DType::Int16) return dequantizeToFloat<int16_t>(ctx, *x, *s, *z, po);
            }
            return dispatchFloat(ctx, scale->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                for (int64_t i = 0; i < x->numel(); ++i) po[i] = T((elementAsDouble(*x, i) - z->at(i)) * s->at(i));
                return Status::ok();
            });
        }));
    };
}

Status dynamicQuantizeLinear(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    if (!x || x->dtype != DType::Float32) return bad(ctx, "needs a float32 input");
    auto y = ctx.output(0, DType::UInt8, x->dims);
    auto ys = ctx.output(1, DType::Float32, {});
    auto yz = ctx.output(2, DType::UInt8, {});
    if (!y) return y.status();
    if (!ys) return ys.status();
    if (!yz) return yz.status();
    const DynamicQuantization q = dynamicQuantizeUint8(ctx.pool(), x->as<float>(), x->numel(), (*y)->as<uint8_t>());
    (*ys)->as<float>()[0] = q.scale;
    (*yz)->as<uint8_t>()[0] = q.zero;
    return Status::ok();
}

// x - zero_point as doubles; the zero point is a scalar or one value per slice of `axis`.
Result<RtTensor> shifted(const KernelContext& ctx, const RtTensor& x, const RtTensor* zp, int64_t axis) {
    RtTensor out = allocateTensor(DType::Float64, x.dims);
    PerAxis z;
    if (zp && zp->numel() > 1) {
        if (axis < 0 || axis >= int64_t(x.rank()) || zp->numel() != x.dims[size_t(axis)])
            return bad(ctx, "zero point " + dimsString(zp->dims) + " does not fit " + dimsString(x.dims));
        z.t = zp;
        z.len = x.dims[size_t(axis)];
        z.inner = product(x.dims, size_t(axis) + 1);
    } else {
        z.t = zp;
    }
    double* po = out.as<double>();
    for (int64_t i = 0; i < x.numel(); ++i) po[i] = elementAsDouble(x, i) - z.at(i);
    return out;
}

// The int32 product (a - a_zero)(b - b_zero): oneDNN's int8 GEMM where the operands fit it,
// else exactly in double (the reference), converted as ONNX accumulates in int32.
Result<RtTensor> toInt32(const RtTensor& exact) {
    RtTensor out = allocateTensor(DType::Int32, exact.dims);
    for (int64_t i = 0; i < exact.numel(); ++i) out.as<int32_t>()[i] = int32_t(exact.as<double>()[i]);
    return out;
}

Result<RtTensor> integerMatMul(KernelContext& ctx, const RtTensor& a, const RtTensor* azp,
                               const RtTensor& b, const RtTensor* bzp) {
    if (b.rank() == 2 && fitsInt8Gemm(a, azp, b, bzp, 1)) return int8MatMul(ctx, a, azp, b, bzp);
    // a's zero point may be per row (axis rank-2), b's per column (axis rank-1).
    auto ad = shifted(ctx, a, azp, int64_t(a.rank()) - 2);
    if (!ad) return ad.status();
    auto bd = shifted(ctx, b, bzp, int64_t(b.rank()) - 1);
    if (!bd) return bd.status();
    auto exact = matMulToNew(ctx, *ad, *bd);
    if (!exact) return exact.status();
    return toInt32(*exact);
}

Status matMulInteger(KernelContext& ctx) {
    const RtTensor* a = ctx.input(0);
    const RtTensor* b = ctx.input(1);
    if (!a || !b) return bad(ctx, "needs A and B");
    auto prod = integerMatMul(ctx, *a, ctx.input(2), *b, ctx.input(3));
    if (!prod) return prod.status();
    auto out = ctx.output(0, DType::Int32, prod->dims);
    if (!out) return out.status();
    std::memcpy((*out)->data, prod->data, prod->bytes());
    return Status::ok();
}

Status qlinearMatMul(KernelContext& ctx) {
    const RtTensor *a = ctx.input(0), *as = ctx.input(1), *azp = ctx.input(2);
    const RtTensor *b = ctx.input(3), *bs = ctx.input(4), *bzp = ctx.input(5);
    const RtTensor *ys = ctx.input(6), *yzp = ctx.input(7);
    if (!a || !as || !b || !bs || !ys) return bad(ctx, "missing inputs");
    auto prod = integerMatMul(ctx, *a, azp, *b, bzp);
    if (!prod) return prod.status();
    auto out = ctx.output(0, yzp ? yzp->dtype : a->dtype, prod->dims);
    if (!out) return out.status();
    const int64_t n = prod->dims.back();
    const int64_t m = prod->rank() >= 2 ? prod->dims[prod->rank() - 2] : 1;
    const double y0 = yzp ? elementAsDouble(*yzp, 0) : 0.0;
    const int32_t* acc = prod->as<int32_t>();
    for (int64_t i = 0; i < prod->numel(); ++i) {
        const double sa = as->numel() > 1 ? elementAsDouble(*as, (i / n) % m) : elementAsDouble(*as, 0);
        const double sb = bs->numel() > 1 ? elementAsDouble(*bs, i % n) : elementAsDouble(*bs, 0);
        FSC_RETURN_IF_ERROR(writeQuantized(ctx, **out, i, std::nearbyint(double(acc[i]) * sa * sb / elementAsDouble(*ys, 0)) + y0));
    }
    return Status::ok();
}

}  // namespace

Result<Requantization> readRequantization(const KernelContext& ctx, int64_t channels) {
    // QLinearConv: x, xs, xzp, w, ws, wzp, ys, yzp, B.
    const RtTensor *x = ctx.input(0), *xs = ctx.input(1), *ws = ctx.input(4), *ys = ctx.input(6),
                   *yzp = ctx.input(7), *bias = ctx.input(8);
    if (!xs || !ws || !ys) return bad(ctx, "missing scales");
    if (bias && bias->numel() != channels)
        return bad(ctx, "B " + dimsString(bias->dims) + " does not fit " + std::to_string(channels) + " channels");
    if (ws->numel() != 1 && ws->numel() != channels)
        return bad(ctx, "w_scale " + dimsString(ws->dims) + " does not fit " + std::to_string(channels) + " channels");
    Requantization rq;
    rq.outType = yzp ? yzp->dtype : x->dtype;
    if (rq.outType != DType::UInt8 && rq.outType != DType::Int8) return unsupportedType(ctx, rq.outType);
    rq.yZero = yzp ? float(elementAsDouble(*yzp, 0)) : 0.0f;
    const float xsv = float(elementAsDouble(*xs, 0)), ysv = float(elementAsDouble(*ys, 0));
    rq.scale.resize(size_t(channels));
    rq.bias.assign(size_t(channels), 0);
    for (int64_t c = 0; c < channels; ++c) {
        rq.scale[size_t(c)] = xsv * float(elementAsDouble(*ws, ws->numel() > 1 ? c : 0)) / ysv;
        rq.finite = rq.finite && std::isfinite(rq.scale[size_t(c)]);
        if (bias) rq.bias[size_t(c)] = int32_t(elementAsInt(*bias, c));
    }
    return rq;
}

namespace {

class ConvIntegerKernel : public Kernel {
public:
    ConvIntegerKernel(const KernelInit& init, bool qlinear) : m_qlinear(qlinear) {
        m_attrs = readWindowAttrs(init);
        m_group = init.getInt("group", 1);
        m_channelsLast = qlinear && init.getInt("channels_last", 0) != 0;
        m_nchwInput = m_channelsLast && init.getString("input_layout", "NHWC") == "NCHW";
    }
    Status compute(KernelContext& ctx) override {
        // ConvInteger: x, w, x_zp, w_zp. QLinearConv: x, xs, xzp, w, ws, wzp, ys, yzp, B.
        const RtTensor* x = ctx.input(0);
        const RtTensor* xzp = ctx.input(2);
        const RtTensor* w = m_qlinear ? ctx.input(3) : ctx.input(1);
        const RtTensor* wzp = m_qlinear ? ctx.input(5) : ctx.input(3);
        if (!x || !w) return bad(ctx, "missing x or w");
        const RtTensor* xZero = xzp && xzp->numel() == 1 ? xzp : nullptr;
        const bool weightsConstant = ctx.inputConstant(m_qlinear ? 3 : 1);
        if (m_channelsLast)
            return m_nhwc.run(ctx, m_attrs, m_group, m_nchwInput, weightsConstant,
                              [&](const RtTensor& xNchw) { return accumulators(ctx, xNchw, xZero, *w, wzp, weightsConstant); });
        if (m_qlinear) {
            auto done = qlinearDepthwise(ctx, m_attrs, m_group);
            if (!done) return done.status();
            if (*done) return Status::ok();
        }
        if (!m_qlinear && fitsInt8Gemm(*x, xZero, *w, wzp))  // straight into the output slot
            return int8Conv(
                ctx, m_attrs, m_group, *x, xZero, *w, wzp,
                [&](const std::vector<int64_t>& dims) -> Result<int32_t*> {
                    auto out = ctx.output(0, DType::Int32, dims);
                    if (!out) return out.status();
                    return (*out)->as<int32_t>();
                },
                &m_primitive, weightsConstant, &m_packedWeights, &m_winograd);
        auto acc = accumulators(ctx, *x, xZero, *w, wzp, weightsConstant);
        if (!acc) return acc.status();
        const int32_t* pc = acc->as<int32_t>();
        if (!m_qlinear) {
            auto out = ctx.output(0, DType::Int32, acc->dims);
            if (!out) return out.status();
            std::memcpy((*out)->data, acc->data, acc->bytes());
            return Status::ok();
        }
        const int64_t m = acc->dims[1], spatial = product(acc->dims, 2);
        auto rq = readRequantization(ctx, m);
        if (!rq) return rq.status();
        auto out = ctx.output(0, rq->outType, acc->dims);
        if (!out) return out.status();
        if (rq->outType == DType::UInt8)
            requantize(ctx, pc, acc->numel(), m, spatial, rq->scale, rq->bias, rq->yZero, (*out)->as<uint8_t>());
        else
            requantize(ctx, pc, acc->numel(), m, spatial, rq->scale, rq->bias, rq->yZero, (*out)->as<int8_t>());
        return Status::ok();
    }

private:
    // The int32 accumulators [N, M, out...] of X [N, C, in...]: the int8 GEMM's into the
    // calling thread's scratch (threadScratch) where it fits, else exactly.
    Result<RtTensor> accumulators(KernelContext& ctx, const RtTensor& x, const RtTensor* xZero, const RtTensor& w,
                                  const RtTensor* wzp, bool weightsConstant) {
        if (!fitsInt8Gemm(x, xZero, w, wzp)) return accumulateExactly(ctx, x, xZero, w, wzp);
        RtTensor acc;
        FSC_RETURN_IF_ERROR(int8Conv(ctx, m_attrs, m_group, x, xZero, w, wzp,
                                     [&](const std::vector<int64_t>& dims) -> Result<int32_t*> {
                                         acc.dtype = DType::Int32;
                                         acc.dims = dims;
                                         acc.data = threadScratch<int32_t, ScratchSlot::NchwAccumulators>(size_t(product(dims)));
                                         return acc.as<int32_t>();
                                     },
                                     &m_primitive, weightsConstant, &m_packedWeights, &m_winograd));
        return acc;
    }

    // (x - x_zero) conv (w - w_zero) in int32 exactly through doubles, where the int8 GEMM
    // does not fit (other types, zero points that fit no channel).
    Result<RtTensor> accumulateExactly(KernelContext& ctx, const RtTensor& x, const RtTensor* xZero, const RtTensor& w,
                                       const RtTensor* wzp) {
        auto xd = shifted(ctx, x, xZero, 1);
        if (!xd) return xd.status();
        auto wd = shifted(ctx, w, wzp, 0);
        if (!wd) return wd.status();
        auto conv = convToNew(ctx, m_attrs, m_group, *xd, *wd);
        if (!conv) return conv.status();
        return toInt32(*conv);
    }

    bool m_qlinear;
    bool m_channelsLast = false;  // com.microsoft's `channels_last`: X and Y NHWC
    bool m_nchwInput = false;     // with `input_layout` NCHW: X as the graph has it
    QLinearConvNhwc m_nhwc;
    OneDnnInt8Conv m_primitive;  // used where OneDnnInt8Conv::preferred()
    PackedRowsCache m_packedWeights;  // constant int8 weights as the GEMM without VNNI reads them
    Int8Winograd m_winograd;          // 3x3 layers without VNNI
    WindowAttrs m_attrs;
    int64_t m_group = 1;
};

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerQuantKernels(KernelRegistry& r) {
    r.add("QuantizeLinear", quantizeLinear());
    r.add("DequantizeLinear", dequantizeLinear());
    r.add("DynamicQuantizeLinear", functionKernel(dynamicQuantizeLinear));
    r.add("MatMulInteger", functionKernel(matMulInteger));
    r.add("QLinearMatMul", functionKernel(qlinearMatMul));
    r.add("ConvInteger", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new ConvIntegerKernel(init, false));
    });
    r.add("QLinearConv", [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new ConvIntegerKernel(init, true));
    });
    // ONNX Runtime's own, with `channels_last` (what its NHWC transformer and channels-last write)
    KernelDef nhwc;
    nhwc.domain = "com.microsoft";
    nhwc.op = "QLinearConv";
    nhwc.factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new ConvIntegerKernel(init, true));
    };
    r.add(std::move(nhwc));
}

}  // namespace fsc
