#pragma once
// What the CUDA backend's host-side kernels (cuda_*_kernels.cpp) share: element types,
// declining a node at lowering, describing launches and copies to the Device. Nothing
// here touches device memory directly, so the same code drives a GPU and the simulated one.
#include <string>
#include <vector>

#include "compiler/backends/cuda/device.h"
#include "compiler/backends/cuda/gemm_lowering.h"
#include "compiler/runtime/kernel.h"
#include "compiler/runtime/kernel_registry.h"

namespace fsc::cudak {

// A node the device kernel does not handle: lowering runs it on the CPU instead.
Status declined(const std::string& why);
// A node whose inputs contradict the model (an invalid model, not a missing feature).
Status bad(const KernelContext& ctx, const std::string& why);
Status unsupported(const KernelContext& ctx, const std::string& why);

Result<dk::ElemType> elemType(DType t);
bool isFloatKind(DType t);  // float32, float16, bfloat16

// The graph's declared dtype of a node's first output, Undefined when unknown.
DType declaredOutputType(const KernelInit& init);
// Declines a node whose declared output is not a float kind.
Status requireFloatKind(const KernelInit& init);
// The input's rank when the graph knows it, else -1.
int64_t declaredRank(const KernelInit& init, size_t input);
bool onlyFirstOutputUsed(const KernelInit& init);
// The device lowering places the node on (null outside a CUDA lowering).
CudaDevice* loweringDevice(const KernelInit& init);

// The device a kernel runs on; an internal error when lowering gave it none.
Result<CudaDevice*> deviceOf(KernelContext& ctx);
Status launch(KernelContext& ctx, const DeviceLaunch& l);
DeviceExtent extentOf(const RtTensor& t, bool write, const char* what);
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& dims);
int64_t numel(const std::vector<int64_t>& dims);
// The numpy broadcast of the inputs' dims.
Result<std::vector<int64_t>> broadcast(const KernelContext& ctx, const std::vector<const RtTensor*>& ins);
// The strides (0 on broadcast dims) that read `t` at the coordinates of `outDims`.
std::vector<int64_t> broadcastStrides(const RtTensor& t, const std::vector<int64_t>& outDims);

// One strided copy launch: the box `box` read from src at srcOffset + c . srcStrides and
// written to dst at dstOffset + c . dstStrides, converting when the dtypes differ.
Status launchCopy(KernelContext& ctx, const RtTensor& src, RtTensor& dst, const std::vector<int64_t>& box,
                  const std::vector<int64_t>& srcStrides, int64_t srcOffset, const std::vector<int64_t>& dstStrides,
                  int64_t dstOffset);

// out = act(in + bias + residual), in place when in is out. bias[j] is added to each run of
// `biasInner` elements j (mod its size): 1 for a GEMM's columns, H*W for NCHW channels; the
// residual (FusedConv's Z) has out's shape.
Status launchBiasActivation(KernelContext& ctx, const RtTensor& in, RtTensor& out, const RtTensor* bias,
                            const GemmActivation& act, int64_t biasInner = 1, const RtTensor* residual = nullptr);
// Reduces x over the marked dims into out (whose element count is the kept dims').
Status launchReduce(KernelContext& ctx, const RtTensor& x, const std::vector<bool>& reduced, dk::ReduceOp op,
                    RtTensor& out);
// FusedMatMul/FusedConv/FusedGemm's `activation` and `activation_params`.
Result<GemmActivation> activationFromInit(const KernelInit& init);

void addKernel(KernelRegistry& r, const std::string& domain, const std::string& op, KernelFactory factory,
               const std::string& variant, std::vector<int> hostInputs = {});

// Each file registers its own family.
void registerElementwiseKernels(KernelRegistry& r);
void registerGemmKernels(KernelRegistry& r);
void registerRowKernels(KernelRegistry& r);
void registerMovementKernels(KernelRegistry& r);
void registerReduceKernels(KernelRegistry& r);
void registerConvKernels(KernelRegistry& r);
void registerAttentionKernels(KernelRegistry& r);
void registerResizeKernels(KernelRegistry& r);
void registerQuantizeKernels(KernelRegistry& r);

}  // namespace fsc::cudak
