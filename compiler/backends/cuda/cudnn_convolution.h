#pragma once
// Convolutions on the GPU through cuDNN 9's convolution API, opened with dlopen when the
// device starts: a machine without cuDNN still runs everything else, and lowering puts its
// convolutions on the CPU. Part of the CUDA device plugin only.
#include <cuda_runtime.h>

#include <functional>
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
    // The device's scratch memory of at least `bytes`: counted in its peak, never freed while
    // a captured CUDA Graph may point into it, and refused while capturing would grow it.
    using Workspace = std::function<Result<void*>(size_t bytes)>;
    // Runs on the stream with scratch memory from `workspace` (the first run of a shape is
    // never captured, so it grows outside capture).
    Status run(const ConvCall& call, const Workspace& workspace);

    struct Api;  // the resolved entry points

private:
    CudnnConvolution() = default;
    std::unique_ptr<Api> m_api;
    void* m_library = nullptr;
    void* m_handle = nullptr;  // cudnnHandle_t
    std::map<std::string, int> m_algorithms;  // shape key -> cudnnConvolutionFwdAlgo_t
    std::mutex m_mutex;
};

}  // namespace fsc
