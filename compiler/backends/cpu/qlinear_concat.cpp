// com.microsoft.QLinearConcat: Y = quantize(concat(dequantize(X_i))), 8-bit in and out, one
// scale and zero point each (Y_scale, Y_zero_point, then X_i, X_i_scale, X_i_zero_point per
// input). What the QDQ form's DequantizeLinears, Concat and QuantizeLinear compute, by the same
// float32 steps (so the op equals its QDQ form to the bit), a block of bytes at a time in
// cache, or a copy where an input's scale and zero point are Y's. PyTorch's
// quantized Inception blocks join their branches so; ONNX Runtime's quantizer and its
// `extended` level write the op.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/vector_math.h"

namespace fsc::cpu {
namespace {

// A run of bytes through DequantizeLinear with (scale, zero) and QuantizeLinear with Y's, the
// loops those kernels run (so the result is theirs to the bit), a block at a time in cache.
template <typename Q>
void requantizeRun(const Q* in, Q* out, int64_t n, float scale, float zero, float yScale, float yZero) {
    constexpr int64_t kBlock = 256;
    constexpr double lo = double(std::numeric_limits<Q>::lowest()), hi = double(std::numeric_limits<Q>::max());
    float values[kBlock];
    const bool vector = std::isfinite(yScale) && yScale != 0;
    for (int64_t first = 0; first < n; first += kBlock) {
        const int64_t count = std::min(kBlock, n - first);
        for (int64_t k = 0; k < count; ++k) values[k] = (float(in[first + k]) - zero) * scale;
        if (vector) {
            if constexpr (std::is_same_v<Q, uint8_t>) quantizeUint8Array(values, out + first, count, yScale, yZero);
            else quantizeInt8Array(values, out + first, count, yScale, yZero);
            continue;
        }
        for (int64_t k = 0; k < count; ++k) {  // QuantizeLinear's scalar loop
            const double v = std::nearbyint(double(values[k] / yScale)) + yZero;
            out[first + k] = std::isnan(v) ? Q(0) : Q(std::clamp(v, lo, hi));
        }
    }
}

struct Part {
    const RtTensor* x;
    bool copy;  // its scale and zero point are Y's
    int64_t width;  // elements along the axis times those after it
};

template <typename Q>
Status concatQuantized(KernelContext& ctx, const std::vector<Part>& parts, const std::vector<float>& scales,
                       const std::vector<float>& zeros, float yScale, float yZero, int64_t outer, RtTensor& y) {
    int64_t rowWidth = 0;
    for (const Part& p : parts) rowWidth += p.width;
    Q* out = y.as<Q>();
    ctx.pool().parallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(rowWidth, 1)), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
            Q* o = out + row * rowWidth;
            for (size_t i = 0; i < parts.size(); ++i) {
                const Part& p = parts[i];
                const Q* in = p.x->as<Q>() + row * p.width;
                if (p.copy) std::memcpy(o, in, size_t(p.width) * sizeof(Q));
                else requantizeRun(in, o, p.width, scales[i], zeros[i], yScale, yZero);
                o += p.width;
            }
        }
    });
    return Status::ok();
}

Status qlinearConcat(KernelContext& ctx, int64_t axisAttr) {
    const RtTensor *ys = ctx.input(0), *yz = ctx.input(1);
    const size_t inputs = ctx.inputCount();
    if (!ys || !yz || inputs < 5 || (inputs - 2) % 3 != 0)
        return bad(ctx, "needs Y_scale, Y_zero_point, then X, X_scale, X_zero_point for each input");
    const DType type = yz->dtype;
    if (type != DType::UInt8 && type != DType::Int8) return unsupportedType(ctx, type);
    if (ys->numel() != 1 || yz->numel() != 1) return bad(ctx, "Y_scale and Y_zero_point must be scalars");
    const float yScale = float(elementAsDouble(*ys, 0)), yZero = float(elementAsDouble(*yz, 0));
    const RtTensor* first = ctx.input(2);
    if (!first) return bad(ctx, "missing the first input");
    const int64_t rank = int64_t(first->rank());
    const int64_t axis = axisAttr < 0 ? axisAttr + rank : axisAttr;
    if (axis < 0 || axis >= rank) return bad(ctx, "axis " + std::to_string(axisAttr) + " is outside rank " + std::to_string(rank));
    std::vector<int64_t> dims = first->dims;
    dims[size_t(axis)] = 0;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= first->dims[size_t(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= first->dims[size_t(d)];
    std::vector<Part> parts;
    std::vector<float> scales, zeros;
    for (size_t i = 2; i < inputs; i += 3) {
        const RtTensor *x = ctx.input(i), *s = ctx.input(i + 1), *z = ctx.input(i + 2);
        const std::string which = "input " + std::to_string((i - 2) / 3);
        if (!x || !s) return bad(ctx, which + " needs its data and scale");
        if (x->dtype != type || (z && z->dtype != type)) return bad(ctx, which + " is not of Y_zero_point's type");
        if (s->numel() != 1 || (z && z->numel() != 1)) return bad(ctx, which + "'s scale and zero point must be scalars");
        if (int64_t(x->rank()) != rank) return bad(ctx, which + " " + dimsString(x->dims) + " does not match " + dimsString(first->dims));
        for (int64_t d = 0; d < rank; ++d)
            if (d != axis && x->dims[size_t(d)] != first->dims[size_t(d)])
                return bad(ctx, which + " " + dimsString(x->dims) + " does not match " + dimsString(first->dims));
        dims[size_t(axis)] += x->dims[size_t(axis)];
        scales.push_back(float(elementAsDouble(*s, 0)));
        zeros.push_back(z ? float(elementAsDouble(*z, 0)) : 0.0f);
        parts.push_back({x, scales.back() == yScale && zeros.back() == yZero, x->dims[size_t(axis)] * inner});
    }
    auto y = ctx.output(0, type, dims);
    if (!y) return y.status();
    if ((*y)->numel() == 0) return Status::ok();
    if (type == DType::UInt8) return concatQuantized<uint8_t>(ctx, parts, scales, zeros, yScale, yZero, outer, **y);
    return concatQuantized<int8_t>(ctx, parts, scales, zeros, yScale, yZero, outer, **y);
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerQLinearConcatKernel(KernelRegistry& r) {
    KernelDef def;
    def.domain = "com.microsoft";
    def.op = "QLinearConcat";
    def.factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axis = init.getInt("axis", 1);
        return std::unique_ptr<Kernel>(
            new FunctionKernel([axis](KernelContext& ctx) { return cpu::qlinearConcat(ctx, axis); }));
    };
    r.add(std::move(def));
}

}  // namespace fsc
