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

// e^x by Cody-Waite range reduction, x = n ln2 + r with |r| <= ln2/2, e^r from Cephes'
// degree-6 expf polynomial, and 2^n applied in two halves so that the scale stays a normal
// float from e^-104 (below which expf is 0) to e^89 (above which it is infinite).
inline float expFast(float x) {
    const float finite = x == x ? x : 0.f;  // NaN is carried past the arithmetic below
    const float xc = finite < -104.f ? -104.f : (finite > 89.f ? 89.f : finite);
    // Round to nearest by the 1.5 * 2^23 trick: SSE2 has no vector floor.
    const float n = (xc * 1.44269504088896341f + 12582912.f) - 12582912.f;
    const float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;
    const float r2 = r * r;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r2 + r + 1.f;
    const int32_t k = int32_t(n);
    const int32_t half = k >> 1;  // floor(k / 2): both halves within [-75, 64]
    const float scaleA = std::bit_cast<float>((half + 127) << 23);
    const float scaleB = std::bit_cast<float>((k - half + 127) << 23);
    const float y = p * scaleA * scaleB;
    return x == x ? y : x;
}

// 1 / (1 + e^-x): e^-x overflows to infinity for x < -89, giving 0, as it should.
inline float sigmoidFast(float x) {
    return 1.f / (1.f + expFast(-x));
}

// Whole arrays (y may be x), built for AVX-512, AVX2 and the baseline and picked at load
// time: what the kernels call for float.
void expArray(const float* x, float* y, int64_t n);
void sigmoidArray(const float* x, float* y, int64_t n);
void swishArray(const float* x, float* y, int64_t n);  // x * sigmoid(x), SiLU

}  // namespace fsc::cpu
