#include "app/profiling/simulated_trace.h"

#include <algorithm>
#include <map>

namespace fsc {

PartitionShape partitionShape(const Graph& graph) {
    PartitionShape shape;
    for (NodeId id : graph.order()) {
        const Node& n = graph.node(id);
        const int d = deviceOfNode(n);
        if (d < 0) continue;
        shape.devices = std::max(shape.devices, d + 1);
        shape.pipeline |= n.scope.rfind("stage", 0) == 0;
    }
    return shape;
}

Trace simulatedTrace(const SimulatedRun& run, const Graph& graph, const Interconnect& link) {
    Trace trace;
    trace.backend = "simulated";
    trace.device = "simulated: " + std::to_string(run.devices) + " x " + SimulatedDevice{}.name + " over " + link.name;
    trace.iterations = 1;
    std::map<std::string, int64_t> byName;
    for (NodeId id : graph.order()) byName[graph.node(id).name] = int64_t(id.index);
    for (const SimulatedEvent& e : run.events) {
        if (e.kind == "bubble") continue;  // gaps show as gaps
        Activity a;
        a.kind = e.kind == "compute" ? ActivityKind::Kernel : ActivityKind::Memcpy;
        a.name = e.microbatch >= 0 ? e.name + " (micro-batch " + std::to_string(e.microbatch) + ")" : e.name;
        a.startNs = int64_t(e.start * 1e9);
        a.endNs = std::max(a.startNs + 1, int64_t((e.start + e.duration) * 1e9));
        a.stream = e.device;
        if (auto it = byName.find(e.name); it != byName.end()) a.node = it->second;
        trace.activities.push_back(std::move(a));
    }
    std::stable_sort(trace.activities.begin(), trace.activities.end(),
                     [](const Activity& a, const Activity& b) { return a.startNs < b.startNs; });
    for (NodeId id : graph.order()) {
        const Node& n = graph.node(id);
        TraceNode t;
        t.id = int64_t(id.index);
        t.name = n.name;
        t.opType = n.opType;
        trace.nodes.push_back(std::move(t));
    }
    return trace;
}

Result<DeviceSimulation> simulateDevices(const Graph& graph, PartitionShape shape, const std::string& interconnect,
                                         int microbatches) {
    if (shape.devices < 2) return Status(ErrorCode::InvalidArgument, "the graph is not partitioned over devices");
    auto link = interconnectPreset(interconnect);
    if (!link) return link.status();
    DeviceSimulation s{shape, *link, {}, nullptr};
    s.run = shape.pipeline ? simulatePipelineParallel(graph, shape.devices, microbatches, s.link)
                           : simulateTensorParallel(graph, shape.devices, s.link);
    s.trace = std::make_shared<const Trace>(simulatedTrace(s.run, graph, s.link));
    return s;
}

}  // namespace fsc
