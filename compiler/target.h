#pragma once
// Where a compiled model runs and how: the backend and its device, CPU threads, TF32 and CUDA
// Graphs. Made once per command or GUI job by makeTarget (app/common/target_choice.h, which
// opens the device, so "no GPU" has one wording), carried by PipelineSpec (buildPipeline is the
// one place the passes depend on it) and turned into ExecutorOptions by executorOptions.
#include <memory>
#include <string>

#include "compiler/runtime/executor.h"
#include "compiler/runtime/kernel_registry.h"

namespace fsc {

class Device;

struct Target {
    Backend backend = Backend::Cpu;
    std::shared_ptr<Device> device;  // the CUDA backend's GPU (or the simulated one); null on the CPU
    int threads = 0;                 // ThreadPool::kAutomatic, or a count
    bool tf32 = false;               // ExecutorOptions::tf32
    bool cudaGraphs = true;          // ExecutorOptions::cudaGraphs
    const char* name() const { return backend == Backend::Cuda ? "cuda" : "cpu"; }
};

// ExecutorOptions for running on the target.
inline ExecutorOptions executorOptions(const Target& target) {
    ExecutorOptions options;
    options.threads = target.threads;
    options.backend = target.backend;
    options.device = target.device;
    options.cudaGraphs = target.cudaGraphs;
    options.tf32 = target.tf32;
    return options;
}

}  // namespace fsc
