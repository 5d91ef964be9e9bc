// com.microsoft.QLinearGlobalAveragePool: each channel's mean of 8-bit values, quantized
// again. The sum of x - x_zero is exact in integers; the mean is taken in double and then
// quantized as QuantizeLinear does (float32 division, half to even, saturated), so it agrees
// with the QDQ form's DequantizeLinear, GlobalAveragePool, QuantizeLinear up to the float
// rounding of their sum (at most one step where a value lies on a rounding boundary).
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

template <typename Q>
void poolPlanes(ThreadPool& pool, const Q* x, Q* y, int64_t planes, int64_t size, int64_t channelStride,
                int64_t elementStride, float xZero, double xScale, float yScale, float yZero) {
    constexpr double lo = double(std::numeric_limits<Q>::lowest()), hi = double(std::numeric_limits<Q>::max());
    pool.parallelFor(planes, 1, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) {
            // planes run over (image, channel); NCHW planes are contiguous, NHWC ones strided
            const int64_t image = p / channelStride, channel = p % channelStride;
            const Q* in = x + image * channelStride * size + channel * (elementStride == 1 ? size : 1);
            int64_t sum = 0;
            for (int64_t i = 0; i < size; ++i) sum += int64_t(in[i * elementStride]);
            const double mean = xScale * (double(sum) - double(xZero) * double(size)) / double(std::max<int64_t>(size, 1));
            const double v = std::nearbyint(double(float(mean) / yScale)) + double(yZero);
            y[p] = std::isnan(v) ? Q(0) : Q(std::clamp(v, lo, hi));
        }
    });
}

Status qlinearGlobalAveragePool(KernelContext& ctx, bool channelsLast) {
    const RtTensor *x = ctx.input(0), *xs = ctx.input(1), *xz = ctx.input(2), *ys = ctx.input(3), *yz = ctx.input(4);
    if (!x || !xs || !ys) return bad(ctx, "needs X, x_scale and y_scale");
    if (x->rank() < 3) return bad(ctx, "X must have rank 3 or more, got " + dimsString(x->dims));
    if (x->dtype != DType::UInt8 && x->dtype != DType::Int8) return unsupportedType(ctx, x->dtype);
    if (xs->numel() != 1 || ys->numel() != 1 || (xz && xz->numel() != 1) || (yz && yz->numel() != 1))
        return bad(ctx, "scales and zero points must be scalars");
    if ((xz && xz->dtype != x->dtype) || (yz && yz->dtype != x->dtype))
        return bad(ctx, "zero points must be of X's type");
    const int64_t n = x->dims[0], c = channelsLast ? x->dims.back() : x->dims[1];
    const int64_t size = c ? x->numel() / std::max<int64_t>(n * c, 1) : 0;
    std::vector<int64_t> dims(x->rank(), 1);
    dims[0] = n;
    dims[channelsLast ? x->rank() - 1 : 1] = c;
    auto y = ctx.output(0, x->dtype, dims);
    if (!y) return y.status();
    const float xZero = xz ? float(elementAsDouble(*xz, 0)) : 0.0f, yZero = yz ? float(elementAsDouble(*yz, 0)) : 0.0f;
    const double xScale = float(elementAsDouble(*xs, 0));
    const float yScale = float(elementAsDouble(*ys, 0));
    const int64_t elementStride = channelsLast ? c : 1;
    if (x->dtype == DType::UInt8)
        poolPlanes(ctx.pool(), x->as<uint8_t>(), (*y)->as<uint8_t>(), n * c, size, c, elementStride, xZero, xScale,
                   yScale, yZero);
    else
        poolPlanes(ctx.pool(), x->as<int8_t>(), (*y)->as<int8_t>(), n * c, size, c, elementStride, xZero, xScale,
                   yScale, yZero);
    return Status::ok();
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerQLinearPoolKernel(KernelRegistry& r) {
    KernelDef def;
    def.domain = "com.microsoft";
    def.op = "QLinearGlobalAveragePool";
    def.factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool channelsLast = init.getInt("channels_last", 0) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel(
            [channelsLast](KernelContext& ctx) { return cpu::qlinearGlobalAveragePool(ctx, channelsLast); }));
    };
    r.add(std::move(def));
}

}  // namespace fsc
