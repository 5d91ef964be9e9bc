#pragma once
// Transcendentals the C++ compiler can vectorize: no branches, no calls, no errno. glibc's
// expf is a call per element, which keeps every loop around it scalar (about 4 ns per SiLU
// element here); written as selects and a polynomial, a loop of these runs 8 or 16 lanes
// wide. NaN and infinities come out as expf's do; finite results are within 2 ulp of
// expf's (tst_executor checks both over the whole float range).
#include <bit>
#include <cstdint>
#include <limits>

namespace fsc::cpu {

// e^r for r = x - n ln2 (Cody-Waite: ln2 in two parts, the first exact times any n here),
// |r| <= ln2/2, by Cephes' degree-6 expf polynomial.
inline float expOfRemainder(float x, float n) {
    const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    const float r2 = r * r;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return p * r2 + r + 1.f;
}

// e^x = 2^n e^r, and 2^n applied in two halves so that the scale stays a normal float from
// e^-104 (below which expf is 0) to e^89 (above which it is infinite).
inline float expFast(float x) {
    const float finite = x == x ? x : 0.f;  // NaN is carried past the arithmetic below
    const float xc = finite < -104.f ? -104.f : (finite > 89.f ? 89.f : finite);
    // Round to nearest by the 1.5 * 2^23 trick: SSE2 has no vector floor.
    const float n = (xc * 1.44269504088896341f + 12582912.f) - 12582912.f;
    const float p = expOfRemainder(xc, n);
    const int32_t k = int32_t(n);
    const int32_t half = k >> 1;  // floor(k / 2): both halves within [-75, 64]
    const float scaleA = std::bit_cast<float>((half + 127) << 23);
    const float scaleB = std::bit_cast<float>((k - half + 127) << 23);
    const float y = p * scaleA * scaleB;
    return x == x ? y : x;
}

// e^t as a logistic's denominator needs it: expFast's remainder polynomial, but t clamped to
// [-87, 89], where one power of two scales it (below -87, 1 + e^t is 1 anyway; from 88.03 on
// the scale is 2^128, infinity, so 1 / (1 + e^t) is 0 where the true value is below 4e-39),
// and that power read off the rounding trick's bits instead of converted from float: no
// NaN selects, no second scale, no conversion. SiLU 0.23 -> 0.16 ns per float here.
inline float expForLogistic(float t) {
    const float tc = t < -87.f ? -87.f : (t > 89.f ? 89.f : t);  // NaN stays NaN
    // 1.5 * 2^23 + n for integral n in [-126, 128]: the float's low bits are n.
    const float rounded = tc * 1.44269504088896341f + 12582912.f;
    const float p = expOfRemainder(tc, rounded - 12582912.f);
    // (n + 127) << 23 modulo 2^32: the 1.5 * 2^23 part shifts out.
    const float scale = std::bit_cast<float>((std::bit_cast<uint32_t>(rounded) << 23) + (127u << 23));
    return p * scale;
}

// 1 / (1 + e^-x): 0 for x below -88 (where the true value is under 4e-39), 1 for x beyond
// 17, NaN for NaN.
inline float sigmoidFast(float x) {
    return 1.f / (1.f + expForLogistic(-x));
}

// x * sigmoid(alpha x), as one division (one rounding): SiLU, QuickGELU.
inline float swishFast(float x, float alpha) {
    return x / (1.f + expForLogistic(-alpha * x));
}

// erf(x) as an odd/even rational function on [-4, 4] (beyond which float erf is +-1): the
// minimax fit XLA and Eigen use for float, a few ulp from erff; NaN stays NaN.
inline float erfFast(float x) {
    const float xc = x < -4.f ? -4.f : (x > 4.f ? 4.f : x);
    const float x2 = xc * xc;
    float p = -2.72614225801306e-10f;
    p = p * x2 + 2.77068142495902e-08f;
    p = p * x2 - 2.10102402082508e-06f;
    p = p * x2 - 5.69250639462346e-05f;
    p = p * x2 - 7.34990630326855e-04f;
    p = p * x2 - 2.95459980854025e-03f;
    p = p * x2 - 1.60960333262415e-02f;
    float q = -1.45660718464996e-05f;
    q = q * x2 - 2.13374055278905e-04f;
    q = q * x2 - 1.68282697438203e-03f;
    q = q * x2 - 7.37332916720468e-03f;
    q = q * x2 - 1.42647390514189e-02f;
    const float y = xc * p / q;
    return x == x ? y : x;
}

// tanh(x) as an odd/even rational function on [-7.9053, 7.9053] (beyond which float tanh is
// +-1): the 13/6-degree minimax fit Eigen and XLA use for float, a few ulp from tanhf; x itself
// below 4e-4, where tanh(x) rounds to x; NaN stays NaN.
inline float tanhFast(float x) {
    constexpr float edge = 7.90531110763549805f;
    const float xc = x < -edge ? -edge : (x > edge ? edge : x);
    const float x2 = xc * xc;
    float p = -2.76076847742355e-16f;
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 - 8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = 1.19825839466702e-06f;
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    const float y = xc * p / q;
    return (x < 4e-4f && x > -4e-4f) || x != x ? x : y;
}

// Whole arrays (y may be x), built for AVX-512, AVX2 and the baseline and picked at load
// time: what the kernels call for float.
void expArray(const float* x, float* y, int64_t n);
void sigmoidArray(const float* x, float* y, int64_t n);
void tanhArray(const float* x, float* y, int64_t n);
void swishArray(const float* x, float* y, int64_t n, float alpha = 1.f);  // x * sigmoid(alpha x): SiLU, QuickGELU
void geluArray(const float* x, float* y, int64_t n);   // 0.5 x (1 + erf(x / sqrt 2))
void geluTanhArray(const float* x, float* y, int64_t n);  // GPT-2's: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// y = softmax(x) over n contiguous values (y may be x): e^(x - max) / sum.
void softmaxArray(const float* x, float* y, int64_t n);
// The mean and the (population) variance of n values, in double: normalizations' statistics.
void meanVariance(const float* x, int64_t n, double& mean, double& variance);
// The mean of n values' squares, in double: RMS normalization's statistic.
double meanSquare(const float* x, int64_t n);
// A normalization's last pass: y = (x - mean) * inv * gamma + beta (beta may be null).
void normalizeArray(const float* x, float mean, float inv, const float* gamma, const float* beta, float* y, int64_t n);
// One channel of an instance or group norm: y = (x - mean) * scale + shift, scale being
// inv * gamma[channel] and shift beta[channel].
void normalizeChannel(const float* x, float mean, float scale, float shift, float* y, int64_t n);
// y = a + b, element by element (SkipLayerNormalization's sum).
void addArrays(const float* a, const float* b, float* y, int64_t n);
// y = a / b, element by element (an average pool's sums by their windows' sizes); y may be a.
void divideArrays(const float* a, const float* b, float* y, int64_t n);
// sum += x, element by element (a pool's rows adding up).
void accumulateArray(const float* x, float* sum, int64_t n);
// Epilogue activations in place, at the CPU's full vector width (inline in a caller built
// for the baseline they ran four lanes wide): x > 0 ? x : 0 (NaN to 0); x >= 0 ? x : alpha x;
// min(max(x, lo), hi) as std::min/std::max take them (NaN stays NaN).
void reluArray(float* x, int64_t n);
void leakyReluArray(float* x, int64_t n, float alpha);
void clampArray(float* x, int64_t n, float lo, float hi);
// max(0, min(1, alpha x + beta)) and x * max(0, min(1, x / 6 + 1/2)), as the scalar loops
// they replace (the division kept: x / 6 rounds once).
void hardSigmoidArray(float* x, int64_t n, float alpha, float beta);
void hardSwishArray(float* x, int64_t n);

// The largest or smallest of n > 0 values, NaN where any is NaN (ReduceMax, ReduceMin over a
// row), and the sum of n values added in double lanes (ReduceSum, ReduceMean).
float maxOfArray(const float* x, int64_t n);
float minOfArray(const float* x, int64_t n);
double sumOfArray(const float* x, int64_t n);
// Widens [lo, hi] to every non-NaN x (as std::min/std::max from those starting values).
void minMaxArray(const float* x, int64_t n, float& lo, float& hi);
// y = saturate(round_half_even(x / scale) + zero), NaN to 0: QuantizeLinear and
// DynamicQuantizeLinear for a finite, non-zero scale and an integral zero point in range.
void quantizeUint8Array(const float* x, uint8_t* y, int64_t n, float scale, float zero);
void quantizeInt8Array(const float* x, int8_t* y, int64_t n, float scale, float zero);

}  // namespace fsc::cpu
