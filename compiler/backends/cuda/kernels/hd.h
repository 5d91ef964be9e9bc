#pragma once
// What device code and its CPU twin share: FSC_HD marks a function that nvcc compiles for
// both the host and the device, and plain C++ compilers for the host alone. Element types
// are loaded as float (or double for exact integer conversions) and stored back, so a
// kernel's maths is written once for float32, float16 and bfloat16.
#include <cstdint>
#include <cstring>

#include <cmath>

#include "compiler/runtime/half.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define FSC_HD __host__ __device__ __forceinline__
#define FSC_UNROLL _Pragma("unroll")
#else
#define FSC_HD inline
#define FSC_UNROLL
#endif

namespace fsc::dk {

inline constexpr int kMaxRank = 8;
inline constexpr int64_t kIndex32Limit = int64_t(1) << 31;  // below it, index maths in 32 bits

// Host side, before a strided launch: merges neighbouring dims that every one of `arrays`
// stride arrays steps through as one (a row broadcast over [N, L, C] is [N * L, C]) and drops
// dims of 1, in place. Returns the new rank; every element keeps its offsets.
inline int mergeStridedDims(int rank, int64_t* dims, int64_t* const* strides, int arrays) {
    int merged = 0;
    for (int d = 0; d < rank; ++d) {
        if (dims[d] == 1) continue;
        bool joins = merged > 0;
        for (int k = 0; k < arrays && joins; ++k) joins = strides[k][merged - 1] == strides[k][d] * dims[d];
        if (joins) {
            dims[merged - 1] *= dims[d];
            for (int k = 0; k < arrays; ++k) strides[k][merged - 1] = strides[k][d];
            continue;
        }
        dims[merged] = dims[d];
        for (int k = 0; k < arrays; ++k) strides[k][merged] = strides[k][d];
        ++merged;
    }
    return merged;
}

// Whether every offset a box of `dims` reaches through `strides` fits 32-bit index maths.
inline bool offsetsFit32(int rank, const int64_t* dims, const int64_t* strides) {
    int64_t last = 0;  // the box's last element's offset
    for (int d = 0; d < rank; ++d) {
        if (strides[d] < 0) return false;
        last += (dims[d] - 1) * strides[d];
    }
    return last < kIndex32Limit;
}

enum class ElemType : uint8_t { F32, F16, BF16, F64, I8, U8, I32, I64, Bool };

FSC_HD int elemBytes(ElemType t) {
    switch (t) {
        case ElemType::F16: case ElemType::BF16: return 2;
        case ElemType::F64: case ElemType::I64: return 8;
        case ElemType::I8: case ElemType::U8: case ElemType::Bool: return 1;
        default: return 4;
    }
}

FSC_HD float halfBitsToFloat(uint16_t h) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(h));
#else
    return fsc::halfToFloat(h);
#endif
}
FSC_HD uint16_t floatToHalfBits(float f) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rn(f));
#else
    return fsc::floatToHalf(f);
#endif
}
FSC_HD float bf16BitsToFloat(uint16_t b) {
    const uint32_t bits = uint32_t(b) << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
FSC_HD uint16_t floatToBf16Bits(float f) {  // round to nearest even, NaN stays NaN
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1u);
    return uint16_t(x >> 16);
}

// Element i of a float-kind buffer (F32, F16, BF16) as float.
FSC_HD float loadFloat(const void* p, ElemType t, int64_t i) {
    if (t == ElemType::F16) return halfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
    if (t == ElemType::BF16) return bf16BitsToFloat(static_cast<const uint16_t*>(p)[i]);
    return static_cast<const float*>(p)[i];
}
FSC_HD void storeFloat(void* p, ElemType t, int64_t i, float v) {
    if (t == ElemType::F16) static_cast<uint16_t*>(p)[i] = floatToHalfBits(v);
    else if (t == ElemType::BF16) static_cast<uint16_t*>(p)[i] = floatToBf16Bits(v);
    else static_cast<float*>(p)[i] = v;
}

// 16 bytes of a float-kind buffer at once: 8 float16 or bfloat16 elements, or 4 float32
// (the rest of the 8 floats unused). The device loads and stores them as one 128-bit access;
// the caller checked the address is 16-byte aligned.
struct alignas(16) Pack16 {
    uint32_t w[4];
};
FSC_HD Pack16 load16(const void* base, int64_t byteOffset) {
    const char* at = static_cast<const char*>(base) + byteOffset;
#if defined(__CUDA_ARCH__)
    const uint4 u = *reinterpret_cast<const uint4*>(at);
    return Pack16{{u.x, u.y, u.z, u.w}};
#else
    Pack16 v;
    std::memcpy(&v, at, sizeof v);
    return v;
#endif
}
FSC_HD void store16(void* base, int64_t byteOffset, const Pack16& v) {
    char* at = static_cast<char*>(base) + byteOffset;
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<uint4*>(at) = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
#else
    std::memcpy(at, &v, sizeof v);
#endif
}
FSC_HD void unpack16(const Pack16& x, ElemType t, float* v) {
    FSC_UNROLL for (int k = 0; k < 8; ++k) {
        if (t == ElemType::F32) {
            float f = 0.f;
            if (k < 4) std::memcpy(&f, &x.w[k], sizeof f);
            v[k] = f;
        } else {
            const uint16_t bits = uint16_t(x.w[k / 2] >> (16 * (k % 2)));  // little-endian: element 2j low
            v[k] = t == ElemType::F16 ? halfBitsToFloat(bits) : bf16BitsToFloat(bits);
        }
    }
}
FSC_HD Pack16 pack16(const float* v, ElemType t) {
    Pack16 x{{0, 0, 0, 0}};
    FSC_UNROLL for (int k = 0; k < 8; ++k) {
        if (t == ElemType::F32) {
            if (k < 4) std::memcpy(&x.w[k], &v[k], sizeof(float));
        } else {
            const uint16_t bits = t == ElemType::F16 ? floatToHalfBits(v[k]) : floatToBf16Bits(v[k]);
            x.w[k / 2] |= uint32_t(bits) << (16 * (k % 2));
        }
    }
    return x;
}

// Any element type as double and back, for Cast: exact for every integer below 2^53.
FSC_HD double loadDouble(const void* p, ElemType t, int64_t i) {
    switch (t) {
        case ElemType::F64: return static_cast<const double*>(p)[i];
        case ElemType::I8: return static_cast<const int8_t*>(p)[i];
        case ElemType::U8: return static_cast<const uint8_t*>(p)[i];
        case ElemType::Bool: return static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
        case ElemType::I32: return static_cast<const int32_t*>(p)[i];
        case ElemType::I64: return double(static_cast<const int64_t*>(p)[i]);
        default: return loadFloat(p, t, i);
    }
}
FSC_HD void storeDouble(void* p, ElemType t, int64_t i, double v) {
    switch (t) {
        case ElemType::F64: static_cast<double*>(p)[i] = v; return;
        case ElemType::I8: static_cast<int8_t*>(p)[i] = int8_t(v); return;
        case ElemType::U8: static_cast<uint8_t*>(p)[i] = uint8_t(v); return;
        case ElemType::Bool: static_cast<uint8_t*>(p)[i] = v != 0.0 ? 1 : 0; return;
        case ElemType::I32: static_cast<int32_t*>(p)[i] = int32_t(v); return;
        case ElemType::I64: static_cast<int64_t*>(p)[i] = int64_t(v); return;
        default: storeFloat(p, t, i, float(v)); return;
    }
}

}  // namespace fsc::dk
