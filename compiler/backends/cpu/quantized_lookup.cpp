// ai.fusescope.QuantizedLookup: Y[i] = Table[X[i]] for 8-bit X (uint8 indexes as it is, int8
// shifted by 128) and a [256] Table of 8-bit values. qdq-folding makes it of the float steps
// between a DequantizeLinear and a QuantizeLinear that depend on one byte alone (a hardswish,
// a SiLU, a sigmoid gate): the table holds what those steps give each of the 256 bytes, as
// the CPU kernels computed them. On CPUs with AVX-512 VBMI 64 bytes are looked up at a time
// (two 128-byte halves of the table, vpermi2b each, chosen by the index's top bit).
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

Status quantizedLookup(KernelContext& ctx) {
    const RtTensor *x = ctx.input(0), *table = ctx.input(1);
    if (!x || !table) return bad(ctx, "needs X and Table");
    if (x->dtype != DType::UInt8 && x->dtype != DType::Int8) return unsupportedType(ctx, x->dtype);
    if ((table->dtype != DType::UInt8 && table->dtype != DType::Int8) || table->numel() != 256)
        return bad(ctx, "Table must hold 256 8-bit values, got " + dimsString(table->dims));
    auto y = ctx.output(0, table->dtype, x->dims);
    if (!y) return y.status();
    const auto* in = static_cast<const uint8_t*>(x->data);
    const auto* t = static_cast<const uint8_t*>(table->data);
    auto* out = static_cast<uint8_t*>((*y)->data);
    const bool flip = x->dtype == DType::Int8;
#if defined(__x86_64__)
    static const bool vbmi = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
#else
    constexpr bool vbmi = false;
#endif
    ctx.pool().parallelFor(x->numel(), 1 << 16, [&](int64_t b, int64_t e) {
#if defined(__x86_64__)
        if (vbmi) return lookupVbmi(in + b, t, out + b, e - b, flip);
#endif
        lookupScalar(in + b, t, out + b, e - b, flip);
    });
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
}

}  // namespace fsc
