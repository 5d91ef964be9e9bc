#pragma once
// A simulated run of a partitioned graph on several devices: each node's time from the
// cost model on a nominal device (roofline: flops / peak, bytes / bandwidth, the larger),
// collectives and sends from the alpha-beta interconnect. Nothing here is measured; every
// output says "simulated".
#include <string>
#include <vector>

#include "compiler/parallel/interconnect.h"
#include "core/graph.h"

namespace fsc {

struct SimulatedDevice {
    std::string name = "H100 SXM (nominal: 67 TFLOP/s fp32, 3.35 TB/s)";
    double flopsPerSecond = 67e12;
    double bytesPerSecond = 3.35e12;
};

struct SimulatedEvent {
    int device = 0;
    std::string name;     // node name (collectives: the collective)
    std::string kind;     // "compute", "all-reduce", "send", "bubble"
    int microbatch = -1;  // pipeline schedules
    double start = 0, duration = 0;  // seconds
};

struct SimulatedRun {
    int devices = 1;
    std::vector<SimulatedEvent> events;
    double totalSeconds = 0;
    double singleDeviceSeconds = 0;  // the same work on one device
    double communicationSeconds = 0; // on the critical path
    double communicationBytes = 0;   // per device, payload
    double bubbleFraction = 0;       // idle share of device time
    std::vector<double> weightBytes; // per device
    double speedup() const { return totalSeconds > 0 ? singleDeviceSeconds / totalSeconds : 0; }
};

// One node's time on the nominal device (roofline of the cost model's estimate).
double simulatedNodeSeconds(const Graph& graph, const Node& node, const SimulatedDevice& device = {});

// The device a node of a partitioned graph runs on: D for scope "deviceD/..." or
// "stageD/...", -1 for nodes every device runs (replicated).
int deviceOfNode(const Node& node);

// Tensor-parallel graph: devices run their shards side by side and meet at every AllReduce.
SimulatedRun simulateTensorParallel(const Graph& graph, int devices, const Interconnect& link,
                                    const SimulatedDevice& device = {});

// Pipeline-parallel graph (stages in scope "stageS/"), `microbatches` equal slices of the
// batch: GPipe and 1F1B run the same forward steps for inference, so the time is the same;
// they differ in how many micro-batches' activations a stage holds (all of them, or at most
// the number of stages), reported by the caller.
SimulatedRun simulatePipelineParallel(const Graph& graph, int stages, int microbatches, const Interconnect& link,
                                      const SimulatedDevice& device = {});

}  // namespace fsc
