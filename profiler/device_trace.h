#pragma once
// Turns device records into the Trace: each kernel, copy and memset is tied to the plan node
// whose external id was pushed around its launch (through the CUPTI correlation records),
// or through its CUDA Graph node when it was replayed from a graph; allocations and frees
// become the measured memory timeline; NVTX ranges become Range activities. Records may come
// in any order and in several batches (CUPTI hands buffers over as they fill).
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "profiler/device_records.h"
#include "profiler/trace.h"

namespace fsc {

struct DeviceTraceCounts {
    int64_t kernels = 0, copies = 0, memsets = 0, ranges = 0;
    int64_t unattributed = 0;  // kernels and copies no node claimed: reported, never hidden
    int64_t unmatchedRanges = 0;
};

class DeviceTraceBuilder {
public:
    // Kernels replayed from a CUDA Graph share the graph launch's correlation (which gives
    // the iteration): GraphNode records, made at capture, say which plan node each graph
    // node ran; this maps one directly.
    void mapGraphNode(uint64_t graphNodeId, ExternalId owner) { m_graphNodes[graphNodeId] = owner; }
    void add(std::vector<DeviceRecord> records);
    void addDropped(int64_t records) { m_dropped += records; }
    // Times are made relative to this (the same clock as the records: the host's steady clock
    // when CUPTI was given it), so host activities of the same run line up; by default the
    // earliest record.
    void setOrigin(uint64_t ns) { m_origin = ns; }
    // Appends activities, measured memory and the dropped count to `trace`, activities sorted
    // by start.
    DeviceTraceCounts finish(Trace& trace);

private:
    std::vector<DeviceRecord> m_records;
    std::unordered_map<uint64_t, ExternalId> m_graphNodes;
    int64_t m_dropped = 0;
    std::optional<uint64_t> m_origin;
};

}  // namespace fsc
