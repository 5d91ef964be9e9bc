#pragma once
// Convolutions on the GPU through cuDNN 9's convolution API, opened with dlopen when the
// device starts: a machine without cuDNN still runs everything else, and lowering puts its
// convolutions on the CPU. Part of the CUDA device plugin only.
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compiler/backends/cuda/device.h"

namespace fsc {

class CudnnConvolution {
public:
    // Null, with `why` set, when cuDNN 9 cannot be opened.
    static std::unique_ptr<CudnnConvolution> open(cudaStream_t stream, std::string* why);
    ~CudnnConvolution();
    std::string version() const;
    // Runs on the stream; the workspace grows outside graph capture only (the first run of a
    // shape is never captured).
    Status run(const ConvCall& call, bool capturing);

    struct Api;  // the resolved entry points

private:
    CudnnConvolution() = default;
    std::unique_ptr<Api> m_api;
    void* m_library = nullptr;
    void* m_handle = nullptr;  // cudnnHandle_t
    void* m_workspace = nullptr;
    size_t m_workspaceBytes = 0;
    std::map<std::string, int> m_algorithms;  // shape key -> cudnnConvolutionFwdAlgo_t
    std::mutex m_mutex;
};

}  // namespace fsc
