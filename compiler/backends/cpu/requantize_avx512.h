#pragma once
// requantize.h's arithmetic on 16 int32 sums in an AVX-512 register: the float32 scale, the
// clamp to what y_zero leaves of the output's range, vcvtps2dq's rounding (half to even, as
// the CPU rounds; the clamped value is exact below 2^22), y_zero added as an integer and a
// saturating narrowing in a register (vpmovusdb's own store form is slow on Zen 4). A third
// of the generic loop's instructions, which round by adding and taking away 1.5 x 2^23 and
// narrow in a second pass. Needs finite scales, as that loop's vector path does.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace fsc::cpu {

// The constants of one output's requantization.
struct Requantize512 {
    __m512 below, above;
    __m512i yZero;
};

template <bool Signed>
[[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] inline Requantize512 requantize512(float yZero) {
    const float lo = Signed ? -128.0f : 0.0f, hi = Signed ? 127.0f : 255.0f;
    return {_mm512_set1_ps(lo - yZero), _mm512_set1_ps(hi - yZero), _mm512_set1_epi32(int32_t(yZero))};
}

// 16 sums (the bias already added; int32, wrapping) as 16 bytes.
template <bool Signed>
[[gnu::target("avx512f,avx512bw,avx512vl"), gnu::always_inline]] inline __m128i requantized16(const Requantize512& r,
                                                                                            __m512i sums, __m512 scale) {
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(sums), scale);
    v = _mm512_min_ps(_mm512_max_ps(v, r.below), r.above);
    const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), r.yZero);
    return Signed ? _mm512_cvtsepi32_epi8(q) : _mm512_cvtusepi32_epi8(q);
}

}  // namespace fsc::cpu
#endif
