#pragma once
// The seam between the CUDA backend and a device. The backend's kernels (cuda_kernels.cpp)
// describe each launch and each library call as plain data and hand it to a CudaDevice; the
// real one (cuda_device.cu, a plugin loaded at run time) launches it on a GPU, the
// simulated one (simulated_gpu.cpp) runs the kernel's CPU twin, or a CPU reference of
// the library's documented semantics, after checking that every pointer and extent lies
// inside a live allocation. Pointers handed out by a Device are device addresses: the host
// reads them only through copyToHost.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "compiler/backends/cuda/fused_attention_call.h"
#include "compiler/backends/cuda/kernels/attention_kernel.h"
#include "compiler/backends/cuda/kernels/copy_kernel.h"
#include "compiler/backends/cuda/kernels/elementwise_kernel.h"
#include "compiler/backends/cuda/kernels/index_kernels.h"
#include "compiler/backends/cuda/kernels/launch_geometry.h"
#include "compiler/backends/cuda/kernels/quantize_kernel.h"
#include "compiler/backends/cuda/kernels/resize_kernel.h"
#include "compiler/backends/cuda/kernels/reduce_kernels.h"
#include "compiler/backends/cuda/kernels/row_kernels.h"
#include "compiler/runtime/device.h"
#include "core/status.h"

