// The CUDA backend's kernels, host side: each reads the node's attributes once, and per
// call works out shapes, asks the executor for device outputs (arena slots) and describes
// its launches and library calls to the Device (device.h). A factory that declines a node
// (an attribute or shape the device kernel does not handle) answers Unsupported, and
// lowering runs that node on the CPU instead. One file per family: cuda_*_kernels.cpp.
#include "compiler/backends/cuda/cuda_kernel_support.h"

namespace fsc {

void registerCudaKernels(KernelRegistry& r) {
    cudak::registerElementwiseKernels(r);
    cudak::registerGemmKernels(r);
    cudak::registerRowKernels(r);
    cudak::registerMovementKernels(r);
    cudak::registerReduceKernels(r);
    cudak::registerConvKernels(r);
    cudak::registerAttentionKernels(r);
    cudak::registerResizeKernels(r);
    cudak::registerQuantizeKernels(r);
}

}  // namespace fsc
