#pragma once
// float32 convolution through oneDNN. Its blocked-layout kernels beat im2col + GEMM by
// 1.5-2.3x on ResNet and MobileNet layers here even counting the layout reorders in and
// out of each call (docs/benchmarks.md); the channels-last pass removes those reorders.
#include <cstdint>
#include <memory>
#include <mutex>

#include "compiler/backends/cpu/activation.h"
#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc::cpu {

class OneDnnConv {
public:
    OneDnnConv();
    ~OneDnnConv();
    // A FusedConv's activation, applied by the convolution itself as a oneDNN post-op
    // (on the output while it is in registers) where oneDNN has the same function: ReLU,
    // LeakyReLU, Clip and Swish. Set before the first run.
    void setActivation(const Activation& act);
    // Primitives made after this take oneDNN's own layout choice even where the NHWC kernels
    // are faster (tests: the blocked layouts and their reorders on any CPU).
    static void useOwnLayoutsOnly(bool only);
    // How many runs took a Winograd kernel, which 3x3 windows of stride 1 on outputs of
    // 14x14 and up get where oneDNN has one (AVX-512); tests see it was taken.
    static uint64_t winogradRuns();
    // Whether oneDNN runs AVX-512 here: its Winograd kernels, and NHWC kernels as fast as
    // its blocked ones, need it.
    static bool hasAvx512();
    // What a run did of the epilogue; the caller does the rest, after it.
    struct Done {
        bool ran = false;         // false: y untouched, oneDNN has no primitive for the case
        bool activation = false;  // the activation is applied
        bool residual = false;    // z is added (before the activation)
    };
    // y = conv(x, w) + b [+ z] for NCHW-style tensors with 1 to 3 spatial dims; x and y each
    // may be NHWC instead (2 spatial dims), which oneDNN's convolutions read and write as
    // they are. z, when given, has y's dims and layout and is accumulated onto (a sum
    // post-op, before the activation) where y holds it: y may be z's own buffer, else z is
    // copied in first (reordered in, where the kernel writes a blocked layout). Where
    // oneDNN has no JIT kernel for that, neither z nor the activation is applied, and with
    // y in z's buffer nothing runs (y and z untouched, ran false).
    // `weightsConstant` lets the reordered weights be kept between calls.
    Done run(const ConvGeometry& g, int64_t group, const RtTensor& x, const RtTensor& w, const RtTensor* b,
             const RtTensor* z, bool weightsConstant, bool xChannelsLast, bool yChannelsLast, RtTensor& y);

private:
    struct Primitive;
    std::mutex m_mutex;  // a plan may run on several threads; its kernels are shared
    Activation m_act;
    std::unique_ptr<Primitive> m_primitive;
};

}  // namespace fsc::cpu
