#pragma once
// float16 and bfloat16 <-> float32. Kernels compute these types in float32.
#include <cstdint>
#include <cstring>

namespace fsc {

inline float halfToFloat(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            exp = 127 - 15 + 1;
            while (!(mant & 0x400)) {
                mant <<= 1;
                --exp;
            }
            bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline uint16_t floatToHalf(float f) {  // round to nearest even
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t absx = x & 0x7fffffff;
    if (absx >= 0x7f800000) return uint16_t(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
    if (absx >= 0x477ff000) return uint16_t(sign | 0x7c00);  // overflow to inf
    if (absx < 0x38800000) {                                 // subnormal or zero
        if (absx < 0x33000000) return uint16_t(sign);
        const uint32_t e = absx >> 23;  // 102..112
        const uint32_t m = (absx & 0x7fffff) | 0x800000;
        const uint32_t dropped = 126 - e;  // value = r * 2^-24
        uint32_t r = m >> dropped;
        const uint32_t rem = m & ((1u << dropped) - 1);
        const uint32_t halfway = 1u << (dropped - 1);
        if (rem > halfway || (rem == halfway && (r & 1))) ++r;
        return uint16_t(sign | r);
    }
    uint32_t r = ((absx - 0x38000000) >> 13);
    const uint32_t rem = absx & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
    return uint16_t(sign | r);
}

inline float bfloat16ToFloat(uint16_t b) {
    const uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline uint16_t floatToBfloat16(float f) {  // round to nearest even, NaN stays NaN
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return uint16_t(x >> 16);
}

}  // namespace fsc
