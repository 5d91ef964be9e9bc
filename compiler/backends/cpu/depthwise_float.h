#pragma once
// One plane of a depthwise 2-D convolution in float, through the Conv kernel's own loops
// (conv.cpp), for callers outside it: QLinearConv's depthwise layers, whose integer sums
// float holds exactly.
#include <vector>

#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc::cpu {

// The bordered copy of the plane and a row of strided columns, kept by the caller (one per
// thread) between planes.
struct DepthwiseScratch {
    std::vector<float> padded, strided;
};

// dst [out0 x out1] = src [in0 x in1] convolved with taps [kernel0 x kernel1] (zero padding).
void depthwiseFloatPlane(const ConvGeometry& geo, const float* src, const float* taps, float* dst,
                         DepthwiseScratch& scratch);

}  // namespace fsc::cpu
