#pragma once
// The loops of FusedConv with `channels_last` (X [N, H, W, C], Y [N, OH, OW, M]) that are
// not oneDNN's: depthwise convolution with the channels in the vector lanes, the bias and
// activation after a pointwise GEMM, and the layout changes the other dtypes fall back on;
// also max pooling on NHWC (the channels-last pass's ai.fusescope.MaxPool).
#include <cmath>
#include <cstdint>

#include "compiler/backends/cpu/activation.h"

namespace fsc {
class ThreadPool;
}

namespace fsc::cpu {

// A 2-D window sliding over NHWC images: c channels, input ih x iw, output oh x ow,
// kernel kh x kw, strides, dilations, and the padding before the first row and column.
struct NhwcWindow {
    int64_t n, c, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
};

// What a depthwise tile does to its sums before storing them: add the bias (if any), then
// clamp to [lo, hi] (Relu and Clip, applied while the sums are in registers).
struct DepthwiseEpilogue {
    const float* bias = nullptr;
    float lo = -INFINITY, hi = INFINITY;
};

// MaxPool on NHWC: each output pixel the lane-wise maximum over its window's pixels inside
// the image, seeded by the first of them as the NCHW kernel is (float and double).
template <typename T>
void maxPoolNhwc(ThreadPool& pool, const NhwcWindow& s, const T* x, T* y);

// w is [kh * kw, c]: tap-major, so each tap's weights for neighbouring channels sit
// together (transposeMatrix makes it from ONNX's [c, 1, kh, kw]). With rowSums
// ([n * oh, c]), each output row's per-channel sum after the activation, taken while the
// row is in cache (a squeeze-and-excitation pool's work, se-pool-fusion).
void depthwiseNhwc(ThreadPool& pool, const NhwcWindow& s, const float* x, const float* w, const float* bias,
                   float* y, const Activation& act, float* rowSums = nullptr);

// y [pixels, m] = x [pixels, c] . wT [c, m] + bias, then the activation: a pointwise
// convolution over a handful of pixels, with its weights transposed ([c, m], by
// transposeMatrix).
void pointwiseDots(ThreadPool& pool, const float* x, const float* wT, const float* bias, float* y, int64_t pixels,
                   int64_t c, int64_t m, const Activation& act);

// y [rows, m] += bias (if any), then the activation, a block of rows per task.
void biasActivationRows(ThreadPool& pool, float* y, int64_t rows, int64_t m, const float* bias, const Activation& act);

// [n, a, b, c] -> [n, c, a, b] and back, for elements of `bytes` bytes (1, 2, 4 or 8).
void nhwcToNchw(const void* src, void* dst, int64_t n, int64_t h, int64_t w, int64_t c, int bytes);
void nchwToNhwc(const void* src, void* dst, int64_t n, int64_t c, int64_t h, int64_t w, int bytes);

}  // namespace fsc::cpu
