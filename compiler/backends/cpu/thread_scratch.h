#pragma once
// Scratch kept by the calling thread between kernel calls, grown without being zeroed (every
// element used is written first): megabytes allocated afresh each call cost their page faults
// each call (INT8 ResNet-50's first layer grew a zeroed vector back from its last one's size,
// 3 MB of memset a run). Each use has its own slot, so buffers alive at the same time on one
// thread never share storage; a pool's worker threads get their own.
#include <cstddef>
#include <memory>

namespace fsc::cpu {

enum class ScratchSlot {
    NchwAccumulators,  // quant.cpp: a QLinearConv's int32 sums in NCHW
    NhwcAccumulators,  // qlinear_conv_nhwc.cpp: a slice's int32 sums, pixel-major
    WindowBytes,       // qlinear_conv_nhwc.cpp: a slice's window rows or im2col columns
    DequantizedWeights,  // matmul_nbits.cpp: a stripe of block-quantized weights as floats
    PaddedColumns,       // pointwise_conv.cpp: a 1-D convolution's input columns at a padded border
};

template <typename T, ScratchSlot Slot>
T* threadScratch(size_t count) {
    thread_local std::unique_ptr<T[]> buffer;
    thread_local size_t capacity = 0;
    if (count > capacity) {
        buffer = std::make_unique_for_overwrite<T[]>(count);
        capacity = count;
    }
    return buffer.get();
}

}  // namespace fsc::cpu
