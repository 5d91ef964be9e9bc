#pragma once
// A channels-last depthwise QLinearConv from 8-bit pixels straight to requantized bytes in
// AVX-512: each tap's 16 channels widened to float as they are loaded, the window's products
// summed in registers (integers below 2^24, so exact in float, in any order), requantized in
// registers. The general path converts the input rows to float in memory, runs the float
// depthwise loops and requantizes their sums in a third pass: on MobileNetV2-QDQ's stride-2
// layers that was 1.5-1.8x ONNX Runtime's time.
//   sum (x - x_zero) w = sum x w - x_zero sum w: the weights' sums come off with the bias, and
//   taps outside the image read x_zero.
#include <cstdint>

namespace fsc::cpu {

struct Requantization;

// The layer's shape: NHWC X [n, ih, iw, c] into Y [n, oh, ow, c], square windows.
struct DepthwiseShape {
    int64_t n, c, ih, iw, oh, ow, kernel, stride, padTop, padLeft;
};

// Whether this CPU and layer take the kernel: AVX-512 (F, BW), 3x3 or 5x5 windows at stride
// 1 or 2 without dilation, at most 255 x 255 x 25 in a sum.
bool directDepthwiseTakes(const DepthwiseShape& s, int64_t dilationH, int64_t dilationW, int64_t strideW,
                          int64_t kernelW);

// Output rows [firstRow, lastRow) of image `image`. `taps`: w - w_zero as float, [k * k, c];
// `offsets`: each channel's bias less x_zero times its taps' sum, `scales`: its scale, both
// padded to whole vectors of 16.
void directDepthwiseRows(const DepthwiseShape& s, const void* x, bool signedX, int32_t xZero, const float* taps,
                         const int32_t* offsets, const float* scales, float yZero, bool signedY, void* y,
                         int64_t image, int64_t firstRow, int64_t lastRow);

}  // namespace fsc::cpu
