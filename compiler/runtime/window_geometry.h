#pragma once
// Output sizes and padding of a sliding window (convolutions and pools), as ONNX defines
// pads, strides, dilations, auto_pad and ceil_mode: one computation every backend's kernels use.
#include <string>
#include <vector>

#include "compiler/runtime/kernel.h"

namespace fsc {

struct WindowAttrs {
    std::vector<int64_t> strides, dilations, pads, kernelShape;
    std::string autoPad = "NOTSET";
};

struct ConvGeometry {
    std::vector<int64_t> in, kernel, strides, dilations, padBegin, out;
    int64_t channels = 1;  // input channels (set by Conv; depthwise weights index by it)
};

WindowAttrs readWindowAttrs(const KernelInit& init);
// The window over `inSpatial` with `kernel`; attributes that do not fit are an InvalidModel
// error naming the node.
Result<ConvGeometry> convGeometry(const KernelContext& ctx, const WindowAttrs& attrs,
                                  const std::vector<int64_t>& inSpatial,
                                  const std::vector<int64_t>& kernel, bool ceilMode);

}  // namespace fsc
