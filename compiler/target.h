#pragma once
// Where a compiled model runs and how: the backend and its device, CPU threads, TF32 and CUDA
// Graphs. Made once per command or GUI job by makeTarget (which opens the device, so "no GPU"
// has one wording), carried by PipelineSpec (buildPipeline is the one place the passes depend
// on it) and turned into ExecutorOptions by executorOptions.
#include <memory>
#include <string>

#include "compiler/runtime/executor.h"
#include "compiler/runtime/kernel_registry.h"
#include "core/status.h"

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

struct TargetChoice {
    std::string backend = "cpu";  // "cpu" or "cuda"
    int threads = 0;
    bool tf32 = false;
    bool cudaGraphs = true;
};

// The target chosen: "cuda" opens the first GPU (FUSESCOPE_DEVICE=simulated: the simulated
// one) and fails with why there is none; an unknown backend is an InvalidArgument.
Result<Target> makeTarget(const TargetChoice& choice);

ExecutorOptions executorOptions(const Target& target);

}  // namespace fsc
