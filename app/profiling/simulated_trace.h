#pragma once
// A simulated multi-device run as a profiler Trace, so the Timeline shows one lane per
// device (and one per device for its communication) like a measured run. Backend
// "simulated", and the device string says what was modelled: nothing here is measured.
#include <memory>
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

// A partitioned graph simulated on `shape.devices` devices over a named interconnect (nvlink4,
// pcie5, ndr); pipeline-parallel graphs in `microbatches`. What compile --tp/--pp reports and
// what the GUI's Timeline shows come from here. An error for an unpartitioned shape or an
// unknown interconnect.
struct DeviceSimulation {
    PartitionShape shape;
    Interconnect link;
    SimulatedRun run;
    std::shared_ptr<const Trace> trace;  // one lane per device, as a measured run would have
};
Result<DeviceSimulation> simulateDevices(const Graph& graph, PartitionShape shape, const std::string& interconnect,
                                         int microbatches);

}  // namespace fsc
