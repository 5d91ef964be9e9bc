#include "app/profiling/trace_recorder.h"

#include <chrono>

#include "app/profiling/device_profiler.h"
#include "compiler/cost_model.h"
#include "compiler/runtime/executor.h"
#include "profiler/cupti/nvtx_range.h"

namespace fsc {

int64_t TraceRecorder::nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void TraceRecorder::onBegin(const LaunchEvent& e) {
    if (!recording) return;
    nvtxPush(e.nodeName->c_str());  // Nsight Systems sees the same nodes
    if (m_device) m_device->pushNode(int64_t(e.node.index), iteration, e.depth);
}

uint64_t TraceRecorder::graphReplayScope() const {
    return recording && m_device ? m_device->graphReplayScope() : 0;
}

void TraceRecorder::onLaunch(const LaunchEvent& e) {
    if (!recording) return;
    nvtxPop();
    if (m_device) {
        m_device->popNode();
        if (e.backend == Backend::Cuda) return;
    }
    Activity a;
    a.kind = ActivityKind::Kernel;
    a.name = *e.kernelId;
    a.startNs = e.startNs - originNs;
    a.endNs = e.endNs - originNs;
    a.stream = e.stream;
    a.node = e.depth == 0 ? int64_t(e.node.index) : -1;  // nested ids belong to subgraphs
    a.depth = e.depth;
    a.iteration = iteration;
    if (e.depth > 0) a.name += " (" + *e.nodeName + ")";
    m_trace.activities.push_back(std::move(a));
}

namespace {

// Symbol values from the feeds actually given: the cost model sizes with them.
DimBindings bindingsFrom(const Executor& exec, const std::vector<RtTensor>& feeds) {
    DimBindings bindings;
    for (size_t i = 0; i < feeds.size() && i < exec.feeds().size(); ++i) {
        const auto& dims = exec.graph().value(exec.feeds()[i]).type.shape.dims();
        for (size_t d = 0; d < dims.size() && d < feeds[i].dims.size(); ++d)
            if (!dims[d].isKnown() && !dims[d].symbol().empty()) bindings[dims[d].symbol()] = feeds[i].dims[d];
    }
    return bindings;
}

}  // namespace

void addPlanNodes(const Executor& exec, const std::vector<RtTensor>& feeds, Trace& trace) {
    const Graph& graph = exec.graph();
    const DimBindings bindings = bindingsFrom(exec, feeds);
    for (const PlanStep& step : exec.plan().steps) {
        const Node& n = graph.node(step.node);
        TraceNode t;
        t.id = step.node.index;
        t.name = n.name;
        t.opType = n.domain.empty() ? n.opType : n.domain + "::" + n.opType;
        t.kernelId = step.kernelId;
        for (NodeId o : n.origins)
            if (o.index < graph.nodeArenaSize()) t.origins.push_back(graph.node(o).name);
        if (t.origins.empty()) t.origins.push_back(n.name);
        const NodeCost cost = estimateNodeCost(graph, n, bindings);
        t.flops = cost.flops;
        t.bytes = cost.bytes;
        trace.nodes.push_back(std::move(t));
    }
}

NodeStatsCollector nodeTimes(const Trace& trace) {
    NodeStatsCollector times;
    for (const Activity& a : trace.activities) {
        if (a.kind != ActivityKind::Kernel) continue;
        const TraceNode* n = a.depth == 0 && a.node >= 0 ? trace.findNode(a.node) : nullptr;
        times.add(n ? NodeId{uint32_t(a.node)} : NodeId{}, n ? n->name : a.name, n ? n->opType : std::string(),
                  n ? n->kernelId : a.name, a.depth, a.durationNs(), a.iteration);
    }
    return times;
}

}  // namespace fsc
