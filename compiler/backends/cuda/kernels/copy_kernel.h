#pragma once
// One strided copy for every op that moves elements without arithmetic: Transpose,
// Slice, Concat (one launch per input into its slice of the output), Expand, and Cast
// (the copy converts when the types differ). Element i of the box `dims` is read at
// srcOffset + sum(c_d * srcStrides_d) and written at dstOffset + sum(c_d * dstStrides_d).
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

struct CopyParams {
    static constexpr const char* kName = "fsc_strided_copy";  // the kernel, as profilers name it
    const void* src;
    void* dst;
    ElemType srcType, dstType;
    int rank;
    int64_t dims[kMaxRank];
    int64_t srcStrides[kMaxRank];
    int64_t dstStrides[kMaxRank];
    int64_t srcOffset, dstOffset;
    int64_t count;
    bool index32;   // set by simplifyCopy: every offset fits 32 bits
    int wordBytes;  // set by simplifyCopy: 0, or 4, 8 or 16 when each index moves that many bytes
};

// Sixteen bytes in one load and one store (LDG.128 on the GPU).
#ifdef __CUDACC__
using Word16 = uint4;
#else
struct alignas(16) Word16 {
    uint32_t x, y, z, w;
};
#endif

template <typename Index>
FSC_HD void copyOffsets(const CopyParams& p, Index i, int64_t& s, int64_t& d) {
    Index src = 0, dst = 0, rest = i;
    for (int k = p.rank - 1; k >= 0; --k) {
        const Index n = Index(p.dims[k]);
        const Index c = rest % n;
        rest /= n;
        src += c * Index(p.srcStrides[k]);
        dst += c * Index(p.dstStrides[k]);
    }
    s = p.srcOffset + int64_t(src);
    d = p.dstOffset + int64_t(dst);
}

template <typename Word>
FSC_HD void copyWord(const void* src, int64_t s, void* dst, int64_t d) {
    static_cast<Word*>(dst)[d] = static_cast<const Word*>(src)[s];
}

FSC_HD void copyElement(const CopyParams& p, int64_t i) {
    int64_t s = 0, d = 0;
    if (p.index32) copyOffsets<uint32_t>(p, uint32_t(i), s, d);
    else copyOffsets<int64_t>(p, i, s, d);
    if (p.wordBytes == 16) return copyWord<Word16>(p.src, s, p.dst, d);
    if (p.wordBytes == 8) return copyWord<uint64_t>(p.src, s, p.dst, d);
    if (p.wordBytes == 4) return copyWord<uint32_t>(p.src, s, p.dst, d);
    if (p.srcType == p.dstType) {
        switch (elemBytes(p.srcType)) {
            case 1: copyWord<uint8_t>(p.src, s, p.dst, d); break;
            case 2: copyWord<uint16_t>(p.src, s, p.dst, d); break;
            case 8: copyWord<uint64_t>(p.src, s, p.dst, d); break;
            default: copyWord<uint32_t>(p.src, s, p.dst, d); break;
        }
    } else {
        storeDouble(p.dst, p.dstType, d, loadDouble(p.src, p.srcType, s));
    }
}

// A copy without conversion whose innermost dim is contiguous on both sides, moved `bytes`
// at a time: one index covers bytes / elemBytes elements of that dim. Every offset, stride
// and the two pointers must divide evenly. A float16 Transpose of [B, L, 3, D] that keeps D
// innermost then moves 16 bytes per thread instead of 2.
inline bool widenCopy(CopyParams& p, int bytes) {
    const int64_t e = elemBytes(p.srcType), v = bytes / e;
    const int last = p.rank - 1;
    if (p.srcType != p.dstType || p.rank < 1 || bytes % e || v < 2) return false;
    if (p.srcStrides[last] != 1 || p.dstStrides[last] != 1 || p.dims[last] % v) return false;
    if (p.srcOffset % v || p.dstOffset % v) return false;
    if (reinterpret_cast<uintptr_t>(p.src) % uintptr_t(bytes) || reinterpret_cast<uintptr_t>(p.dst) % uintptr_t(bytes))
        return false;
    for (int k = 0; k < last; ++k)
        if (p.srcStrides[k] % v || p.dstStrides[k] % v) return false;
    p.dims[last] /= v;
    for (int k = 0; k < last; ++k) {
        p.srcStrides[k] /= v;
        p.dstStrides[k] /= v;
    }
    p.srcOffset /= v;
    p.dstOffset /= v;
    p.count /= v;
    p.wordBytes = bytes;
    return true;
}

// Before a launch (host side): fewer dims (mergeStridedDims; a Transpose of [B, L, H, D]
// moves rows of D), wide words where the rows allow, and index32 set.
inline void simplifyCopy(CopyParams& p) {
    int64_t* const strides[] = {p.srcStrides, p.dstStrides};
    p.rank = mergeStridedDims(p.rank, p.dims, strides, 2);
    p.wordBytes = 0;
    for (int bytes : {16, 8, 4})
        if (widenCopy(p, bytes)) break;
    p.index32 = p.count < kIndex32Limit && offsetsFit32(p.rank, p.dims, p.srcStrides) &&
                offsetsFit32(p.rank, p.dims, p.dstStrides);
}

// Every element set to one value (Pad's border when it is not zero).
struct FillParams {
    static constexpr const char* kName = "fsc_fill";  // the kernel, as profilers name it
    void* out;
    ElemType type;
    double value;
    int64_t count;
};

FSC_HD void fillElement(const FillParams& p, int64_t i) { storeDouble(p.out, p.type, i, p.value); }

}  // namespace fsc::dk
