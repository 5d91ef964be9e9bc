#pragma once
// QLinearConv's depthwise 2-D layers (one input and one output channel a group): each
// plane's x - x_zero and each channel's w - w_zero in float, the Conv kernel's float
// depthwise loops over them, and the requantization while the plane is in cache. Every
// product and sum is an integer below 2^24, so float holds them exactly and the result is
// the integer convolution's to the bit; the int32 path widened each plane and updated rows
// of int32 (MobileNetV2's QDQ export ran 3.2 ms slower with it than in float between its
// DequantizeLinear and QuantizeLinear).
#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc::cpu {

// Computes the QLinearConv of `ctx` and returns true where it is such a layer (2-D, one
// x zero point, 8-bit data, windows small enough for float to stay exact); false, with
// nothing done, otherwise.
Result<bool> qlinearDepthwise(KernelContext& ctx, const WindowAttrs& attrs, int64_t group);

}  // namespace fsc::cpu
