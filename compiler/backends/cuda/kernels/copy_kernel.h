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
};

FSC_HD void copyElement(const CopyParams& p, int64_t i) {
    int64_t s = p.srcOffset, d = p.dstOffset, rest = i;
    for (int k = p.rank - 1; k >= 0; --k) {
        const int64_t c = rest % p.dims[k];
        rest /= p.dims[k];
        s += c * p.srcStrides[k];
        d += c * p.dstStrides[k];
    }
    if (p.srcType == p.dstType) {
        const int bytes = elemBytes(p.srcType);
        const char* from = static_cast<const char*>(p.src) + s * bytes;
        char* to = static_cast<char*>(p.dst) + d * bytes;
        for (int b = 0; b < bytes; ++b) to[b] = from[b];
    } else {
        storeDouble(p.dst, p.dstType, d, loadDouble(p.src, p.srcType, s));
    }
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
