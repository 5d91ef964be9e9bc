#include "compiler/backends/cpu/vector_math.h"

#include <cstring>

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

[[gnu::target_clones("avx512f", "avx2", "default")]] void minMaxArray(const float* x, int64_t n, float& lo, float& hi) {
    // GCC does not vectorize a float min/max reduction without fast-math, so it is written
    // with vector types; the selects skip NaN as std::min(lo, x) does.
    using Lanes = float __attribute__((vector_size(64)));
    constexpr int64_t kLanes = 16;
    Lanes l, h;
    for (int64_t j = 0; j < kLanes; ++j) l[j] = lo, h[j] = hi;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        Lanes v;
        std::memcpy(&v, x + i, sizeof v);
        l = v < l ? v : l;
        h = v > h ? v : h;
    }
    for (int64_t j = 0; j < kLanes; ++j) {
        lo = l[j] < lo ? l[j] : lo;
        hi = h[j] > hi ? h[j] : hi;
    }
    for (; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void quantizeUint8Array(const float* x, uint8_t* y, int64_t n,
                                                                             float scale, float zero) {
    // Adding and subtracting 1.5 * 2^23 rounds half to even in the default rounding mode
    // for |q| < 2^22; q is clamped to +-512 first, beyond which the result saturates anyway.
    constexpr float kRound = 12582912.0f;
    for (int64_t i = 0; i < n; ++i) {
        float q = x[i] / scale;
        q = q < -512.f ? -512.f : q;
        q = q > 512.f ? 512.f : q;
        float v = (q + kRound) - kRound + zero;
        v = v > 0.f ? v : 0.f;  // NaN becomes 0 here
        v = v < 255.f ? v : 255.f;
        y[i] = uint8_t(int(v));
    }
}

}  // namespace fsc::cpu
