#include "compiler/backends/cpu/vector_math.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace fsc::cpu {

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void expArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = expFast(x[i]);
}

namespace {

[[gnu::target_clones("arch=x86-64-v3", "default")]] void sigmoidPortable(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = sigmoidFast(x[i]);
}

[[gnu::target_clones("arch=x86-64-v3", "default")]] void swishPortable(const float* x, float* y, int64_t n, float alpha) {
    for (int64_t i = 0; i < n; ++i) y[i] = swishFast(x[i], alpha);
}

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() as the unused merge source, which
// its own -Wmaybe-uninitialized then reports at every inlined call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// expForLogistic in AVX-512 instructions that the portable form stands in for: vrndscaleps
// rounds to the nearest integer and vscalefps multiplies by 2^n in one exact step, so the
// rounding trick's subtraction, the shift and the multiply go, about 14 instructions a vector
// instead of 20 (SiLU 0.36 -> 0.26 ns per float on a Zen 4 VM, where EfficientNet-B0 spends a
// fifth of its time in SiLU). Same polynomial and rounding, so the same results, except that
// e^t for t in (88.03, 88.72] is finite here (the portable scale is already infinite there).
[[gnu::target("avx512f")]] inline __m512 expForLogistic16(__m512 t) {
    // max/min return their second operand when either is NaN: NaN goes through.
    const __m512 tc = _mm512_min_ps(_mm512_set1_ps(89.f), _mm512_max_ps(_mm512_set1_ps(-87.f), t));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(tc, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), tc));
    const __m512 r2 = _mm512_mul_ps(r, r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), _mm512_set1_ps(1.f));
    return _mm512_scalef_ps(p, n);
}

// numerator / (1 + e^(scale x)) for whole vectors, the tail by the portable form.
template <bool Swish>
[[gnu::target("avx512f"), gnu::always_inline]] inline void logistic16(const float* x, float* y, int64_t n, float scale) {
    const __m512 s = _mm512_set1_ps(scale), one = _mm512_set1_ps(1.f);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        const __m512 d = _mm512_add_ps(one, expForLogistic16(_mm512_mul_ps(s, v)));
        _mm512_storeu_ps(y + i, _mm512_div_ps(Swish ? v : one, d));
    }
    for (; i < n; ++i) y[i] = Swish ? swishFast(x[i], -scale) : sigmoidFast(x[i]);
}

[[gnu::target("avx512f")]] void sigmoidAvx512(const float* x, float* y, int64_t n) { logistic16<false>(x, y, n, -1.f); }
[[gnu::target("avx512f")]] void swishAvx512(const float* x, float* y, int64_t n, float alpha) {
    logistic16<true>(x, y, n, -alpha);
}

#pragma GCC diagnostic pop

bool hasAvx512() {
    static const bool has = __builtin_cpu_supports("avx512f");
    return has;
}

}  // namespace

void sigmoidArray(const float* x, float* y, int64_t n) {
    if (hasAvx512()) sigmoidAvx512(x, y, n);
    else sigmoidPortable(x, y, n);
}

void swishArray(const float* x, float* y, int64_t n, float alpha) {
    if (hasAvx512()) swishAvx512(x, y, n, alpha);
    else swishPortable(x, y, n, alpha);
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void tanhArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = tanhFast(x[i]);
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void geluArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + erfFast(x[i] * 0.7071067811865476f));
}

// 0.5 x (1 + tanh(u)) is x / (1 + e^(-2u)): no 1 + tanh to cancel where tanh nears -1.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void geluTanhArray(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = v / (1.f + expFast(-1.5957691216057308f * (v + 0.044715f * v * v * v)));
    }
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void softmaxArray(const float* x, float* y, int64_t n) {
    if (n <= 0) return;
    // The maximum skips NaN (minMaxArray); a NaN still makes the sum, and so every output,
    // NaN, as the scalar loop did. The sum in 16 lanes: GCC does not reassociate it.
    using Lanes = float __attribute__((vector_size(64)));
    constexpr int64_t kLanes = 16;
    float lowest = std::numeric_limits<float>::infinity(), best = -std::numeric_limits<float>::infinity();
    minMaxArray(x, n, lowest, best);
    // Scores so far below the maximum that their weight would be subnormal once divided by
    // the sum (at most n) weigh 0 instead: each output changes by under FLT_MIN * e * n. Intel
    // cores take a microcode assist on every subnormal operand, and Swin's shifted-window mask
    // (-100) made the products of those weights and V 40x slower on a Sapphire Rapids VM.
    const float floor = std::log(std::numeric_limits<float>::min()) + 1.f + std::log(float(n));
    for (int64_t k = 0; k < n; ++k) {
        const float d = x[k] - best;  // NaN compares false and stays NaN
        y[k] = d < floor ? 0.f : expFast(d < floor ? 0.f : d);
    }
    Lanes acc = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        Lanes v;
        std::memcpy(&v, y + i, sizeof v);
        acc += v;
    }
    float sum = 0;
    for (int64_t j = 0; j < kLanes; ++j) sum += acc[j];
    for (; i < n; ++i) sum += y[i];
    const float inv = 1.f / sum;
    for (int64_t k = 0; k < n; ++k) y[k] *= inv;
}

