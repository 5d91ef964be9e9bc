// com.microsoft.QLinearGlobalAveragePool: each channel's mean of 8-bit values, quantized
// again. The sum of x - x_zero is exact in integers; the mean is taken in double and then
// quantized as QuantizeLinear does (float32 division, half to even, saturated), so it agrees
// with the QDQ form's DequantizeLinear, GlobalAveragePool, QuantizeLinear up to the float
// rounding of their sum (at most one step where a value lies on a rounding boundary).
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/average_pool_nhwc.h"
#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

// The mean of `sum` over `size` values of x, quantized to Y.
template <typename Q>
Q quantizedMean(int64_t sum, int64_t size, float xZero, double xScale, float yScale, float yZero) {
    constexpr double lo = double(std::numeric_limits<Q>::lowest()), hi = double(std::numeric_limits<Q>::max());
    const double mean = xScale * (double(sum) - double(xZero) * double(size)) / double(std::max<int64_t>(size, 1));
    const double v = std::nearbyint(double(float(mean) / yScale)) + double(yZero);
    return std::isnan(v) ? Q(0) : Q(std::clamp(v, lo, hi));
}

// NCHW: each plane contiguous.
template <typename Q>
void poolPlanes(ThreadPool& pool, const Q* x, Q* y, int64_t planes, int64_t size, float xZero, double xScale,
                float yScale, float yZero) {
    pool.parallelFor(planes, 1, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) {
            int64_t sum = 0;
            for (int64_t i = 0; i < size; ++i) sum += int64_t(x[p * size + i]);
            y[p] = quantizedMean<Q>(sum, size, xZero, xScale, yScale, yZero);
        }
    });
}

// NHWC: a block of channels summed along each pixel's row in vector lanes (walking each
// channel's plane at a stride of c bytes took a 7 x 7 x 1280 pool 32 us, ONNX Runtime 11).
template <typename Q>
void poolPixels(ThreadPool& pool, const Q* x, Q* y, int64_t n, int64_t c, int64_t size, float xZero, double xScale,
                float yScale, float yZero) {
    constexpr int64_t kBlock = 256;
    const int64_t blocks = (c + kBlock - 1) / kBlock;
    pool.parallelFor(n * blocks, 1, [&](int64_t first, int64_t last) {
        for (int64_t t = first; t < last; ++t) {
            const int64_t image = t / blocks, c0 = (t % blocks) * kBlock, width = std::min(kBlock, c - c0);
            const Q* in = x + image * size * c + c0;
            int64_t sums[kBlock] = {};
            // int32 partial sums in lanes, folded into int64 before they could overflow
            constexpr int64_t kRun = int64_t(1) << 23;  // 2^23 values of at most 2^8 each
            for (int64_t p0 = 0; p0 < size; p0 += kRun) {
                int32_t part[kBlock] = {};
                for (int64_t p = p0; p < std::min(size, p0 + kRun); ++p)
                    for (int64_t j = 0; j < width; ++j) part[j] += int32_t(in[p * c + j]);
                for (int64_t j = 0; j < width; ++j) sums[j] += part[j];
            }
            for (int64_t j = 0; j < width; ++j)
                y[image * c + c0 + j] = quantizedMean<Q>(sums[j], size, xZero, xScale, yScale, yZero);
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
    auto pool = [&](auto* in, auto* out) {
        if (channelsLast) poolPixels(ctx.pool(), in, out, n, c, size, xZero, xScale, yScale, yZero);
        else poolPlanes(ctx.pool(), in, out, n * c, size, xZero, xScale, yScale, yZero);
    };
    if (x->dtype == DType::UInt8) pool(x->as<uint8_t>(), (*y)->as<uint8_t>());
    else pool(x->as<int8_t>(), (*y)->as<int8_t>());
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
    KernelDef average;
    average.domain = "com.microsoft";
    average.op = "QLinearAveragePool";
    average.factory = cpu::qlinearAveragePool();
    r.add(std::move(average));
}

}  // namespace fsc
