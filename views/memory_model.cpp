#include "views/memory_model.h"

#include <algorithm>

namespace fsc {

MemoryPeak memoryPeak(const std::vector<MemorySample>& samples) {
    MemoryPeak peak;
    for (size_t i = 0; i < samples.size(); ++i)
        if (peak.index < 0 || samples[i].bytes > peak.bytes) peak = {int(i), samples[i].bytes};
    return peak;
}

int64_t memorySpanEnd(const Trace& trace) {
    int64_t end = 1;
    for (const Activity& a : trace.activities)
        if (a.iteration == 0 && a.kind != ActivityKind::Range) end = std::max(end, a.endNs);
    for (const auto* list : {&trace.plannedMemory, &trace.measuredMemory})
        for (const MemorySample& m : *list) end = std::max(end, m.timeNs + 1);
    return end;
}

int plannedStepAt(const Trace& trace, int64_t timeNs) {
    const auto& samples = trace.plannedMemory;
    auto after = std::upper_bound(samples.begin(), samples.end(), timeNs,
                                  [](int64_t t, const MemorySample& m) { return t < m.timeNs; });
    return int(after - samples.begin()) - 1;
}

std::vector<const PlannedBuffer*> liveBuffersAt(const Trace& trace, int64_t step) {
    std::vector<const PlannedBuffer*> live;
    for (const PlannedBuffer& b : trace.plannedBuffers)
        if (b.firstStep <= step && step <= b.lastStep) live.push_back(&b);
    std::stable_sort(live.begin(), live.end(), [](const PlannedBuffer* a, const PlannedBuffer* b) { return a->bytes > b->bytes; });
    return live;
}

}  // namespace fsc
