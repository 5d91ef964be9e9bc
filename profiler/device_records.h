#pragma once
// Device activity as CUPTI reports it, in plain structs of our own: what the CUPTI source
// decodes its buffers into, and what tests replay (recorded activity) so the correlation,
// buffering and stats code runs without a GPU. Timestamps are the device's nanoseconds.
#include <cstdint>
#include <string>

namespace fsc {

enum class DeviceRecordKind {
    Kernel,
    Memcpy,
    Memset,
    Allocation,   // device memory allocated (CUPTI memory records)
    Release,      // and freed
    Correlation,  // CUPTI correlation id -> our external id (pushed per plan node)
    RangeStart,   // NVTX push/start (id pairs the two)
    RangeEnd,
    GraphNode,    // a CUDA Graph node made while a plan node's id was pushed: graphNodeId -> externalId
};

struct DeviceRecord {
    DeviceRecordKind kind = DeviceRecordKind::Kernel;
    std::string name;           // kernel name, copy direction, range message
    uint64_t startNs = 0;       // allocation, release and range records: their timestamp
    uint64_t endNs = 0;
    uint32_t stream = 0;
    uint32_t correlationId = 0;  // ties a kernel, copy or allocation to its API call
    uint64_t externalId = 0;     // Correlation and GraphNode records: what the plan node pushed
    uint64_t bytes = 0;
    uint64_t address = 0;
    uint32_t rangeId = 0;
    uint64_t graphNodeId = 0;    // work replayed from a CUDA Graph: its graph node (0: none)
    int grid[3] = {0, 0, 0};
    int block[3] = {0, 0, 0};
    int registers = 0;
    int sharedBytes = 0;
};

// What each plan node pushes as its external correlation id: the node, the timed iteration
// and the control-flow depth, packed so a kernel's record names all three.
struct ExternalId {
    int64_t node = -1;  // -1: work outside any node (input copies, arena allocation)
    int iteration = 0;
    int depth = 0;

    uint64_t encode() const;
    static ExternalId decode(uint64_t id);
};

}  // namespace fsc
