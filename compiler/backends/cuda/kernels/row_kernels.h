#pragma once
// Kernels that reduce along contiguous rows: Softmax, LogSoftmax, LayerNormalization and
// RMSNorm over the trailing `cols` elements of each of `rows` rows. On the GPU one warp
// owns a row: lane l handles columns l, l + 32, ... and the partial results meet through
// a butterfly of shuffles. The lane functions below are the warp's maths; the CPU twin
// runs them for the 32 lanes and combines the partials in the same butterfly order.
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

inline constexpr int kLanes = 32;
inline constexpr int kRowsPerBlock = 4;  // 128 threads: four warps, four rows

struct SoftmaxParams {
    static constexpr const char* kName = "fsc_softmax_rows";  // the kernel, as profilers name it
    const void* in;
    void* out;
    ElemType type;
    bool logSoftmax;
    int64_t rows, cols;
};

FSC_HD float softmaxLaneMax(const SoftmaxParams& p, int64_t row, int lane) {
    float m = -INFINITY;
    for (int64_t c = lane; c < p.cols; c += kLanes) m = fmaxf(m, loadFloat(p.in, p.type, row * p.cols + c));
    return m;
}
FSC_HD float softmaxLaneSum(const SoftmaxParams& p, int64_t row, int lane, float rowMax) {
    float s = 0.f;
    for (int64_t c = lane; c < p.cols; c += kLanes) s += expf(loadFloat(p.in, p.type, row * p.cols + c) - rowMax);
    return s;
}
FSC_HD void softmaxLaneWrite(const SoftmaxParams& p, int64_t row, int lane, float rowMax, float rowSum) {
    const float logSum = logf(rowSum);
    for (int64_t c = lane; c < p.cols; c += kLanes) {
        const int64_t i = row * p.cols + c;
        const float x = loadFloat(p.in, p.type, i) - rowMax;
        storeFloat(p.out, p.type, i, p.logSoftmax ? x - logSum : expf(x) / rowSum);
    }
}

// LayerNormalization (rms = false): (x - mean) / sqrt(var + eps) * scale + bias.
// RMSNorm (rms = true): x / sqrt(mean(x^2) + eps) * scale. Variance is computed in a
// second pass over (x - mean)^2, which keeps precision for rows with a large mean.
// SkipLayerNorm normalises in + skip, and may store that sum too (sumOut).
struct NormParams {
    static constexpr const char* kName = "fsc_norm_rows";  // the kernel, as profilers name it
    const void* in;
    const void* skip;  // same shape as in, or null
    void* sumOut;      // in + skip, or null
    const void* scale;  // cols values
    const void* bias;   // cols values, or null
    void* out;
    ElemType type;
    bool rms;
    float epsilon;
    int64_t rows, cols;
};

FSC_HD float normLoad(const NormParams& p, int64_t i) {
    const float x = loadFloat(p.in, p.type, i);
    return p.skip ? x + loadFloat(p.skip, p.type, i) : x;
}

FSC_HD float normLaneSum(const NormParams& p, int64_t row, int lane) {
    float s = 0.f;
    for (int64_t c = lane; c < p.cols; c += kLanes) {
        const float x = normLoad(p, row * p.cols + c);
        s += p.rms ? x * x : x;
    }
    return s;
}
FSC_HD float normLaneSquares(const NormParams& p, int64_t row, int lane, float mean) {
    float s = 0.f;
    for (int64_t c = lane; c < p.cols; c += kLanes) {
        const float d = normLoad(p, row * p.cols + c) - mean;
        s += d * d;
    }
    return s;
}
FSC_HD void normLaneWrite(const NormParams& p, int64_t row, int lane, float mean, float invStd) {
    for (int64_t c = lane; c < p.cols; c += kLanes) {
        const int64_t i = row * p.cols + c;
        const float x = normLoad(p, i);
        if (p.sumOut) storeFloat(p.sumOut, p.type, i, x);
        float y = (x - mean) * invStd * loadFloat(p.scale, p.type, c);
        if (p.bias) y += loadFloat(p.bias, p.type, c);
        storeFloat(p.out, p.type, i, y);
    }
}

}  // namespace fsc::dk
