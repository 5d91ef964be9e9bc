// com.microsoft.QLinearAdd and QLinearMul: C = quantize(dequantize(A) + or x dequantize(B)),
// 8-bit in and out, one scale and zero point each, numpy broadcasting. They compute what the
// QDQ form's DequantizeLinear, DequantizeLinear, Add or Mul, QuantizeLinear compute, in
// float32 as they do (so qdq-folding's fused node gives their result to the bit), a block of
// a row at a time in registers instead of three float tensors through memory. ONNX Runtime's
// quantizer writes them for residual additions and squeeze-and-excitation scales, and its
// `extended` level makes them from the QDQ form.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/vector_math.h"

namespace fsc::cpu {
namespace {

struct QuantParams {
    float scale = 1;
    float zero = 0;
};

Result<QuantParams> readParams(const KernelContext& ctx, const RtTensor* scale, const RtTensor* zero,
                               DType dataType, const char* name) {
    if (!scale || scale->numel() != 1 || (zero && zero->numel() != 1))
        return bad(ctx, std::string(name) + "'s scale and zero point must be scalars");
    if (zero && zero->dtype != dataType)
        return bad(ctx, std::string(name) + "'s zero point is not of its data's type");
    return QuantParams{float(elementAsDouble(*scale, 0)), zero ? float(elementAsDouble(*zero, 0)) : 0.0f};
}

enum class Binary { Add, Mul };

template <Binary Op>
[[gnu::always_inline]] inline float combined(float a, float b) {
    if constexpr (Op == Binary::Add) return a + b;
    else return a * b;
}

// A row of the result: each side's run is contiguous (stride 1) or one element repeated
// (stride 0). Dequantizing is exact up to its one rounding of (x - zero) x scale, the sum or
// product rounds once, then the quantize loop QuantizeLinear runs.
template <Binary Op, typename Q>
void binaryRow(const Q* a, int64_t strideA, const Q* b, int64_t strideB, Q* c, int64_t n, QuantParams pa,
            QuantParams pb, QuantParams pc, bool vectorQuantize) {
    constexpr int64_t kBlock = 256;
    float sum[kBlock];
    for (int64_t first = 0; first < n; first += kBlock) {
        const int64_t count = std::min(kBlock, n - first);
        const Q* ra = a + first * strideA;
        const Q* rb = b + first * strideB;
        if (strideA && strideB)
            for (int64_t i = 0; i < count; ++i)
                sum[i] = combined<Op>((float(ra[i]) - pa.zero) * pa.scale, (float(rb[i]) - pb.zero) * pb.scale);
        else
            for (int64_t i = 0; i < count; ++i)
                sum[i] = combined<Op>((float(ra[i * strideA]) - pa.zero) * pa.scale,
                                      (float(rb[i * strideB]) - pb.zero) * pb.scale);
        Q* out = c + first;
        if (vectorQuantize) {
            if constexpr (std::is_same_v<Q, uint8_t>) quantizeUint8Array(sum, out, count, pc.scale, pc.zero);
            else quantizeInt8Array(sum, out, count, pc.scale, pc.zero);
            continue;
        }
        constexpr double lo = double(std::numeric_limits<Q>::lowest()), hi = double(std::numeric_limits<Q>::max());
        for (int64_t i = 0; i < count; ++i) {  // a scale of 0 or not finite: as QuantizeLinear's scalar loop
            const double v = std::nearbyint(double(sum[i] / pc.scale)) + pc.zero;
            out[i] = std::isnan(v) ? Q(0) : Q(std::clamp(v, lo, hi));
        }
    }
}

template <Binary Op, typename Q>
Status binaryQuantized(KernelContext& ctx, const RtTensor& a, const RtTensor& b, RtTensor& c, QuantParams pa,
                    QuantParams pb, QuantParams pc) {
    const bool vectorQuantize = std::isfinite(pc.scale) && pc.scale != 0;
    const Q *qa = a.as<Q>(), *qb = b.as<Q>();
    Q* qc = c.as<Q>();
    if (a.dims == b.dims) {
        ctx.pool().parallelFor(c.numel(), 1 << 14, [&](int64_t first, int64_t last) {
            binaryRow<Op>(qa + first, 1, qb + first, 1, qc + first, last - first, pa, pb, pc, vectorQuantize);
        });
        return Status::ok();
    }
    const BroadcastRows plan = planBroadcast(c.dims, {&a.dims, &b.dims});
    forEachRow(ctx.pool(), plan, [&](int64_t out, const int64_t* offsets) {
        binaryRow<Op>(qa + offsets[0], plan.rowStride[0], qb + offsets[1], plan.rowStride[1], qc + out, plan.rowLength,
                      pa, pb, pc, vectorQuantize);
    });
    return Status::ok();
}

template <Binary Op>
Status qlinearBinary(KernelContext& ctx) {
    // A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point
    const RtTensor* a = ctx.input(0);
    const RtTensor* b = ctx.input(3);
    if (!a || !b) return bad(ctx, "needs A and B");
    if (a->dtype != b->dtype || (a->dtype != DType::UInt8 && a->dtype != DType::Int8))
        return bad(ctx, "A and B must both be uint8 or both int8");
    auto pa = readParams(ctx, ctx.input(1), ctx.input(2), a->dtype, "A");
    if (!pa) return pa.status();
    auto pb = readParams(ctx, ctx.input(4), ctx.input(5), a->dtype, "B");
    if (!pb) return pb.status();
    auto pc = readParams(ctx, ctx.input(6), ctx.input(7), a->dtype, "C");
    if (!pc) return pc.status();
    auto dims = broadcastShapes(ctx, {&a->dims, &b->dims});
    if (!dims) return dims.status();
    auto c = ctx.output(0, a->dtype, *dims);
    if (!c) return c.status();
    if (a->dtype == DType::UInt8) return binaryQuantized<Op, uint8_t>(ctx, *a, *b, **c, *pa, *pb, *pc);
    return binaryQuantized<Op, int8_t>(ctx, *a, *b, **c, *pa, *pb, *pc);
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerQLinearBinaryKernels(KernelRegistry& r) {
    for (const char* op : {"QLinearAdd", "QLinearMul"}) {
        KernelDef def;
        def.domain = "com.microsoft";
        def.op = op;
        def.factory = functionKernel(std::string(op) == "QLinearAdd" ? cpu::qlinearBinary<cpu::Binary::Add>
                                                                      : cpu::qlinearBinary<cpu::Binary::Mul>);
        r.add(std::move(def));
    }
}

}  // namespace fsc