namespace fsc {

// A span of device memory a launch reads or writes, for bounds checks.
struct DeviceExtent {
    const void* ptr = nullptr;
    size_t bytes = 0;
    bool write = false;
    const char* what = "";  // "input 0", "output", "bias"
};

// Every kind of kernel launch, defined once: its parameters (kernels/*.h, each struct with its
// kernel's name as kName). Both devices dispatch on the alternative held: the GPU through an
// overload of dk::launch (kernels/device_kernels.cu), the simulated one through its CPU twin
// (simulated_gpu.cpp); a kind either lacks fails to compile there.
using DeviceKernelParams = std::variant<dk::EwParams, dk::BiasActParams, dk::CopyParams, dk::SoftmaxParams, dk::NormParams, dk::GatherParams, dk::WhereParams, dk::ReduceParams, dk::PoolParams, dk::ChannelAffineParams, dk::AttentionParams, dk::AttentionSoftmaxParams, dk::FillParams, dk::ResizeParams, dk::QuantizeParams>;

struct DeviceLaunch {
    dk::LaunchGeometry geometry;
    DeviceKernelParams params;
    std::vector<DeviceExtent> extents;
    // The parameters of kind P, made current: what a kernel's host side fills.
    template <typename P>
    P& set() { return params.emplace<P>(); }
    const char* name() const;  // "fsc_elementwise", ...
};

// A kernel generated for this graph (a FusedElementwise's source, compiled by NVRTC): PTX
// whose one entry, `name`, takes the arguments of elementwise_codegen.h. `params` holds the
// same pointers, broadcast and count, and the program, which the simulated device runs as
// the kernel's CPU twin (kernels/generated_args.h turns it into the real arguments).
struct GeneratedLaunch {
    std::string name;
    std::shared_ptr<const std::string> ptx;
    dk::EwParams params{};
    dk::LaunchGeometry geometry;
    std::vector<DeviceExtent> extents;
};

// A batched, strided matrix product with cuBLASLt's semantics, written row-major as the
// rest of the runtime is: for each batch i,
//   C_i = alpha * op(A_i) * op(B_i) + beta * C_i, then C_i[r, c] = act(C_i[r, c] + bias[c])
// op(A_i) is m x k (A_i stored k x m when transA), op(B_i) is k x n; A_i = a + i * strideA
// (elements); a stride of 0 repeats the matrix over the batch. Accumulation is float32.
// Integer GEMMs (type I8): A and B int8, C int32, exact int32 accumulation, alpha 1, beta 0,
// no epilogue; cuBLASLt's integer kernels also want B as n x k (transB), A not transposed,
// and n, k and every leading dimension a multiple of 4 (checkGemmCall says which fails).
struct GemmCall {
    dk::ElemType type = dk::ElemType::F32;  // A, B, C and bias; I8: A and B, with C int32
    bool transA = false, transB = false;
    int64_t m = 0, n = 0, k = 0, batch = 1;
    const void* a = nullptr;
    int64_t lda = 0, strideA = 0;
    const void* b = nullptr;
    int64_t ldb = 0, strideB = 0;
    void* c = nullptr;
    int64_t ldc = 0, strideC = 0;
    float alpha = 1.f, beta = 0.f;
    // float32 products on tensor cores from inputs rounded to TF32 (10-bit mantissa), as
    // cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32 does; float32 accumulation either way.
    bool tf32 = false;
    bool floatOutput = false;    // C is float32 whatever A and B are (no bias, no activation)
    const void* bias = nullptr;  // n values, or null
    dk::Act act = dk::Act::None;
    float actAlpha = 0.f, actBeta = 0.f;
};

// A convolution with cuDNN's semantics (cross-correlation, NCHW input and output, weights
// [K, C / group, kernel...], symmetric zero padding), with FusedConv's epilogue:
//   y = act(conv(x, w) + bias[channel] + z)
// 1 to 3 spatial dims. A device runs the epilogue in the convolution where its library can
// (cuDNN's operation graph) and else as one BiasActivation launch after it
// (convEpilogueLaunch), so every device gives the whole result.
struct ConvCall {
    dk::ElemType type = dk::ElemType::F32;
    int spatial = 2;
    int64_t n = 1, c = 1, k = 1, group = 1;
    int64_t inDims[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, outDims[3] = {1, 1, 1};
    int64_t strides[3] = {1, 1, 1}, dilations[3] = {1, 1, 1}, pads[3] = {0, 0, 0};
    bool channelsLast = false;       // y stored [n, spatial..., c] (2 spatial dims only)
    bool inputChannelsLast = false;  // x too
    // w stored [K, R, S, C / group] (KRSC), the filter layout cuDNN's NHWC kernels read; else
    // it converts the filter first, in every call (2 spatial dims only).
    bool filterChannelsLast = false;
    bool tf32 = false;  // float32 on tensor cores from TF32-rounded inputs (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
    const void* x = nullptr;
    const void* w = nullptr;
    void* y = nullptr;
    // The epilogue: k bias values or null, a residual of y's shape and layout or null.
    const void* bias = nullptr;
    const void* z = nullptr;
    dk::Act act = dk::Act::None;
    float actAlpha = 0.f, actBeta = 0.f;
    bool hasEpilogue() const { return bias || z || act != dk::Act::None; }
};

// A device the CUDA backend launches on: the runtime's Device (memory, copies, capture)
// plus launches of the backend's kernels and its libraries' calls. Under capture,
// launches and GEMMs are recorded too.
class CudaDevice : public Device {
public:
    virtual Status launch(const DeviceLaunch& launch) = 0;
    // What generated kernels are compiled for: 90 for sm_90 (the simulated device says 90).
    virtual int computeCapability() const = 0;
    // Loads the PTX once per name, outside graph capture (a graph is captured only after an
    // uncaptured run, which loads it), then launches it.
    virtual Status launchGenerated(const GeneratedLaunch& launch) = 0;
    virtual Status gemm(const GemmCall& call) = 0;
    // Whether convolution() works here (the GPU device needs cuDNN 9 on the loader's path);
    // without it lowering runs convolutions on the CPU.
    virtual bool hasConvolution() const = 0;
    virtual Status convolution(const ConvCall& call) = 0;
    // Whether fusedAttention() may take calls here (the GPU device: cuDNN 9 and sm_80 or newer).
    // A call it has no engine for fails as Unsupported and changes nothing: the caller then
    // runs attention another way.
    virtual bool hasFusedAttention() const = 0;
    virtual Status fusedAttention(const FusedAttentionCall& call) = 0;
};

// The device the CUDA backend runs on: the first GPU through the plugin, or with
// FUSESCOPE_DEVICE=simulated the simulated device. The error says why there is none
// (no plugin in this build, no driver, driver too old, no device) in one line.
Result<std::shared_ptr<CudaDevice>> openCudaDevice();
std::shared_ptr<CudaDevice> makeSimulatedGpu(uint64_t capacityBytes = uint64_t(8) << 30);

// Checks a GEMM's description (sizes, leading dimensions, strides) before any library sees it.
Status checkGemmCall(const GemmCall& call);
// The extents a GEMM call reads and writes.
std::vector<DeviceExtent> gemmExtents(const GemmCall& call);
// The same for a convolution; checkConvCall also checks the output size follows from the rest.
Status checkConvCall(const ConvCall& call);
std::vector<DeviceExtent> convExtents(const ConvCall& call);
size_t convOutputBytes(const ConvCall& call);  // Y's
// The convolution's epilogue as one BiasActivation launch over y, in place: what a device
// runs after the convolution when its library cannot fuse it.
DeviceLaunch convEpilogueLaunch(const ConvCall& call);
// A float rounded to TF32 (1 sign, 8 exponent, 10 mantissa bits; nearest, ties away from
// zero, as the tensor cores' conversion does): the simulated device's inputs under tf32.
float roundToTf32(float v);

}  // namespace fsc
