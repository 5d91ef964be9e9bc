#pragma once
// Resize's (and Upsample's) attributes and output geometry, one set of rules for the CPU
// and CUDA kernels: which mode, coordinate mapping and rounding; from scales or sizes (with
// keep_aspect_ratio_policy and axes) the output dims, the per-dim scale and the region of
// interest. The coordinate maths reads the output's whole length where ONNX's formulas say
// length_resized (align_corners, tf_crop_and_resize), as PyTorch and ONNX Runtime do; ONNX's
// reference takes input x scale unrounded, which differs when that is not a whole number.
#include <string>
#include <vector>

#include "compiler/runtime/kernel.h"
#include "compiler/runtime/rt_tensor.h"

namespace fsc {

struct ResizeAttributes {
    std::string mode;     // nearest, linear, cubic
    std::string coord;    // coordinate_transformation_mode
    std::string nearest;  // nearest_mode
    float cubicA = -0.75f;
    bool excludeOutside = false;
    float extrapolation = 0;
    std::vector<int64_t> axes;
    std::string aspectPolicy;
    std::vector<float> attrScales;  // Upsample-7's `scales` attribute
    bool upsample = false;
    int64_t opset = 0;
};
// Fails for antialias and unknown modes, naming the node.
Result<ResizeAttributes> readResizeAttributes(const KernelInit& init, bool upsample);

struct ResizeGeometry {
    std::vector<int64_t> outDims;
    std::vector<double> scales;      // per dim, 1 where not resized
    std::vector<double> roiStart, roiEnd;
};
// `roi`, `scales`, `sizes`: the node's inputs (null when absent; opset 10 and Upsample pass
// scales only). Errors are about the inputs, without the node's name.
Result<ResizeGeometry> resizeGeometry(const ResizeAttributes& a, const std::vector<int64_t>& inDims, const RtTensor* roi,
                                      const RtTensor* scales, const RtTensor* sizes);

}  // namespace fsc
