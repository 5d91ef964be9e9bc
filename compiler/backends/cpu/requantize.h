#pragma once
// Integer accumulators requantized to 8 bits, shared by QLinearConv's paths (quant.cpp, the
// depthwise one that accumulates exactly in float, qlinear_depthwise.cpp, and the NHWC one,
// qlinear_conv_nhwc.cpp) and QGemm.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compiler/runtime/kernel.h"

namespace fsc::cpu {

// QLinearConv's requantization per output channel: x_scale x w_scale[c] / y_scale in float32,
// the int32 bias, the output's zero point and type (uint8 or int8), read off its inputs.
struct Requantization {
    std::vector<float> scale;
    std::vector<int32_t> bias;
    float yZero = 0;
    DType outType = DType::UInt8;
    bool finite = true;  // every scale
};
Result<Requantization> readRequantization(const KernelContext& ctx, int64_t channels);

// int32 accumulators (plus an optional int32 bias per channel) requantized to 8 bits:
// round((acc + bias) * scale[c]) + y_zero, saturated, with scale[c] = x_scale * w_scale[c] /
// y_scale, all in float32 as ONNX Runtime computes it (its outputs and ours then agree to the
// bit). The clamp comes before the rounding, so the rounding can add and take away 1.5 x 2^23
// (exact for |v| < 2^22, half to even as the CPU rounds). As in quantizeLoop, the float
// arithmetic and the narrowing run as two loops over a block (in one, GCC did not vectorize
// it). A scale that is not finite takes the scalar loop, where a NaN gives 0, as saturate()
// does. `scaled(i)` is element i's (acc + bias) * scale, the sum wrapping as int32 does in
// ONNX Runtime's kernels (without signed overflow here).
template <typename Q, typename Scaled>
[[gnu::always_inline]] inline void requantizeWith(Q* __restrict o, int64_t n, float yZero, bool finite, Scaled scaled) {
    constexpr float lo = float(std::numeric_limits<Q>::lowest()), hi = float(std::numeric_limits<Q>::max());
    constexpr float kRound = 12582912.0f;  // 1.5 x 2^23
    const float below = lo - yZero, above = hi - yZero;
    if (!finite) {
        for (int64_t i = 0; i < n; ++i) {
            const float v = scaled(i);
            const float c = v > below ? (v < above ? v : above) : below;
            o[i] = Q(int32_t(v == v ? std::nearbyint(c) + yZero : 0.0f));
        }
        return;
    }
    constexpr int64_t kBlock = 256;
    float r[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t count = n - b < kBlock ? n - b : kBlock;
        for (int64_t i = 0; i < count; ++i) {
            float v = scaled(b + i);
            v = v > below ? v : below;
            v = v < above ? v : above;
            r[i] = (v + kRound) - kRound + yZero;
        }
        for (int64_t i = 0; i < count; ++i) o[b + i] = Q(int32_t(r[i]));
    }
}

template <typename A>
[[gnu::always_inline]] inline float biasedTimes(A acc, int32_t bias, float scale) {
    return float(int32_t(uint32_t(int32_t(acc)) + uint32_t(bias))) * scale;
}

// One channel's row (NCHW), in vector lanes. `A` is int32, or float holding integers exactly
// (converted to int32 first, exactly).
template <typename A, typename Q>
[[gnu::always_inline]] inline void requantizeRow(const A* __restrict a, Q* __restrict o, int64_t n, int32_t bias,
                                                 float scale, float yZero) {
    requantizeWith(o, n, yZero, std::isfinite(scale), [&](int64_t i) { return biasedTimes(a[i], bias, scale); });
}

// One pixel's channels (NHWC), or a matrix row's columns: element i with channel i's bias and
// scale. `finite`: every scale is finite.
template <typename A, typename Q>
[[gnu::always_inline]] inline void requantizeChannels(const A* __restrict a, Q* __restrict o, int64_t n,
                                                      const int32_t* __restrict bias, const float* __restrict scale,
                                                      float yZero, bool finite) {
    requantizeWith(o, n, yZero, finite, [&](int64_t i) { return biasedTimes(a[i], bias[i], scale[i]); });
}

}  // namespace fsc::cpu
