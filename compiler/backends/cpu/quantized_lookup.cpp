// ai.fusescope.QuantizedLookup: Y[i] = Table[X[i]] for 8-bit X (uint8 indexes as it is, int8
// shifted by 128) and a [256] Table of 8-bit values. qdq-folding makes it of the float steps
// between a DequantizeLinear and a QuantizeLinear that depend on one byte alone (a hardswish,
// a SiLU, a sigmoid gate): the table holds what those steps give each of the 256 bytes, as
// the CPU kernels computed them. On CPUs with AVX-512 VBMI 64 bytes are looked up at a time
// (two 128-byte halves of the table, vpermi2b each, chosen by the index's top bit). ONNX
// Runtime's QLinearSigmoid and QLinearLeakyRelu run the same lookup (below).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/runtime/fused_domain.h"
#include "compiler/runtime/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fsc::cpu {
namespace {

// `flip`: int8 X, whose byte b indexes entry b ^ 0x80 (b + 128).
void lookupScalar(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n, bool flip) {
    const uint8_t offset = flip ? 0x80 : 0;
    for (int64_t i = 0; i < n; ++i) y[i] = table[uint8_t(x[i] ^ offset)];
}

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
[[gnu::target("avx512f,avx512bw,avx512vbmi")]] void lookupVbmi(const uint8_t* x, const uint8_t* table, uint8_t* y,
                                                               int64_t n, bool flip) {
    const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64),
                  t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
    const __m512i offset = _mm512_set1_epi8(flip ? char(0x80) : char(0));
    for (int64_t i = 0; i < n; i += 64) {
        const __mmask64 mask = n - i >= 64 ? ~__mmask64(0) : (__mmask64(1) << (n - i)) - 1;
        const __m512i index = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, x + i), offset);
        const __m512i low = _mm512_permutex2var_epi8(t0, index, t1);   // entries 0-127
        const __m512i high = _mm512_permutex2var_epi8(t2, index, t3);  // entries 128-255
        _mm512_mask_storeu_epi8(y + i, mask, _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high));
    }
}
#pragma GCC diagnostic pop
#endif

// y[i] = table[x[i]] over the whole tensor, over the threads.
void lookupAll(KernelContext& ctx, const RtTensor& x, const uint8_t* table, RtTensor& y) {
    const auto* in = static_cast<const uint8_t*>(x.data);
    auto* out = static_cast<uint8_t*>(y.data);
    const bool flip = x.dtype == DType::Int8;
#if defined(__x86_64__)
    static const bool vbmi = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
#else
    constexpr bool vbmi = false;
#endif
    ctx.pool().parallelFor(x.numel(), 1 << 16, [&](int64_t b, int64_t e) {
#if defined(__x86_64__)
        if (vbmi) return lookupVbmi(in + b, table, out + b, e - b, flip);
#endif
        lookupScalar(in + b, table, out + b, e - b, flip);
    });
}

Status quantizedLookup(KernelContext& ctx) {
    const RtTensor *x = ctx.input(0), *table = ctx.input(1);
    if (!x || !table) return bad(ctx, "needs X and Table");
    if (x->dtype != DType::UInt8 && x->dtype != DType::Int8) return unsupportedType(ctx, x->dtype);
    if ((table->dtype != DType::UInt8 && table->dtype != DType::Int8) || table->numel() != 256)
        return bad(ctx, "Table must hold 256 8-bit values, got " + dimsString(table->dims));
    auto y = ctx.output(0, table->dtype, x->dims);
    if (!y) return y.status();
    lookupAll(ctx, *x, static_cast<const uint8_t*>(table->data), **y);
    return Status::ok();
}

// com.microsoft.QLinearSigmoid and QLinearLeakyRelu (X, X_scale, X_zero_point, Y_scale,
// Y_zero_point), as ONNX Runtime's quantizer writes them in its operator form (a quantized
// EfficientNet's or YOLO's activations): Y = quantize(f(dequantize(X))). Like ONNX Runtime,
// the table of the 256 results, from the scales at each run (256 evaluations), then the lookup.
template <typename F>
Status qlinearUnary(KernelContext& ctx, F f) {
    const RtTensor *x = ctx.input(0), *xScale = ctx.input(1), *xZero = ctx.input(2), *yScale = ctx.input(3),
                   *yZero = ctx.input(4);
    if (!x || !xScale || !yScale) return bad(ctx, "needs X, X_scale and Y_scale");
    if (x->dtype != DType::UInt8 && x->dtype != DType::Int8) return unsupportedType(ctx, x->dtype);
    for (const RtTensor* zero : {xZero, yZero})
        if (zero && (zero->numel() != 1 || zero->dtype != x->dtype))
            return bad(ctx, "zero points must be scalars of X's type");
    if (xScale->numel() != 1 || yScale->numel() != 1) return bad(ctx, "scales must be scalars");
    const float xs = float(elementAsDouble(*xScale, 0)), ys = float(elementAsDouble(*yScale, 0));
    const float xz = xZero ? float(elementAsDouble(*xZero, 0)) : 0.f, yz = yZero ? float(elementAsDouble(*yZero, 0)) : 0.f;
    const bool int8 = x->dtype == DType::Int8;
    const float lowest = int8 ? -128.f : 0.f, highest = int8 ? 127.f : 255.f;
    uint8_t table[256];
    for (int entry = 0; entry < 256; ++entry) {  // int8 X's byte b is entry b + 128 (see lookupScalar)
        const float q = float(int8 ? entry - 128 : entry);
        const float v = std::nearbyint(f((q - xz) * xs) / ys) + yz;
        const float r = v == v ? std::min(highest, std::max(lowest, v)) : yz;
        table[entry] = int8 ? uint8_t(int8_t(r)) : uint8_t(r);
    }
    auto y = ctx.output(0, x->dtype, x->dims);
    if (!y) return y.status();
    lookupAll(ctx, *x, table, **y);
    return Status::ok();
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerQuantizedLookupKernel(KernelRegistry& r) {
    KernelDef def;
    def.domain = kFusescopeDomain;
    def.op = "QuantizedLookup";
    def.factory = functionKernel(cpu::quantizedLookup);
    r.add(std::move(def));
    KernelDef sigmoid;
    sigmoid.domain = "com.microsoft";
    sigmoid.op = "QLinearSigmoid";
    sigmoid.factory = functionKernel([](KernelContext& ctx) {
        return cpu::qlinearUnary(ctx, [](float v) { return 1.f / (1.f + std::exp(-v)); });
    });
    r.add(std::move(sigmoid));
    KernelDef leaky;
    leaky.domain = "com.microsoft";
    leaky.op = "QLinearLeakyRelu";
    leaky.factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float alpha = init.getFloat("alpha", 0.01f);
        return std::unique_ptr<Kernel>(new FunctionKernel([alpha](KernelContext& ctx) {
            return cpu::qlinearUnary(ctx, [alpha](float v) { return v < 0.f ? v * alpha : v; });
        }));
    };
    r.add(std::move(leaky));
}

}  // namespace fsc
