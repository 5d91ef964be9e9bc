#pragma once
// What the executor needs of an accelerator whatever its kernels are: memory, copies between
// host and device, and optional capture and replay of a whole run (CUDA Graphs on a GPU).
// Pointers a Device hands out are device addresses: the host reads them only through
// copyToHost. A backend's own interface (backends/cuda/device.h: launches, GEMMs,
// convolutions) extends this one; its kernels reach it through their execution provider.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace fsc {

// One operation a device ran, described as CUPTI's activity records describe it on a GPU.
// The simulated device reports these to an observer, so profiling a device run (external
// correlation, the timeline, the memory records) is tested end to end without a GPU; the GPU
// device leaves this to CUPTI and ignores the observer. Times are steady-clock nanoseconds.
// GraphNode: a launch recorded into a captured graph (it runs at each replay).
enum class DeviceOpKind { Kernel, Memcpy, Memset, Allocation, Release, GraphNode };
struct DeviceOperation {
    DeviceOpKind kind = DeviceOpKind::Kernel;
    uint64_t graphNode = 0;  // GraphNode's id, and that of a replayed operation's graph node
    std::string name;  // the kernel's name; for copies CUPTI's direction ("HtoD", "DtoH", "DtoD")
    int64_t startNs = 0, endNs = 0;
    uint64_t bytes = 0;
    uint64_t address = 0;  // allocations and releases
    int64_t grid = 0, block = 0;
};

class DeviceObserver {
public:
    virtual ~DeviceObserver() = default;
    // On the thread that made the call, after the operation ran.
    virtual void onOperation(const DeviceOperation& op) = 0;
};

struct DeviceMemoryInfo {
    uint64_t freeBytes = 0, totalBytes = 0;
    // The most this Device has held at once through allocate(), plus its libraries' fixed
    // workspaces: what to set against PyTorch's max_memory_allocated.
    uint64_t peakAllocatedBytes = 0;
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string name() const = 0;  // "NVIDIA H100 80GB HBM3", "simulated device"
    virtual bool simulated() const = 0;
    virtual DeviceMemoryInfo memory() const = 0;

    // An out-of-memory error states the bytes asked for and the bytes free.
    virtual Result<void*> allocate(size_t bytes) = 0;
    virtual void release(void* ptr) = 0;
    // Scratch for a kernel that needs a temporary beyond its outputs (the int8 GEMM's
    // transposed weight): at least `bytes`, valid until the next workspace() call. It grows
    // outside graph capture only (a graph is captured after an uncaptured run, which grows
    // it); a grown workspace keeps the old one alive, since a captured graph may point there.
    virtual Result<void*> workspace(size_t bytes) = 0;
    // Copies that involve the host finish before they return (pinned staging inside).
    virtual Status copyToDevice(void* dst, const void* src, size_t bytes) = 0;
    virtual Status copyToHost(void* dst, const void* src, size_t bytes) = 0;
    virtual Status copyOnDevice(void* dst, const void* src, size_t bytes) = 0;
    virtual Status fill(void* dst, int byte, size_t bytes) = 0;
    virtual Status synchronize() = 0;
    // Where the simulated device reports what it runs (null: nowhere). See DeviceOperation.
    virtual void setObserver(DeviceObserver* observer) { (void)observer; }

    // Between beginCapture and endCapture, launches and device copies are recorded instead of
    // run; replay runs the recording. Host copies are refused while capturing. A graph id
    // stays valid until dropGraph.
    virtual Status beginCapture() = 0;
    virtual Result<int> endCapture() = 0;
    virtual Status replay(int graph) = 0;
    virtual void dropGraph(int graph) = 0;
};

}  // namespace fsc
