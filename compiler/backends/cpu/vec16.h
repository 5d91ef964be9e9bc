#pragma once
// 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones. GCC's vector extension lets
// the same register-tiled loops fill whichever width a target-specific build targets
// (pointwise_conv, conv_nhwc); tiles that would spill AVX2's 16 registers use Vec8 there. The helpers are always inlined into the target-specific
// functions, so no vector crosses a call; the includer silences GCC's -Wpsabi note about
// vector arguments around its tiles.
#include <cstring>

namespace fsc::cpu::vec16 {

typedef float Vec16 __attribute__((vector_size(64)));
// One AVX2 register: loops whose tiles of Vec16 would spill AVX2's 16 registers (GCC then
// keeps the halves on the stack) are built from these for the AVX2 target.
typedef float Vec8 __attribute__((vector_size(32)));

template <typename Vec>
inline constexpr int kLanes = int(sizeof(Vec) / sizeof(float));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
template <typename Vec = Vec16>
[[gnu::always_inline]] inline Vec load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <typename Vec>
[[gnu::always_inline]] inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
#pragma GCC diagnostic pop

// The build of a register-tiled kernel for this CPU: its AVX-512 clone, its AVX2 + FMA one,
// else the baseline (the files that build them: conv_nhwc, pointwise_conv, gemv).
template <typename Fn>
Fn forThisCpu(Fn avx512, Fn avx2, Fn baseline) {
    if (__builtin_cpu_supports("avx512f")) return avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return avx2;
    return baseline;
}

}  // namespace fsc::cpu::vec16
