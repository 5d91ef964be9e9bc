#include "compiler/backends/cpu/vector_math.h"

namespace fsc::cpu {

[[gnu::target_clones("avx512f", "avx2", "default")]] void expArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = expFast(x[i]);
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void sigmoidArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = sigmoidFast(x[i]);
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void swishArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * sigmoidFast(x[i]);
}

}  // namespace fsc::cpu
