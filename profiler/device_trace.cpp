#include "profiler/device_trace.h"

#include <algorithm>
#include <limits>
#include <map>

namespace fsc {
namespace {

constexpr uint64_t kNodeBits = 40, kIterationBits = 16;
constexpr uint64_t kNodeMask = (uint64_t(1) << kNodeBits) - 1;
constexpr uint64_t kIterationMask = (uint64_t(1) << kIterationBits) - 1;

std::string copyName(const DeviceRecord& r) {
    return r.name.empty() ? std::string("memcpy") : "memcpy " + r.name;
}

}  // namespace

// node + 1 in the low 40 bits (0: none), iteration in the next 16, depth in the top 8.
uint64_t ExternalId::encode() const {
    return (uint64_t(node + 1) & kNodeMask) | ((uint64_t(iteration) & kIterationMask) << kNodeBits) |
           (uint64_t(depth & 0xff) << (kNodeBits + kIterationBits));
}

ExternalId ExternalId::decode(uint64_t id) {
    ExternalId e;
    e.node = int64_t(id & kNodeMask) - 1;
    e.iteration = int((id >> kNodeBits) & kIterationMask);
    e.depth = int(id >> (kNodeBits + kIterationBits));
    return e;
}

void DeviceTraceBuilder::add(std::vector<DeviceRecord> records) {
    if (m_records.empty()) m_records = std::move(records);
    else m_records.insert(m_records.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
}

DeviceTraceCounts DeviceTraceBuilder::finish(Trace& trace) {
    DeviceTraceCounts counts;
    // Correlation records may arrive after the records they describe: gather them first.
    std::unordered_map<uint32_t, ExternalId> owners;
    uint64_t origin = std::numeric_limits<uint64_t>::max();
    for (const DeviceRecord& r : m_records) {
        if (r.kind == DeviceRecordKind::Correlation) owners[r.correlationId] = ExternalId::decode(r.externalId);
        else if (r.kind == DeviceRecordKind::GraphNode) mapGraphNode(r.graphNodeId, ExternalId::decode(r.externalId));
        else origin = std::min(origin, r.startNs);
    }
    if (origin == std::numeric_limits<uint64_t>::max()) origin = 0;
    if (m_origin) origin = *m_origin;
    auto relative = [origin](uint64_t ns) { return int64_t(ns) - int64_t(origin); };

    std::map<uint32_t, const DeviceRecord*> openRanges;
    std::vector<const DeviceRecord*> memory;
    for (const DeviceRecord& r : m_records) {
        switch (r.kind) {
            case DeviceRecordKind::Correlation:
            case DeviceRecordKind::GraphNode: break;
            case DeviceRecordKind::Allocation:
            case DeviceRecordKind::Release: memory.push_back(&r); break;
            case DeviceRecordKind::RangeStart: openRanges[r.rangeId] = &r; break;
            case DeviceRecordKind::RangeEnd: {
                auto start = openRanges.find(r.rangeId);
                if (start == openRanges.end()) {
                    ++counts.unmatchedRanges;
                    break;
                }
                Activity a;
                a.kind = ActivityKind::Range;
                a.name = start->second->name;
                a.startNs = relative(start->second->startNs);
                a.endNs = relative(r.startNs);
                a.stream = -1;  // ranges are the host's: a lane of their own
                trace.activities.push_back(std::move(a));
                openRanges.erase(start);
                ++counts.ranges;
                break;
            }
            case DeviceRecordKind::Kernel:
            case DeviceRecordKind::Memcpy:
            case DeviceRecordKind::Memset: {
                Activity a;
                a.kind = r.kind == DeviceRecordKind::Kernel   ? ActivityKind::Kernel
                         : r.kind == DeviceRecordKind::Memcpy ? ActivityKind::Memcpy
                                                              : ActivityKind::Memset;
                a.name = r.kind == DeviceRecordKind::Memcpy ? copyName(r) : r.kind == DeviceRecordKind::Memset ? "memset" : r.name;
                a.startNs = relative(r.startNs);
                a.endNs = relative(r.endNs);
                a.stream = int(r.stream);
                a.bytes = int64_t(r.bytes);
                std::copy(std::begin(r.grid), std::end(r.grid), a.grid);
                std::copy(std::begin(r.block), std::end(r.block), a.block);
                a.registers = r.registers;
                a.sharedBytes = r.sharedBytes;
                auto owner = owners.find(r.correlationId);
                if (owner != owners.end()) {
                    a.iteration = owner->second.iteration;
                    a.depth = owner->second.depth;
                    a.node = owner->second.node;
                }
                if (r.graphNodeId != 0) {
                    auto graphOwner = m_graphNodes.find(r.graphNodeId);
                    if (graphOwner != m_graphNodes.end()) {
                        a.node = graphOwner->second.node;
                        a.depth = graphOwner->second.depth;
                    }
                }
                if (a.node < 0 && a.kind != ActivityKind::Memcpy) ++counts.unattributed;
                if (a.kind == ActivityKind::Kernel) ++counts.kernels;
                else if (a.kind == ActivityKind::Memcpy) ++counts.copies;
                else ++counts.memsets;
                trace.activities.push_back(std::move(a));
                break;
            }
        }
    }
    counts.unmatchedRanges += int64_t(openRanges.size());

    // Bytes in use after each allocation and free, in time order.
    std::stable_sort(memory.begin(), memory.end(), [](const DeviceRecord* a, const DeviceRecord* b) { return a->startNs < b->startNs; });
    int64_t inUse = 0;
    for (const DeviceRecord* r : memory) {
        const bool allocation = r->kind == DeviceRecordKind::Allocation;
        inUse += allocation ? int64_t(r->bytes) : -int64_t(r->bytes);
        auto owner = owners.find(r->correlationId);
        std::string label = allocation ? "allocated " : "freed ";
        label += std::to_string(r->bytes) + " bytes";
        if (!r->name.empty()) label += " (" + r->name + ")";
        if (owner != owners.end() && owner->second.node >= 0)
            if (const TraceNode* n = trace.findNode(owner->second.node)) label += " by " + n->name;
        trace.measuredMemory.push_back({relative(r->startNs), inUse, std::move(label)});
    }
    std::stable_sort(trace.activities.begin(), trace.activities.end(),
                     [](const Activity& a, const Activity& b) { return a.startNs < b.startNs; });
    trace.droppedRecords += m_dropped;
    m_records.clear();
    return counts;
}

}  // namespace fsc
