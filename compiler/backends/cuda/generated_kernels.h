#pragma once
// The CUDA kernels the compiler generates for a graph (one per FusedElementwise node), for
// `fusescope-cli compile --show-kernels` and the GUI's properties. Plain text; NVRTC turns
// each into PTX when the CUDA backend runs it.
#include <string>
#include <vector>

#include "compiler/backends/cuda/elementwise_codegen.h"
#include "core/graph.h"

namespace fsc {

struct GeneratedKernel {
    NodeId node;
    std::string nodeName;
    DType dtype = DType::Float32;
    CudaKernelSource kernel;  // empty name when `error` says why there is none
    std::string error;
};

// The kernel of one node (a FusedElementwise of the ai.fusescope domain), or an error.
Result<CudaKernelSource> cudaKernelForNode(const Graph& graph, const Node& node);
// Every FusedElementwise of the graph, in schedule order.
std::vector<GeneratedKernel> generatedCudaKernels(const Graph& graph);

}  // namespace fsc
