#pragma once
// What a profiled run records, shared by `fusescope-cli profile`, `run --profile` and the GUI:
// the executor's launches as a Trace's activities, the plan's nodes with their provenance
// and cost-model work, and the per-node table made from them. Qt-free.
#include <cstdint>
#include <vector>

#include "compiler/runtime/execution_listener.h"
#include "compiler/runtime/rt_tensor.h"
#include "profiler/node_stats.h"
#include "profiler/trace.h"

namespace fsc {

class DeviceProfiler;
class Executor;

// Records each launch of the profiled runs as an activity, times from `originNs` (the
// steady clock). With a device profiler, device work is timed by the device (CUPTI) and tied
// to its node through the external id pushed here; only the host's own work (CPU fallback
// steps) is timed on the host.
class TraceRecorder : public ExecutionListener {
public:
    TraceRecorder(Trace& trace, DeviceProfiler* device) : m_trace(trace), m_device(device) {}
    void onBegin(const LaunchEvent& e) override;
    void onLaunch(const LaunchEvent& e) override;
    bool timesDeviceWorkOnHost() const override { return m_device == nullptr; }
    uint64_t graphReplayScope() const override;
    static int64_t nowNs();  // the steady clock the activities are timed on

    bool recording = false;  // off for warm-up and unprofiled runs
    int iteration = 0;
    int64_t originNs = 0;

private:
    Trace& m_trace;
    DeviceProfiler* m_device;
};

// The plan's steps as the trace's nodes: name, op, kernel, provenance, and the cost model's
// FLOPs and bytes for the shapes `feeds` bound.
void addPlanNodes(const Executor& exec, const std::vector<RtTensor>& feeds, Trace& trace);

// Per-node rows of a trace's kernel activities: main-graph nodes by id, nested launches by
// name (what the Run table and `run --profile` list).
NodeStatsCollector nodeTimes(const Trace& trace);

}  // namespace fsc
