#pragma once
// How the executor reports launches. `app/` connects this to the profiler; the compiler
// never sees the profiler. Times are steady-clock nanoseconds.
#include <cstdint>
#include <string>

#include "compiler/runtime/kernel_registry.h"
#include "core/ids.h"

namespace fsc {

struct LaunchEvent {
    NodeId node;
    const std::string* nodeName = nullptr;
    const std::string* opType = nullptr;
    const std::string* kernelId = nullptr;
    Backend backend = Backend::Cpu;
    int stream = 0;
    int depth = 0;  // 0 for the main graph, +1 per enclosing control-flow node
    int64_t startNs = 0;
    int64_t endNs = 0;
};

class ExecutionListener {
public:
    virtual ~ExecutionListener() = default;
    // Before a node's kernel runs (startNs set, endNs 0): where a device profiler pushes the
    // node's correlation id and an NVTX range opens. Most listeners need only onLaunch.
    virtual void onBegin(const LaunchEvent&) {}
    // After it ran, with both times.
    virtual void onLaunch(const LaunchEvent& event) = 0;
    // Whether this listener times device nodes from the host, so the executor waits for each
    // one to finish before onLaunch. A device profiler (CUPTI) takes the device's own times and
    // says no: the launches then stay asynchronous, as in an unprofiled run.
    virtual bool timesDeviceWorkOnHost() const { return true; }
    // Nonzero when this listener ties work replayed from a CUDA Graph to its plan node, for
    // graphs captured while it listened with this same value: the executor then captures one
    // under the listener (onBegin/onLaunch around each node's recorded launches) and replays
    // it, as an unprofiled run does, instead of launching node by node. A new value (a new
    // profiling session) makes it capture again.
    virtual uint64_t graphReplayScope() const { return 0; }
};

}  // namespace fsc
