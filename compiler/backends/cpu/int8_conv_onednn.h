#pragma once
// The int32 accumulators of an int8 convolution through oneDNN's convolution primitive, for
// CPUs with AMX: there oneDNN's primitives multiply int8 tiles on AMX, which its integer
// GEMM (what int8_products' im2col + GEMM runs on) does not use. Without AMX the primitive
// is slower than im2col + GEMM (a 64-channel 3x3 layer at 56 x 56 on a Zen 4 VM with VNNI:
// 1.75 against 0.78 ms), so it is not used there unless a test asks for it.
#include <cstdint>
#include <memory>
#include <mutex>

#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc::cpu {

class OneDnnInt8Conv {
public:
    OneDnnInt8Conv();
    ~OneDnnInt8Conv();
    // True where this CPU has AMX, or where a test has asked for the primitive everywhere.
    static bool preferred();
    static void useEverywhere(bool on);  // tests: the primitive's path on any CPU
    static uint64_t timesRun();          // convolutions it has computed in this process
    // y [N, M, OH, OW] (int32, row-major) = conv(x - xZero, w) for x [N, C, H, W] of int8 or
    // uint8 and w [M, C/group, KH, KW] of int8 with zero point 0; padding counts as x ==
    // xZero. False, with y untouched, where oneDNN has no JIT kernel for the case.
    // `weightsConstant` lets the reordered weights be kept between calls.
    bool run(const ConvGeometry& g, int64_t group, const RtTensor& x, int32_t xZero, const RtTensor& w,
             bool weightsConstant, int32_t* y);

private:
    struct Primitive;
    std::mutex m_mutex;  // a plan may run on several threads; the primitive is shared
    std::unique_ptr<Primitive> m_primitive;
};

}  // namespace fsc::cpu
