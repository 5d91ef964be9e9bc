#pragma once
// The exact int32 accumulators of a quantized 3x3 convolution of stride 1 by Winograd's
// F(2x2, 3x3) in integers, for x86 CPUs without VNNI, where the int8 GEMM widens both
// operands to int16 anyway and the float convolutions' own Winograd route would otherwise
// leave INT8 behind float32. With G doubled (rows 2 0 0, 1 1 1, 1 -1 1, 0 0 2) every
// transform is in integers: a tile's transformed inputs (x - x_zero_point) stay within
// 4 x 255 and the weights' within 9 x 255, both int16; their products summed over the
// channels by vpmaddwd stay within int32 up to 917 channels; the output transform only adds
// and subtracts, so wrapping int32 arithmetic gives its exact result, four times the
// convolution's sum.
#include <cstdint>
#include <memory>
#include <mutex>

#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc {
class ThreadPool;
}

namespace fsc::cpu {

class Int8Winograd {
public:
    Int8Winograd();
    ~Int8Winograd();
    // How many runs this route took (tests see it was taken).
    static uint64_t runs();

    // y [n, k, oh, ow] = the int32 sums of (x - xZero)(w - wZero) over each 3x3 window, for x
    // [n, c, h, w] and w [k, c, 3, 3], each int8 or uint8 with one zero point (0 when null).
    // Returns false, y untouched, where it does not take the case: not a 2-D dense 3x3
    // window of stride 1 and dilation 1, outputs under 14x14, channels not multiples of 16,
    // more channels than the int32 bound allows, weights within 7 bits of their zero point
    // (the byte kernel multiplies those faster), or a CPU with VNNI or without AVX2.
    // `weightsConstant` lets the transformed weights be kept for the next call with the same w.
    bool run(ThreadPool& pool, const ConvGeometry& g, int64_t group, const RtTensor& x,
             const RtTensor* xZero, const RtTensor& w, const RtTensor* wZero, bool weightsConstant,
             int32_t* y);

    // The same, whatever the CPU's VNNI and the output size (tests, on any AVX2 CPU).
    bool runAnywhere(ThreadPool& pool, const ConvGeometry& g, int64_t group, const RtTensor& x,
                     const RtTensor* xZero, const RtTensor& w, const RtTensor* wZero,
                     bool weightsConstant, int32_t* y);

private:
    struct Weights;
    std::mutex m_mutex;  // a plan may run on several threads; its kernels are shared
    std::unique_ptr<Weights> m_weights;
};

}  // namespace fsc::cpu
