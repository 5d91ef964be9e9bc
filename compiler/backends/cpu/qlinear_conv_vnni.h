#pragma once
// A channels-last group-1 QLinearConv from uint8 pixels straight to requantized bytes on
// AVX-512 VNNI: vpdpbusd multiplies four uint8 x int8 pairs into each int32 lane exactly, a
// tile of pixels by 64 channels stays in registers over all of K, and the requantization runs
// on the registers. oneDNN's GEMM wrote int32 sums for a second pass to requantize, and with
// the K of 16-32 of MobileNet's expansions it took 2.5x ONNX Runtime's whole layer. A layer
// with a window reads each tap's channels where they lie in X (x_zero's row outside it): no
// window rows are copied out first.
//   sum_k (x - x_zero) w = sum_k x w - x_zero sum_k w: the weights' sums come off with the bias.
#include <cstdint>
#include <vector>

namespace fsc::cpu {

struct Requantization;

// W [M, K] (int8, zero point 0) in the kernel's order: blocks of 16 output channels, each K/4
// groups of 16 int32 lanes holding four k's bytes; and each channel's sum of its weights.
struct VnniPointwiseWeights {
    int64_t m = 0, k = 0;
    std::vector<int32_t> packed;
    std::vector<int32_t> sums;  // padded to whole blocks with zeros
};

// Whether this CPU runs the kernel (AVX-512 with VNNI).
bool vnniPointwiseAvailable();
// Needs k a multiple of 4.
VnniPointwiseWeights packVnniPointwise(const int8_t* w, int64_t m, int64_t k);

// y [pixels, M] (uint8, or int8 with `signedOut`) from x [pixels, K] with x's zero point,
// requantized with `rq` (one scale and bias per channel, finite scales).
void vnniPointwise(const uint8_t* x, int64_t pixels, int32_t xZero, const VnniPointwiseWeights& w,
                   const Requantization& rq, bool signedOut, void* y);

// The same for the output channels of blocks [firstBlock, lastBlock) of 16 (the last block
// may be partial), so that threads can share a product of few rows (a classifier at batch 1)
// by its channels.
void vnniPointwiseBlocks(const uint8_t* x, int64_t pixels, int32_t xZero, const VnniPointwiseWeights& w,
                         const Requantization& rq, bool signedOut, void* y, int64_t firstBlock, int64_t lastBlock);
// A window layer's geometry: NHWC X [n, h, w, c] (c a multiple of 4), Y [n, oh, ow, M].
struct VnniWindow {
    int64_t n, h, w, c, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};

// Output pixels [firstPixel, firstPixel + count) of Y [pixels, M], channel blocks [firstBlock,
// lastBlock) of 16; W packed from [M, kh, kw, c] (each tap's channels together).
void vnniWindowConv(const uint8_t* x, const VnniWindow& g, int32_t xZero, const VnniPointwiseWeights& w,
                    const Requantization& rq, bool signedOut, void* y, int64_t firstPixel, int64_t count,
                    int64_t firstBlock, int64_t lastBlock);

// A product's rows to float instead (MatMulIntegerToFloat): y = float(sum_k (x - x_zero) w)
// x scale[c] + bias[c], as a multiply then an add. The per-column terms, padded to blocks:
struct VnniFloatTerms {
    std::vector<int32_t> offset;  // -x_zero x the column's weight sum
    std::vector<float> scale, bias;
};
VnniFloatTerms vnniFloatTerms(const VnniPointwiseWeights& w, int32_t xZero, const float* scale, const float* bias);
// Rows [0, rows) of x [rows, K] (x, y at the first row; y's rows w.m floats apart), column
// blocks [firstBlock, lastBlock) of 16.
void vnniRowsToFloat(const uint8_t* x, int64_t rows, const VnniPointwiseWeights& w, const VnniFloatTerms& terms,
                     float* y, int64_t firstBlock, int64_t lastBlock);

// Blocks of 16 output channels in w.
inline int64_t vnniBlocks(const VnniPointwiseWeights& w) { return (w.m + 15) / 16; }

}  // namespace fsc::cpu
