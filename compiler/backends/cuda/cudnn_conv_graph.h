#pragma once
// A convolution and its epilogue (bias, residual, activation) as one cuDNN operation graph
// (the backend descriptor API): cuDNN's heuristics propose engines, the first few that
// finalize are run on the call's own buffers, each output checked against the legacy call's,
// and the fastest of those that agree is kept, as ONNX Runtime's exhaustive search and
// TensorRT's tactics time theirs. One plan per shape; the legacy convolution call stays for
// what no engine takes. Part of the CUDA device plugin only.
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backends/cuda/cudnn_convolution.h"

namespace fsc {

class CudnnConvGraph {
public:
    // The legacy call's result for the call being planned, in device memory the caller owns
    // until build returns: what every candidate engine's output must agree with first.
    using Reference = std::function<Result<const void*>()>;
    // Null with `why` set when cuDNN has no engine for the graph that agrees with `reference`
    // (or the graph's shape is one this builder does not describe). Runs candidates on
    // `stream`, so never call it while capturing a CUDA Graph.
    static std::unique_ptr<CudnnConvGraph> build(const CudnnConvolution::Api& api, void* handle, cudaStream_t stream,
                                                 const ConvCall& call, const CudnnConvolution::Workspace& workspace,
                                                 const Reference& reference, std::string* why);
    ~CudnnConvGraph();
    // Runs the plan on another call of the same shape (its pointers 16-byte aligned).
    Status execute(const ConvCall& call, const CudnnConvolution::Workspace& workspace) const;
    // "engine 3 of 8 candidates, 0.412 ms": what was chosen, for FUSESCOPE_CUDNN_LOG.
    const std::string& choice() const { return m_choice; }
    // Whether every pointer of `call` has the alignment the plan was built for.
    static bool aligned(const ConvCall& call);

private:
    CudnnConvGraph() = default;
    const CudnnConvolution::Api* m_api = nullptr;
    void* m_handle = nullptr;
    void* m_plan = nullptr;  // cudnnBackendDescriptor_t, an execution plan
    int64_t m_workspaceBytes = 0;
    std::string m_choice;
};

}  // namespace fsc
