#pragma once
// CUDA C++ for a FusedElementwise node: one kernel that reads every input at its broadcast
// offset, runs the node's program in registers (float math; float16/bfloat16 are widened on
// load and narrowed on store) and writes the output once. The source is plain text: the CLI
// and GUI show it, NVRTC compiles it at run time (nvrtc_compiler.h), and it needs no CUDA
// toolkit to generate.
#include <string>

#include "compiler/runtime/elementwise_program.h"
#include "core/dtype.h"

namespace fsc {

inline constexpr int kCudaElementwiseMaxRank = 8;

struct CudaKernelSource {
    std::string name;    // extern "C" entry point: fsc_ew_<hash of the program and dtype>
    std::string source;  // a whole translation unit
};

// The kernel's parameters, in order: `const T* in0 .. in<n-1>`, `T* out`, then
// `FscBroadcast<n> b` (rank, output dims, per-input strides in elements with 0 on broadcast
// dims, a per-input flag for inputs that index like the output, and a flag for all of them),
// then `long long count`.
// T is float, __half or __nv_bfloat16 by `dtype`; unsupported dtypes are an error. Each
// statement calls ewApply of kernels/ew_ops.h, whose text the source carries.
Result<CudaKernelSource> elementwiseCudaKernel(const ElementwiseProgram& program, DType dtype);

// The text of kernels/ew_ops.h, built into the binary by CMake.
const char* elementwiseOpsSource();

}  // namespace fsc
