#pragma once
// Kernels that reduce windows of their input to one value: ReduceSum/Mean/Max/Min,
// GlobalAveragePool, MaxPool/AveragePool, and BatchNormalization's per-channel affine map.
// One thread per output element; accumulation in float.
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

enum class ReduceOp : uint8_t { Sum, Mean, Max, Min, SumSquare };

// Output element i (over the kept dims `dims`, read at `strides`) reduces the box
// `reduceDims` (read at `reduceStrides`) starting there.
struct ReduceParams {
    static constexpr const char* kName = "fsc_reduce";  // the kernel, as profilers name it
    const void* in;
    void* out;
    ElemType type;
    ReduceOp op;
    int rank, reduceRank;
    int64_t dims[kMaxRank], strides[kMaxRank];
    int64_t reduceDims[kMaxRank], reduceStrides[kMaxRank];
    int64_t reduceCount;
    int64_t count;
};

FSC_HD void reduceElement(const ReduceParams& p, int64_t i) {
    int64_t base = 0, rest = i;
    for (int d = p.rank - 1; d >= 0; --d) {
        base += (rest % p.dims[d]) * p.strides[d];
        rest /= p.dims[d];
    }
    const bool extreme = p.op == ReduceOp::Max || p.op == ReduceOp::Min;
    float acc = p.op == ReduceOp::Max ? -INFINITY : p.op == ReduceOp::Min ? INFINITY : 0.f;
    for (int64_t k = 0; k < p.reduceCount; ++k) {
        int64_t off = base, r = k;
        for (int d = p.reduceRank - 1; d >= 0; --d) {
            off += (r % p.reduceDims[d]) * p.reduceStrides[d];
            r /= p.reduceDims[d];
        }
        const float x = loadFloat(p.in, p.type, off);
        if (!extreme) acc += p.op == ReduceOp::SumSquare ? x * x : x;
        else if (x != x) acc = x;  // NaN wins, as on the CPU
        else if (acc == acc) acc = p.op == ReduceOp::Max ? fmaxf(acc, x) : fminf(acc, x);
    }
    if (p.op == ReduceOp::Mean) acc /= float(p.reduceCount);
    storeFloat(p.out, p.type, i, acc);
}

// MaxPool / AveragePool over `spatial` (1 to 3) trailing dims of planes (N * C of them).
// Max is seeded by the window's first tap inside the input; AveragePool's count_include_pad
// divides by the taps inside [-padBegin, in + padEnd), as the CPU backend does.
struct PoolParams {
    static constexpr const char* kName = "fsc_pool";  // the kernel, as profilers name it
    const void* in;
    void* out;
    ElemType type;
    bool max;
    bool countIncludePad;
    int spatial;
    int64_t inDims[3], outDims[3], kernel[3], strides[3], dilations[3], padBegin[3], padEnd[3];
    int64_t inPlane, outPlane;  // elements per plane
    int64_t count;
    // ai.fusescope.MaxPool's and AveragePool's channels_last: [N, spatial..., channels], the
    // channel innermost.
    bool channelsLast;
    int64_t channels;
    bool narrowIndex;  // every index into X and Y fits in 32 bits
};

// The 2-D window (nearly every pool) with nested loops over it: no division per tap, and
// 32-bit index maths where it fits (64-bit division costs dozens of instructions per tap).
template <typename Index>
FSC_HD void pool2dElement(const PoolParams& p, Index i) {
    const Index channels = p.channelsLast ? Index(p.channels) : Index(1);
    const Index channel = p.channelsLast ? i % channels : Index(0);
    const Index pixel = p.channelsLast ? i / channels : i;
    const Index outH = Index(p.outDims[0]), outW = Index(p.outDims[1]);
    const Index inH = Index(p.inDims[0]), inW = Index(p.inDims[1]);
    const Index ox = pixel % outW, oy = (pixel / outW) % outH, plane = pixel / (outW * outH);
    const Index y0 = oy * Index(p.strides[0]) - Index(p.padBegin[0]);
    const Index x0 = ox * Index(p.strides[1]) - Index(p.padBegin[1]);
    const Index kH = Index(p.kernel[0]), kW = Index(p.kernel[1]);
    const Index dH = Index(p.dilations[0]), dW = Index(p.dilations[1]);
    const Index base = plane * Index(p.inPlane);
    float acc = p.max ? -INFINITY : 0.f;
    Index inside = 0;
    for (Index ky = 0; ky < kH; ++ky) {
        const Index y = y0 + ky * dH;
        if (y < 0 || y >= inH) continue;
        for (Index kx = 0; kx < kW; ++kx) {
            const Index x = x0 + kx * dW;
            if (x < 0 || x >= inW) continue;
            const Index at = base + y * inW + x;
            const float v = loadFloat(p.in, p.type, p.channelsLast ? at * channels + channel : at);
            if (!p.max) acc += v;
            else if (inside == 0 || v > acc) acc = v;
            ++inside;
        }
    }
    if (!p.max) {
        // count_include_pad: the taps inside [-padBegin, in + padEnd) along each axis.
        auto tapsInPadded = [](Index start, Index kernel, Index dilation, Index limit) {
            Index end = start + (kernel - 1) * dilation + 1;
            if (end > limit) end = limit;
            return (end - start + dilation - 1) / dilation;
        };
        const Index padCount = p.countIncludePad ? tapsInPadded(y0, kH, dH, inH + Index(p.padEnd[0])) *
                                                       tapsInPadded(x0, kW, dW, inW + Index(p.padEnd[1]))
                                                 : inside;
        acc /= float(padCount ? padCount : 1);
    }
    storeFloat(p.out, p.type, i, acc);
}

