#pragma once
// Device-side timings for a CUDA profile: CUPTI's activity records on a GPU, or on the
// simulated device the operations it reports (DeviceObserver), fed through the same
// ActivitySource so correlation, the timeline and the memory records are tested without a
// GPU. This is where the compiler's device meets the profiler (the two never know each
// other): each plan node pushes its external correlation id around its launches, and the
// records come back tied to it.
#include <cstdint>
#include <memory>

#include "core/status.h"
#include "profiler/activity_source.h"
#include "profiler/device_trace.h"

namespace fsc {

class Device;

class DeviceProfiler {
public:
    // CUPTI for a GPU device, the device's own reports for the simulated one.
    static std::unique_ptr<DeviceProfiler> forDevice(std::shared_ptr<Device> device);
    // For tests: records from `source`, which the test feeds.
    DeviceProfiler(std::shared_ptr<Device> device, std::unique_ptr<ActivitySource> source);
    ~DeviceProfiler();

    // Starts recording; the error names why CUPTI cannot (no library, no permission).
    Status start();
    void pushNode(int64_t node, int iteration, int depth);
    void popNode();
    // While recording, when replayed CUDA Graphs reach their plan nodes: nonzero, and
    // different for each start (graph nodes made in an earlier recording are not mapped).
    uint64_t graphReplayScope() const { return m_scope; }
    // After a profiled run: waits for the device and takes its records so far.
    Status drain();
    void stop();
    // Adds the records as activities and measured memory, times from `originNs` (steady clock).
    DeviceTraceCounts finish(Trace& trace, int64_t originNs);

private:
    class SimulatedFeed;
    std::shared_ptr<Device> m_device;
    std::unique_ptr<ActivitySource> m_source;
    std::unique_ptr<SimulatedFeed> m_feed;  // the simulated device's reports, when it is one
    DeviceTraceBuilder m_builder;
    bool m_started = false;
    uint64_t m_scope = 0;
};

}  // namespace fsc
