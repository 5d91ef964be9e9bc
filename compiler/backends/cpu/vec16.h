#pragma once
// 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones. GCC's vector extension lets
// the same register-tiled loops fill whichever width a target_clones build targets
// (pointwise_conv, conv_nhwc). The helpers are always inlined into the target-specific
// functions, so no vector crosses a call; the includer silences GCC's -Wpsabi note about
// vector arguments around its tiles.
#include <cstring>

namespace fsc::cpu::vec16 {

typedef float Vec16 __attribute__((vector_size(64)));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
[[gnu::always_inline]] inline Vec16 load(const float* p) {
    Vec16 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
[[gnu::always_inline]] inline void store(float* p, Vec16 v) { std::memcpy(p, &v, sizeof v); }
#pragma GCC diagnostic pop

}  // namespace fsc::cpu::vec16