FSC_HD void poolElement(const PoolParams& p, int64_t i) {
    if (p.spatial == 2) {
        if (p.narrowIndex) pool2dElement<int32_t>(p, int32_t(i));
        else pool2dElement<int64_t>(p, i);
        return;
    }
    // Channels last: element i is (image, pixel, channel); the input's pixels step by channels.
    const int64_t channel = p.channelsLast ? i % p.channels : 0;
    const int64_t pixelIndex = p.channelsLast ? i / p.channels : i;
    const int64_t plane = pixelIndex / p.outPlane;  // the image when channels last
    int64_t pos[3] = {0, 0, 0}, rest = pixelIndex % p.outPlane;
    for (int d = p.spatial - 1; d >= 0; --d) {
        pos[d] = rest % p.outDims[d];
        rest /= p.outDims[d];
    }
    int64_t taps = 1, padCount = 1;
    for (int d = 0; d < p.spatial; ++d) {
        taps *= p.kernel[d];
        const int64_t start = pos[d] * p.strides[d] - p.padBegin[d];
        int64_t end = start + (p.kernel[d] - 1) * p.dilations[d] + 1;
        if (end > p.inDims[d] + p.padEnd[d]) end = p.inDims[d] + p.padEnd[d];
        padCount *= (end - start + p.dilations[d] - 1) / p.dilations[d];
    }
    float acc = p.max ? -INFINITY : 0.f;
    int64_t inside = 0;
    for (int64_t t = 0; t < taps; ++t) {
        int64_t tap[3] = {0, 0, 0}, r = t, off = 0;
        for (int d = p.spatial - 1; d >= 0; --d) {
            tap[d] = r % p.kernel[d];
            r /= p.kernel[d];
        }
        bool in = true;
        for (int d = 0; d < p.spatial; ++d) {
            const int64_t x = pos[d] * p.strides[d] - p.padBegin[d] + tap[d] * p.dilations[d];
            if (x < 0 || x >= p.inDims[d]) in = false;
            off = off * p.inDims[d] + x;
        }
        if (!in) continue;
        const float v = loadFloat(p.in, p.type,
                                  p.channelsLast ? (plane * p.inPlane + off) * p.channels + channel
                                                 : plane * p.inPlane + off);
        if (!p.max) acc += v;
        else if (inside == 0 || v > acc) acc = v;
        ++inside;
    }
    if (!p.max) acc /= float(p.countIncludePad ? padCount : (inside ? inside : 1));
    storeFloat(p.out, p.type, i, acc);
}

// BatchNormalization at inference: y = (x - mean[c]) * scale[c] / sqrt(var[c] + eps) + bias[c],
// c = (i / inner) % channels.
struct ChannelAffineParams {
    static constexpr const char* kName = "fsc_channel_affine";  // the kernel, as profilers name it
    const void* in;
    const void* scale;
    const void* bias;
    const void* mean;
    const void* var;
    void* out;
    ElemType type;
    float epsilon;
    int64_t channels, inner;
    int64_t count;
};

FSC_HD void channelAffineElement(const ChannelAffineParams& p, int64_t i) {
    const int64_t c = (i / p.inner) % p.channels;
    const float invStd = 1.f / sqrtf(loadFloat(p.var, p.type, c) + p.epsilon);
    const float x = loadFloat(p.in, p.type, i);
    storeFloat(p.out, p.type, i,
               (x - loadFloat(p.mean, p.type, c)) * invStd * loadFloat(p.scale, p.type, c) + loadFloat(p.bias, p.type, c));
}

}  // namespace fsc::dk
