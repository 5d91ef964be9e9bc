#pragma once
// The int32 accumulators of quantized MatMul and Conv, computed by the int8 GEMM (gemm.h) when
// the operands allow it (int8 or uint8 data with one zero point, int8 or uint8 weights with
// one zero point or one per output channel: what int8-quantization and ONNX Runtime's
// quantize_dynamic produce, per tensor or per channel), else exactly in double by the
// reference path. The GEMM takes one offset per operand, so per-channel weight zero points
// come off afterwards: (x - zx)(w - zw[m]) = (x - zx)w - zw[m] * sum(x - zx) over what the
// output reads (a row of A, a convolution window). uint8 operands are read in place as int8 less 128, the zero point
// with them (Uint8Operands), which leaves every x - zero_point unchanged.
#include "compiler/backends/cpu/conv_geometry.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/int8_conv_onednn.h"
#include "compiler/backends/cpu/int8_conv_winograd.h"
#include "compiler/backends/cpu/packed_rows_cache.h"

#include <functional>

namespace fsc::cpu {

// `wChannelAxis`: W's axis of output channels, where its per-channel zero points run (0 for a
// convolution's W, 1 for a MatMul's B).
bool fitsInt8Gemm(const RtTensor& x, const RtTensor* xZero, const RtTensor& w, const RtTensor* wZero,
                  int64_t wChannelAxis = 0);

// A [..., M, K] by B [K, N] into int32 [..., M, N]; needs fitsInt8Gemm(a, aZero, b, bZero, 1).
Result<RtTensor> int8MatMul(KernelContext& ctx, const RtTensor& a, const RtTensor* aZero, const RtTensor& b,
                            const RtTensor* bZero);

// X [N, C, spatial...] by W [M, C/group, kernel...] into int32 [N, M, out...]; needs
// fitsInt8Gemm(x, xZero, w, wZero). `alloc` gives the output's storage (a kernel's output
// slot, or scratch that is not zeroed first: every element is written). With `primitive`
// (the node's own), int8 weights with zero point 0 go through oneDNN's convolution where
// OneDnnInt8Conv::preferred(); `weightsConstant` lets it keep their reordered copy, and lets
// the GEMM keep the weights (int8 or uint8) packed in `packed` (the node's own) where it packs
// them. With `winograd` (the node's own), 3x3 layers go through it where it takes them
// (CPUs without VNNI), keeping its transformed weights likewise.
using Int32Alloc = std::function<Result<int32_t*>(const std::vector<int64_t>& dims)>;
Status int8Conv(KernelContext& ctx, const WindowAttrs& attrs, int64_t group, const RtTensor& x,
                const RtTensor* xZero, const RtTensor& w, const RtTensor* wZero, const Int32Alloc& alloc,
                OneDnnInt8Conv* primitive = nullptr, bool weightsConstant = false,
                PackedRowsCache* packed = nullptr, Int8Winograd* winograd = nullptr);

}  // namespace fsc::cpu
