#pragma once
// The memory view's maths, without Qt: peaks of the planned and measured series, the time
// span to draw (the first profiled iteration), which planned step a time falls in, and the
// tensors live at a step.
#include <cstdint>
#include <vector>

#include "profiler/trace.h"

namespace fsc {

struct MemoryPeak {
    int index = -1;  // sample at which the series first reaches its peak; -1 when empty
    int64_t bytes = 0;
};
MemoryPeak memoryPeak(const std::vector<MemorySample>& samples);

// [0, end) of the first profiled iteration's kernels, or of the samples when there are none.
int64_t memorySpanEnd(const Trace& trace);

// The planned step in force at `timeNs` (the last sample at or before it); -1 before any.
int plannedStepAt(const Trace& trace, int64_t timeNs);

// Planned buffers live at `step`, largest first; their bytes add up to the planned sample.
std::vector<const PlannedBuffer*> liveBuffersAt(const Trace& trace, int64_t step);

}  // namespace fsc
