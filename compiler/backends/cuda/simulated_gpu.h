#pragma once
// A device that is not there, for CI: memory is host memory handed out as "device"
// allocations, each launch runs the kernel's CPU twin over every thread of its grid, each
// GEMM a CPU reference of cuBLASLt's documented semantics, and every pointer and extent
// is checked against the live allocations first. A capacity limit makes out-of-memory
// reproducible. Counters let tests see the copies and launches a run made.
#include <atomic>
#include <functional>
#include <map>
#include <mutex>

#include "compiler/backends/cuda/device.h"

namespace fsc {

struct DeviceCounters {
    int64_t launches = 0, gemms = 0, convolutions = 0, fusedAttentions = 0, allocations = 0;
    int64_t generatedLaunches = 0;  // NVRTC kernels (also counted in launches)
    int64_t hostToDeviceBytes = 0, deviceToHostBytes = 0, deviceToDeviceBytes = 0;
    int64_t replays = 0;
};

class SimulatedGpu : public CudaDevice {
public:
    explicit SimulatedGpu(uint64_t capacityBytes);
    ~SimulatedGpu() override;
    std::string name() const override { return "simulated device"; }
    bool simulated() const override { return true; }
    DeviceMemoryInfo memory() const override;
    Result<void*> allocate(size_t bytes) override;
    void release(void* ptr) override;
    Result<void*> workspace(size_t bytes) override;
    Status copyToDevice(void* dst, const void* src, size_t bytes) override;
    Status copyToHost(void* dst, const void* src, size_t bytes) override;
    Status copyOnDevice(void* dst, const void* src, size_t bytes) override;
    Status fill(void* dst, int byte, size_t bytes) override;
    Status launch(const DeviceLaunch& launch) override;
    int computeCapability() const override { return 90; }
    Status launchGenerated(const GeneratedLaunch& launch) override;
    Status gemm(const GemmCall& call) override;
    bool hasConvolution() const override { return true; }
    Status convolution(const ConvCall& call) override;
    // On unless a test turns it off to reach the other attention routes.
    bool hasFusedAttention() const override { return m_fusedAttention; }
    void setFusedAttention(bool on) { m_fusedAttention = on; }
    Status fusedAttention(const FusedAttentionCall& call) override;
    Status synchronize() override { return Status::ok(); }
    void setObserver(DeviceObserver* observer) override;
    Status beginCapture() override;
    Result<int> endCapture() override;
    Status replay(int graph) override;
    void dropGraph(int graph) override;

    DeviceCounters counters() const;
    size_t liveAllocations() const;
    // Whether [ptr, ptr + bytes) lies inside one live allocation; `why` names the problem.
    bool contains(const void* ptr, size_t bytes, std::string* why = nullptr) const;

private:
    using Op = std::function<Status()>;
    Status run(Op op);  // now, or recorded while capturing
    // `op`, timed and reported to the observer as `what` when it succeeds.
    Status observed(DeviceOperation what, const Op& op);
    Status checkExtents(const std::vector<DeviceExtent>& extents, const char* kernel) const;

    mutable std::mutex m_mutex;
    uint64_t m_capacity;
    uint64_t m_used = 0;
    uint64_t m_peak = 0;
    std::map<uintptr_t, size_t> m_live;  // start -> bytes
    DeviceCounters m_counters;
    bool m_capturing = false;
    std::vector<Op> m_recording;
    std::map<int, std::vector<Op>> m_graphs;
    int m_nextGraph = 1;
    uint64_t m_nextGraphNode = 1;  // graph node ids, as CUPTI gives each node its own
    std::atomic<DeviceObserver*> m_observer{nullptr};
    std::vector<void*> m_workspaces;  // the newest last; older ones stay for captured graphs
    size_t m_workspaceBytes = 0;
    bool m_fusedAttention = true;
};

// The CPU twins, callable directly by tests: every thread of the launch's grid.
void runCpuTwin(const DeviceLaunch& launch);
// The reference GEMM (float accumulation; int8 in exact int32), as the simulated device runs it.
void referenceGemm(const GemmCall& call);
// The reference convolution (cuDNN's semantics, float accumulation).
void referenceConvolution(const ConvCall& call);

}  // namespace fsc
