#pragma once
// float32 convolution through oneDNN. Its blocked-layout kernels beat im2col + GEMM by
// 1.5-2.3x on ResNet and MobileNet layers here even counting the layout reorders in and
// out of each call (docs/benchmarks.md); the channels-last pass removes those reorders.
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
    // Whether run() applies the activation; otherwise the caller does, after it.
    bool appliesActivation() const { return m_postOp; }
    // y = conv(x, w) + b for NCHW-style tensors with 1 to 3 spatial dims; x and y each may
    // be NHWC instead (2 spatial dims), which oneDNN's convolutions read and write as they
    // are. `weightsConstant` lets the reordered weights be kept between calls. Returns false
    // (and leaves y untouched) when oneDNN has no primitive for the case; the caller then
    // uses im2col.
    bool run(const ConvGeometry& g, int64_t group, const RtTensor& x, const RtTensor& w,
             const RtTensor* b, bool weightsConstant, bool xChannelsLast, bool yChannelsLast, RtTensor& y);

private:
    struct Primitive;
    std::mutex m_mutex;  // a plan may run on several threads; its kernels are shared
    Activation m_act;
    bool m_postOp = false;
    std::unique_ptr<Primitive> m_primitive;
};

}  // namespace fsc::cpu
