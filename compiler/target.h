#pragma once
// Where a compiled model runs and how: the backend and its device, CPU threads, TF32 and CUDA
// Graphs. Made once per command or GUI job by makeTarget (app/common/target_choice.h, which
// opens the device, so "no GPU" has one wording), carried by PipelineSpec (buildPipeline is the
// one place the passes depend on it) and turned into ExecutorOptions, with the execution
// providers of its backend, by executorOptions.
#include <memory>
#include <string>

#include "compiler/backends/cpu/cpu_provider.h"
#include "compiler/backends/cuda/cuda_provider.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/kernel_registry.h"

namespace fsc {

struct Target {
    Backend backend = Backend::Cpu;
    std::shared_ptr<CudaDevice> device;  // the CUDA backend's GPU (or the simulated one); null on the CPU
    int threads = 0;                 // ThreadPool::kAutomatic, or a count
    bool tf32 = false;               // ExecutorOptions::tf32
    bool cudaGraphs = true;          // ExecutorOptions::cudaGraphs
    const char* name() const { return backend == Backend::Cuda ? "cuda" : "cpu"; }
};

// ExecutorOptions for running on the target: the CPU provider as the host, and on the CUDA
// backend its provider over the target's device.
inline ExecutorOptions executorOptions(const Target& target) {
    ExecutorOptions options;
    options.threads = target.threads;
    options.host = cpuProvider();
    if (target.backend == Backend::Cuda) options.device = makeCudaProvider(target.device);
    options.cudaGraphs = target.cudaGraphs;
    options.tf32 = target.tf32;
    return options;
}

// A CPU run at `threads` (1, or ThreadPool::kAutomatic): what passes, calibration and tests
// that run a graph on the host use.
inline ExecutorOptions cpuExecutorOptions(int threads = 1) {
    Target target;
    target.threads = threads;
    return executorOptions(target);
}

// The CUDA backend on `device`, the CPU running the nodes it declines.
inline ExecutorOptions cudaExecutorOptions(std::shared_ptr<CudaDevice> device, int threads = 1) {
    Target target;
    target.backend = Backend::Cuda;
    target.device = std::move(device);
    target.threads = threads;
    return executorOptions(target);
}

}  // namespace fsc
