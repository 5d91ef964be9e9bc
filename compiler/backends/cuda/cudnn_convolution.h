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

class CudnnConvGraph;

class CudnnConvolution {
public:
    // Null, with `why` set, when cuDNN 9 cannot be opened.
    static std::unique_ptr<CudnnConvolution> open(cudaStream_t stream, std::string* why);
    ~CudnnConvolution();
    std::string version() const;
    // The device's scratch memory of at least `bytes`: counted in its peak, never freed while
    // a captured CUDA Graph may point into it, and refused while capturing would grow it.
    using Workspace = std::function<Result<void*>(size_t bytes)>;
    // A launch on the device's stream: the epilogue when cuDNN does not fuse it.
    using Launcher = std::function<Status(const DeviceLaunch&)>;
    // The device's own allocations (counted in its peak): a shape's planning step's buffer.
    struct Memory {
        std::function<Result<void*>(size_t bytes)> allocate;
        std::function<void(void*)> release;
    };
    // Runs the whole call (epilogue included) on the stream with scratch memory from
    // `workspace`: as an operation graph where cuDNN has an engine for it (planned on a shape's
    // first call, which is never captured), else the legacy convolution then `launch` of
    // convEpilogueLaunch. Planning checks each engine against the legacy call's output, made
    // in `memory`. `capturing`: a CUDA Graph is being captured, so nothing is planned.
    Status run(const ConvCall& call, const Workspace& workspace, const Launcher& launch, const Memory& memory,
               bool capturing);
    // How many shapes run as an operation graph and how many the legacy way, and why the last did.
    struct Routes {
        int graphs = 0, legacy = 0;
        std::string lastLegacyReason;
    };
    Routes routes() const;

    struct Api;  // the resolved entry points
    // For the other operation graphs the plugin builds on the same library and stream.
    const Api& api() const { return *m_api; }
    void* handle() const { return m_handle; }
    cudaStream_t stream() const { return m_stream; }

private:
    CudnnConvolution() = default;
    std::unique_ptr<Api> m_api;
    void* m_library = nullptr;
    void* m_handle = nullptr;  // cudnnHandle_t
    cudaStream_t m_stream = nullptr;
    Status runLegacy(const ConvCall& call, const Workspace& workspace);
    std::map<std::string, int> m_algorithms;  // shape key -> cudnnConvolutionFwdAlgo_t
    // Shape key -> its operation graph's plan, or null where cuDNN has none (then legacy).
    std::map<std::string, std::unique_ptr<CudnnConvGraph>> m_graphs;
    Routes m_routes;
    mutable std::mutex m_mutex;
};

}  // namespace fsc
