#pragma once
// Resize on the device: each thread finds its output element's taps per dim (ONNX's
// coordinate mapping, then nearest / linear / cubic weights) and sums over their product,
// in double as the CPU kernel does. Scales, output lengths and the region of interest come
// from the host (runtime/resize_rules.h), so this is the per-element maths only.
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

enum class ResizeMode : uint8_t { Nearest, Linear, Cubic };
enum class ResizeCoord : uint8_t { HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize };
enum class NearestRounding : uint8_t { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
inline constexpr int kResizeMaxTaps = 4;

struct ResizeParams {
    static constexpr const char* kName = "fsc_resize";  // the kernel, as profilers name it
    const void* in;
    void* out;
    ElemType type;
    ResizeMode mode;
    ResizeCoord coord;
    NearestRounding nearest;
    bool excludeOutside;
    double cubicA, extrapolation;
    int rank;
    int64_t inDims[kMaxRank], outDims[kMaxRank];
    double scales[kMaxRank], roiStart[kMaxRank], roiEnd[kMaxRank];
    int64_t count;
};

// Output coordinate o of dim d in input coordinates.
FSC_HD double resizeOriginal(const ResizeParams& p, int d, int64_t o) {
    const double x = double(o), scale = p.scales[d], outLen = double(p.outDims[d]), inLen = double(p.inDims[d]);
    switch (p.coord) {
        case ResizeCoord::HalfPixel: return (x + 0.5) / scale - 0.5;
        case ResizeCoord::HalfPixelSymmetric: {
            const double adj = outLen / (scale * inLen);
            return inLen / 2.0 * (1 - adj) + (x + 0.5) / scale - 0.5;
        }
        case ResizeCoord::PytorchHalfPixel: return outLen > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
        case ResizeCoord::AlignCorners: return outLen == 1 ? 0.0 : x * (inLen - 1) / (outLen - 1);
        case ResizeCoord::TfHalfPixelForNn: return (x + 0.5) / scale;
        case ResizeCoord::TfCropAndResize:
            return outLen > 1 ? p.roiStart[d] * (inLen - 1) + x * (p.roiEnd[d] - p.roiStart[d]) * (inLen - 1) / (outLen - 1)
                              : 0.5 * (p.roiStart[d] + p.roiEnd[d]) * (inLen - 1);
        case ResizeCoord::Asymmetric: break;
    }
    return x / scale;
}

FSC_HD double cubicWeight(double a, double t) {
    t = fabs(t);
    if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0.0;
}

// The taps of output coordinate o along dim d; 0 means extrapolate (tf_crop_and_resize
// outside the input).
FSC_HD int resizeTaps(const ResizeParams& p, int d, int64_t o, int64_t* index, double* weight) {
    const int64_t inLen = p.inDims[d];
    if (p.outDims[d] == inLen && p.scales[d] == 1.0 && p.coord != ResizeCoord::TfCropAndResize) {
        index[0] = o;
        weight[0] = 1.0;
        return 1;
    }
    const double x = resizeOriginal(p, d, o);
    if (p.coord == ResizeCoord::TfCropAndResize && (x < 0 || x > double(inLen - 1))) return 0;
    auto clampIndex = [inLen](int64_t i) { return i < 0 ? int64_t(0) : i > inLen - 1 ? inLen - 1 : i; };
    if (p.mode == ResizeMode::Nearest) {
        int64_t i;
        switch (p.nearest) {
            case NearestRounding::Floor: i = int64_t(floor(x)); break;
            case NearestRounding::Ceil: i = int64_t(ceil(x)); break;
            case NearestRounding::RoundPreferCeil: i = int64_t(floor(x + 0.5)); break;
            default: i = x - floor(x) == 0.5 ? int64_t(floor(x)) : int64_t(round(x)); break;
        }
        index[0] = clampIndex(i);
        weight[0] = 1.0;
        return 1;
    }
    if (p.mode == ResizeMode::Linear) {
        const double xc = x < 0 ? 0.0 : x > double(inLen - 1) ? double(inLen - 1) : x;
        const int64_t i0 = int64_t(floor(xc));
        const double r = xc - double(i0);
        index[0] = clampIndex(i0);
        weight[0] = 1 - r;
        index[1] = clampIndex(i0 + 1);
        weight[1] = r;
        return 2;
    }
    const int64_t i0 = int64_t(floor(x));
    const double r = x - double(i0);
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
        const int64_t i = i0 + k - 1;
        double w = cubicWeight(p.cubicA, r - double(k - 1));
        if (p.excludeOutside && (i < 0 || i >= inLen)) w = 0;
        sum += w;
        index[k] = clampIndex(i);
        weight[k] = w;
    }
    if (p.excludeOutside && sum != 0)
        for (int k = 0; k < 4; ++k) weight[k] /= sum;
    return 4;
}

// Integers truncate toward zero and saturate, as the CPU kernel does (ONNX's reference casts).
FSC_HD double interpolatedIn(ElemType t, double v) {
    double low = 0, high = 0;
    switch (t) {
        case ElemType::I8: low = -128, high = 127; break;
        case ElemType::U8: low = 0, high = 255; break;
        case ElemType::I32: low = -2147483648.0, high = 2147483647.0; break;
        case ElemType::I64: low = -9223372036854775808.0, high = 9223372036854774784.0; break;  // below 2^63
        default: return v;
    }
    return v != v ? 0.0 : fmin(fmax(trunc(v), low), high);
}

FSC_HD void resizeElement(const ResizeParams& p, int64_t i) {
    int64_t index[kMaxRank][kResizeMaxTaps], stride[kMaxRank];
    double weight[kMaxRank][kResizeMaxTaps];
    int taps[kMaxRank], at[kMaxRank];
    int64_t rest = i, s = 1;
    for (int d = p.rank - 1; d >= 0; --d) {
        const int64_t o = rest % p.outDims[d];
        rest /= p.outDims[d];
        stride[d] = s;
        s *= p.inDims[d];
        taps[d] = resizeTaps(p, d, o, index[d], weight[d]);
        if (taps[d] == 0) {
            storeDouble(p.out, p.type, i, p.extrapolation);
            return;
        }
        at[d] = 0;
    }
    double acc = 0;
    while (true) {
        double w = 1;
        int64_t offset = 0;
        for (int d = 0; d < p.rank; ++d) {
            w *= weight[d][at[d]];
            offset += index[d][at[d]] * stride[d];
        }
        if (w != 0) acc += w * loadDouble(p.in, p.type, offset);
        int d = p.rank - 1;
        for (; d >= 0; --d) {
            if (++at[d] < taps[d]) break;
            at[d] = 0;
        }
        if (d < 0) break;
    }
    storeDouble(p.out, p.type, i, interpolatedIn(p.type, acc));
}

}  // namespace fsc::dk
