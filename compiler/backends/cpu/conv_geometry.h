#pragma once
// Convolution into a fresh tensor for the CPU kernels; the window geometry itself is the
// runtime's (window_geometry.h), shared with the CUDA backend.
#include <string>
#include <vector>

#include "compiler/runtime/kernel.h"
#include "compiler/runtime/window_geometry.h"

namespace fsc::cpu {

using fsc::ConvGeometry;
using fsc::convGeometry;
using fsc::readWindowAttrs;
using fsc::WindowAttrs;

// Fastest: oneDNN for float32 where it has a primitive, im2col + GEMM otherwise.
// Im2col: always im2col + GEMM, the twin that tests check oneDNN against.
enum class ConvPath { Fastest, Im2col };

// Convolution into a fresh tensor (float or double), for the quantized kernels and tests.
Result<RtTensor> convToNew(KernelContext& ctx, const WindowAttrs& attrs, int64_t group,
                           const RtTensor& x, const RtTensor& w, const RtTensor* b = nullptr,
                           ConvPath path = ConvPath::Fastest);

}  // namespace fsc::cpu
