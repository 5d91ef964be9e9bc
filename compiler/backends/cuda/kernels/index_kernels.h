#pragma once
// Kernels that pick elements: Gather (along one axis, by an index tensor) and Where (a
// broadcast choice between two tensors). One thread per output element.
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

// out[o, j, r] = data[o, indices[j], r] for o < outer, j < indexCount, r < inner.
// A negative index counts from the end; one outside the axis writes zeros (a GPU cannot
// stop the run from inside a kernel; the CPU backend reports it).
struct GatherParams {
    static constexpr const char* kName = "fsc_gather";  // the kernel, as profilers name it
    const void* data;
    const void* indices;
    void* out;
    ElemType type, indexType;  // indexType: I32 or I64
    int64_t outer, axisDim, indexCount, inner;
    int64_t count;
};

FSC_HD void gatherElement(const GatherParams& p, int64_t i) {
    const int64_t r = i % p.inner;
    const int64_t j = (i / p.inner) % p.indexCount;
    const int64_t o = i / (p.inner * p.indexCount);
    int64_t idx = p.indexType == ElemType::I32 ? int64_t(static_cast<const int32_t*>(p.indices)[j])
                                                : static_cast<const int64_t*>(p.indices)[j];
    if (idx < 0) idx += p.axisDim;
    const int bytes = elemBytes(p.type);
    char* to = static_cast<char*>(p.out) + i * bytes;
    if (idx < 0 || idx >= p.axisDim) {
        for (int b = 0; b < bytes; ++b) to[b] = 0;
        return;
    }
    const char* from = static_cast<const char*>(p.data) + ((o * p.axisDim + idx) * p.inner + r) * bytes;
    for (int b = 0; b < bytes; ++b) to[b] = from[b];
}

// out[i] = cond[i] ? x[i] : y[i], each read at its broadcast offset (stride 0 on broadcast dims).
struct WhereParams {
    static constexpr const char* kName = "fsc_where";  // the kernel, as profilers name it
    const void* cond;  // bool (one byte)
    const void* x;
    const void* y;
    void* out;
    ElemType type;
    int rank;
    int64_t dims[kMaxRank];
    int64_t strides[3][kMaxRank];  // cond, x, y
    int64_t count;
};

FSC_HD void whereElement(const WhereParams& p, int64_t i) {
    int64_t off[3] = {0, 0, 0}, rest = i;
    for (int d = p.rank - 1; d >= 0; --d) {
        const int64_t c = rest % p.dims[d];
        rest /= p.dims[d];
        for (int k = 0; k < 3; ++k) off[k] += c * p.strides[k][d];
    }
    const bool pick = static_cast<const uint8_t*>(p.cond)[off[0]] != 0;
    const int bytes = elemBytes(p.type);
    const char* from = static_cast<const char*>(pick ? p.x : p.y) + (pick ? off[1] : off[2]) * bytes;
    char* to = static_cast<char*>(p.out) + i * bytes;
    for (int b = 0; b < bytes; ++b) to[b] = from[b];
}

}  // namespace fsc::dk
