#include "compiler/backends/cpu/vector_math.h"

namespace fsc::cpu {

[[gnu::target_clones("avx512f", "avx2", "default")]] void expArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = expFast(x[i]);
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void sigmoidArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = sigmoidFast(x[i]);
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void swishArray(const float* x, float* y, int64_t n, float alpha) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * sigmoidFast(alpha * x[i]);
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void geluArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + erfFast(x[i] * 0.7071067811865476f));
}

}  // namespace fsc::cpu
