#pragma once
// QLinearConv with `channels_last` = 1: com.microsoft's, as ONNX Runtime's NHWC transformer
// writes it and the channels-last pass does for a quantized CNN. X [N, H, W, C] (or
// [N, C, H, W] with `input_layout` NCHW: a region's first convolution reading the graph's
// image as it is), Y [N, OH, OW, M]; W, the scales, zero points and B as ONNX has them.
//   depthwise:       x - x_zero and w - w_zero in float (their sums are integers below 2^24,
//                    so exact), the float NHWC loops with the channels in the vector lanes,
//                    then each pixel's channels requantized
//   group 1, one weight zero point: one int8 GEMM of the pixels' rows (X itself for a 1x1
//                    layer with stride 1, im2col rows otherwise) by W, then each row
//                    requantized; uint8 rows by int8 W is oneDNN's fast u8 x s8 GEMM
//   anything else:   the NCHW kernel's accumulators of an NCHW copy (the caller's), then
//                    requantized into NHWC
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc::cpu {

// The layer's int32 accumulators [N, M, OH, OW] for X [N, C, H, W]: the NCHW kernel's own.
using NchwAccumulators = std::function<Result<RtTensor>(const RtTensor& xNchw)>;

class QLinearConvNhwc {
public:
    // `weightsConstant`: W's bytes stay the same between calls, so their reordering for the
    // GEMM (a kh x kw layer's) is kept.
    Status run(KernelContext& ctx, const WindowAttrs& attrs, int64_t group, bool inputNchw, bool weightsConstant,
               const NchwAccumulators& nchw);
    struct Prepared;

private:
    // W [M, C, kh, kw] as [M, kh, kw, C], the order of an NHWC window's bytes.
    const int8_t* windowOrderWeights(const RtTensor& w, bool constant);
    // What inputs 1-8 give (the requantization; a depthwise layer's taps), kept while they are constants.
    // `pointwise`: a group-1 1x1 layer; `windowed`: a group-1 layer on NHWC X other than a 1x1
    // one at stride 1 without padding.
    Result<const Prepared*> prepare(KernelContext& ctx, int64_t m, int64_t taps, bool depthwise, bool pointwise,
                                    bool windowed);

    std::mutex m_mutex;  // a plan may run on several threads
    std::vector<int8_t> m_reordered;
    const void* m_reorderedFrom = nullptr;
    std::shared_ptr<Prepared> m_prepared;
    std::vector<const void*> m_preparedFrom;  // inputs 1-8's data it was made from
};

}  // namespace fsc::cpu