// The layer norms' loops: __restrict and no branch inside, so each vectorizes at full width
// (SkipLayerNorm's row loop, with a conditional second store and beta, ran scalar).
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void normalizeArray(const float* __restrict x, float mean,
                                                                           float inv, const float* __restrict gamma,
                                                                           const float* __restrict beta,
                                                                           float* __restrict y, int64_t n) {
    if (beta)
        for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
    else
        for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * gamma[i];
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void normalizeChannel(const float* __restrict x, float mean,
                                                                             float scale, float shift,
                                                                             float* __restrict y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * scale + shift;
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void addArrays(const float* __restrict a, const float* __restrict b,
                                                                      float* __restrict y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

// y may be a: each element is read before it is written.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void divideArrays(const float* a, const float* __restrict b,
                                                                         float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void accumulateArray(const float* __restrict x,
                                                                            float* __restrict sum, int64_t n) {
    for (int64_t i = 0; i < n; ++i) sum[i] += x[i];
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void reluArray(float* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void leakyReluArray(float* __restrict x, int64_t n,
                                                                           float alpha) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.f ? x[i] : alpha * x[i];
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void clampArray(float* __restrict x, int64_t n, float lo,
                                                                       float hi) {
    for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], lo), hi);
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void hardSigmoidArray(float* __restrict x, int64_t n,
                                                                             float alpha, float beta) {
    for (int64_t i = 0; i < n; ++i) x[i] = std::max(0.f, std::min(1.f, alpha * x[i] + beta));
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void hardSwishArray(float* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] * std::max(0.f, std::min(1.f, x[i] / 6.f + 0.5f));
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void meanVariance(const float* x, int64_t n, double& mean,
                                                                         double& variance) {
    // In double lanes, as the scalar loops were in double: a normalization's inputs may sit
    // far from zero with a small spread. Two lanes of 8 let the adds overlap.
    using Floats = float __attribute__((vector_size(32)));
    using Doubles = double __attribute__((vector_size(64)));
    mean = variance = 0;
    if (n <= 0) return;
    mean = sumOfArray(x, n) / double(n);
    const Doubles mu = Doubles{} + mean;
    Doubles a = {}, b = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        Floats u, v;
        std::memcpy(&u, x + i, sizeof u);
        std::memcpy(&v, x + i + 8, sizeof v);
        const Doubles du = __builtin_convertvector(u, Doubles) - mu, dv = __builtin_convertvector(v, Doubles) - mu;
        a += du * du;
        b += dv * dv;
    }
    double squares = 0;
    for (int j = 0; j < 8; ++j) squares += a[j] + b[j];
    for (; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
    variance = squares / double(n);
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] double meanSquare(const float* x, int64_t n) {
    // Double lanes as in meanVariance: a scalar double sum is one long chain of dependent
    // adds (RmsNorm's rows took 1 ns per element).
    using Floats = float __attribute__((vector_size(32)));
    using Doubles = double __attribute__((vector_size(64)));
    if (n <= 0) return 0;
    Doubles a = {}, b = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        Floats u, v;
        std::memcpy(&u, x + i, sizeof u);
        std::memcpy(&v, x + i + 8, sizeof v);
        const Doubles du = __builtin_convertvector(u, Doubles), dv = __builtin_convertvector(v, Doubles);
        a += du * du;
        b += dv * dv;
    }
    double squares = 0;
    for (int j = 0; j < 8; ++j) squares += a[j] + b[j];
    for (; i < n; ++i) squares += double(x[i]) * double(x[i]);
    return squares / double(n);
}

namespace {

// Vector lanes of the running extreme; a NaN seen anywhere is kept apart and wins at the end.
template <bool kMax>
[[gnu::always_inline]] inline float extremeOfArray(const float* x, int64_t n) {
    using Lanes = float __attribute__((vector_size(64)));
    using Mask = int __attribute__((vector_size(64)));
    constexpr int64_t kLanes = 16;
    Lanes best;
    for (int64_t j = 0; j < kLanes; ++j) best[j] = x[0];
    Mask nan = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        Lanes v;
        std::memcpy(&v, x + i, sizeof v);
        nan |= v != v;
        best = kMax ? (v > best ? v : best) : (v < best ? v : best);
    }
    bool anyNan = false;
    float result = x[0];
    for (int64_t j = 0; j < kLanes; ++j) {
        anyNan = anyNan || nan[j];
        result = kMax ? (best[j] > result ? best[j] : result) : (best[j] < result ? best[j] : result);
    }
    for (; i < n; ++i) {
        anyNan = anyNan || x[i] != x[i];
        result = kMax ? (x[i] > result ? x[i] : result) : (x[i] < result ? x[i] : result);
    }
    return anyNan ? std::numeric_limits<float>::quiet_NaN() : result;
}

}  // namespace

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] float maxOfArray(const float* x, int64_t n) {
    return extremeOfArray<true>(x, n);
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] float minOfArray(const float* x, int64_t n) {
    return extremeOfArray<false>(x, n);
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] double sumOfArray(const float* x, int64_t n) {
    using Floats = float __attribute__((vector_size(32)));
    using Doubles = double __attribute__((vector_size(64)));
    Doubles a = {}, b = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        Floats u, v;
        std::memcpy(&u, x + i, sizeof u);
        std::memcpy(&v, x + i + 8, sizeof v);
        a += __builtin_convertvector(u, Doubles);
        b += __builtin_convertvector(v, Doubles);
    }
    double sum = 0;
    for (int j = 0; j < 8; ++j) sum += a[j] + b[j];
    for (; i < n; ++i) sum += double(x[i]);
    return sum;
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void minMaxArray(const float* x, int64_t n, float& lo, float& hi) {
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

namespace {

// Adding and subtracting 1.5 * 2^23 rounds half to even in the default rounding mode for
// |q| < 2^22; q is clamped to +-512 first, beyond which every 8-bit result saturates. NaN
// becomes -zero, so it quantizes to 0.
// The float arithmetic and the narrowing to 8 bits run as two loops over a block: in one
// loop, the narrowing made GCC carry 32 floats per iteration and spill them (1.7x slower).
template <typename Q>
[[gnu::always_inline]] inline void quantizeLoop(const float* x, Q* y, int64_t n, float scale, float zero) {
    constexpr float kRound = 12582912.0f;
    constexpr float lo = float(std::numeric_limits<Q>::lowest()), hi = float(std::numeric_limits<Q>::max());
    constexpr int64_t kBlock = 256;
    float v[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t count = n - b < kBlock ? n - b : kBlock;
        for (int64_t i = 0; i < count; ++i) {
            float q = x[b + i] / scale;
            q = q == q ? q : -zero;
            q = q < -512.f ? -512.f : q;
            q = q > 512.f ? 512.f : q;
            float r = (q + kRound) - kRound + zero;
            r = r > lo ? r : lo;
            v[i] = r < hi ? r : hi;
        }
        for (int64_t i = 0; i < count; ++i) y[b + i] = Q(int(v[i]));
    }
}

}  // namespace

namespace {

// 32 at a time with AVX2: x / scale, NaN to -zero (so that it gives 0), clamped to +-512
// (beyond which every 8-bit result saturates; within it the conversion is exact), rounded
// half to even by cvtps2dq (the default rounding mode, as quantizeLoop assumes), plus the zero
// point, then narrowed with saturation, which is the clamp to the 8-bit range. 0.8 cycles an
// element on an AVX2 core where quantizeLoop's AVX2 clone took 3.2 (and its AVX-512 clone 1.5):
// docs/benchmarks.md. The rest of the array goes through quantizeLoop.
template <typename Q>
[[gnu::target("avx2")]] void quantizeWithAvx2(const float* x, Q* y, int64_t n, float scale, float zero) {
    const __m256 scales = _mm256_set1_ps(scale), highest = _mm256_set1_ps(512.f), lowest = _mm256_set1_ps(-512.f),
                 nanTo = _mm256_set1_ps(-zero);
    const __m256i zeros = _mm256_set1_epi32(int32_t(zero));
    // packs works within 128-bit halves: this puts the four vectors' bytes back in order.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i q[4];
        for (int v = 0; v < 4; ++v) {
            __m256 f = _mm256_div_ps(_mm256_loadu_ps(x + i + 8 * v), scales);
            f = _mm256_blendv_ps(f, nanTo, _mm256_cmp_ps(f, f, _CMP_UNORD_Q));
            f = _mm256_min_ps(_mm256_max_ps(f, lowest), highest);
            q[v] = _mm256_add_epi32(_mm256_cvtps_epi32(f), zeros);
        }
        const __m256i low = _mm256_packs_epi32(q[0], q[1]), high = _mm256_packs_epi32(q[2], q[3]);
        const __m256i bytes =
            std::is_same_v<Q, uint8_t> ? _mm256_packus_epi16(low, high) : _mm256_packs_epi16(low, high);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permutevar8x32_epi32(bytes, order));
    }
    quantizeLoop(x + i, y + i, n - i, scale, zero);
}

bool hasAvx2() {
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}

[[gnu::target_clones("arch=x86-64-v2", "default")]] void quantizeUint8Portable(const float* x, uint8_t* y, int64_t n,
                                                                             float scale, float zero) {
    quantizeLoop(x, y, n, scale, zero);
}

[[gnu::target_clones("arch=x86-64-v2", "default")]] void quantizeInt8Portable(const float* x, int8_t* y, int64_t n,
                                                                            float scale, float zero) {
    quantizeLoop(x, y, n, scale, zero);
}

}  // namespace

void quantizeUint8Array(const float* x, uint8_t* y, int64_t n, float scale, float zero) {
    if (hasAvx2()) quantizeWithAvx2(x, y, n, scale, zero);
    else quantizeUint8Portable(x, y, n, scale, zero);
}

void quantizeInt8Array(const float* x, int8_t* y, int64_t n, float scale, float zero) {
    if (hasAvx2()) quantizeWithAvx2(x, y, n, scale, zero);
    else quantizeInt8Portable(x, y, n, scale, zero);
}

}  // namespace fsc::cpu
