#pragma once
// A simulated multi-device run as a profiler Trace, so the Timeline shows one lane per
// device (and one per device for its communication) like a measured run. Backend
// "simulated", and the device string says what was modelled: nothing here is measured.
#include <string>

#include "compiler/parallel/simulated_timeline.h"
#include "profiler/trace.h"

namespace fsc {

// The partitioned graph shown: tensor parallel ("deviceD/" scopes), pipeline parallel
// ("stageS/"), or neither (0 devices).
struct PartitionShape {
    int devices = 0;
    bool pipeline = false;
};
PartitionShape partitionShape(const Graph& graph);

Trace simulatedTrace(const SimulatedRun& run, const Graph& graph, const Interconnect& link);

}  // namespace fsc
