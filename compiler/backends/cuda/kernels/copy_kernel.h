#pragma once
// One strided copy for every op that moves elements without arithmetic: Transpose,
// Slice, Concat (one launch per input into its slice of the output), Expand, and Cast
// (the copy converts when the types differ). Element i of the box `dims` is read at
// srcOffset + sum(c_d * srcStrides_d) and written at dstOffset + sum(c_d * dstStrides_d).
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

struct CopyParams {
    const void* src;
    void* dst;
    ElemType srcType, dstType;
    int rank;
    int64_t dims[kMaxRank];
    int64_t srcStrides[kMaxRank];
    int64_t dstStrides[kMaxRank];
    int64_t srcOffset, dstOffset;
    int64_t count;
    bool index32;  // set by simplifyCopy: every offset fits 32 bits
};

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

// Before a launch (host side): fewer dims (mergeStridedDims; a Transpose of [B, L, H, D]
// moves rows of D) and index32 set.
inline void simplifyCopy(CopyParams& p) {
    int64_t* const strides[] = {p.srcStrides, p.dstStrides};
    p.rank = mergeStridedDims(p.rank, p.dims, strides, 2);
    p.index32 = p.count < kIndex32Limit && offsetsFit32(p.rank, p.dims, p.srcStrides) &&
                offsetsFit32(p.rank, p.dims, p.dstStrides);
}

// Every element set to one value (Pad's border when it is not zero).
struct FillParams {
    void* out;
    ElemType type;
    double value;
    int64_t count;
};

FSC_HD void fillElement(const FillParams& p, int64_t i) { storeDouble(p.out, p.type, i, p.value); }

}  // namespace fsc::dk
