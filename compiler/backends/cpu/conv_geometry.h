#pragma once
// Output sizes and padding of a sliding window (convolutions and pools).
#include <string>
#include <vector>

#include "compiler/runtime/kernel.h"

namespace fsc::cpu {

struct WindowAttrs {
    std::vector<int64_t> strides, dilations, pads, kernelShape;
    std::string autoPad = "NOTSET";
};

struct ConvGeometry {
    std::vector<int64_t> in, kernel, strides, dilations, padBegin, out;
    int64_t channels = 1;  // input channels (set by Conv; depthwise weights index by it)
};

WindowAttrs readWindowAttrs(const KernelInit& init);
Result<ConvGeometry> convGeometry(const KernelContext& ctx, const WindowAttrs& attrs,
                                  const std::vector<int64_t>& inSpatial,
                                  const std::vector<int64_t>& kernel, bool ceilMode);

// Fastest: oneDNN for float32 where it has a primitive, im2col + GEMM otherwise.
// Im2col: always im2col + GEMM, the twin that tests check oneDNN against.
enum class ConvPath { Fastest, Im2col };

// Convolution into a fresh tensor (float or double), for the quantized kernels and tests.
Result<RtTensor> convToNew(KernelContext& ctx, const WindowAttrs& attrs, int64_t group,
                           const RtTensor& x, const RtTensor& w, const RtTensor* b = nullptr,
                           ConvPath path = ConvPath::Fastest);

}  // namespace fsc::cpu
