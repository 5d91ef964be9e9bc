#include "compiler/parallel/simulated_timeline.h"

#include "core/parse_int.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/cost_model.h"
#include "compiler/runtime/fused_domain.h"

namespace fsc {
namespace {

int64_t intAttribute(const Node& n, const char* name, int64_t fallback) {
    for (const Attribute& a : n.attributes)
        if (a.name == name) return a.i;
    return fallback;
}

// Bytes of the constants each device's nodes read (replicated nodes count on every device).
std::vector<double> weightsPerDevice(const Graph& g, int devices) {
    std::vector<std::set<uint32_t>> seen(static_cast<size_t>(devices));
    std::vector<double> bytes(size_t(devices), 0.0);
    for (NodeId id : g.order()) {
        const Node& n = g.node(id);
        const int d = deviceOfNode(n);
        for (ValueId in : n.inputs) {
            if (!in.valid() || !g.value(in).initializer) continue;
            const Tensor& t = *g.value(in).initializer;
            for (int k = 0; k < devices; ++k)
                if ((d < 0 || d == k) && seen[size_t(k)].insert(in.index).second)
                    bytes[size_t(k)] += double(t.numElements()) * dtypeBits(t.dtype()) / 8;
        }
    }
    return bytes;
}

}  // namespace

double simulatedNodeSeconds(const Graph& g, const Node& n, const SimulatedDevice& device) {
    const NodeCost c = estimateNodeCost(g, n);
    return std::max(c.flops / device.flopsPerSecond, c.bytes / device.bytesPerSecond);
}

int deviceOfNode(const Node& node) {
    for (const char* prefix : {"device", "stage"}) {
        const std::string p = prefix;
        if (node.scope.rfind(p, 0) != 0) continue;
        size_t end = p.size();
        while (end < node.scope.size() && std::isdigit(static_cast<unsigned char>(node.scope[end]))) ++end;
        if (end > p.size() && (end == node.scope.size() || node.scope[end] == '/')) {
            const auto device = parseInt64(std::string_view(node.scope).substr(p.size(), end - p.size()));
            return device && *device < 4096 ? int(*device) : -1;
        }
    }
    return -1;
}

SimulatedRun simulateTensorParallel(const Graph& g, int devices, const Interconnect& link, const SimulatedDevice& device) {
    SimulatedRun run;
    run.devices = devices;
    std::vector<double> clock(size_t(devices), 0.0);
    double busy = 0;
    for (NodeId id : g.order()) {
        const Node& n = g.node(id);
        if (n.domain == kFusescopeDomain && (n.opType == "AllReduce" || n.opType == "AllGather")) {
            const double start = *std::max_element(clock.begin(), clock.end());
            const double bytes = double(intAttribute(n, "bytes", 0));
            const bool reduce = n.opType == "AllReduce";
            const double t = reduce ? allReduceSeconds(bytes, devices, link) : allGatherSeconds(bytes, devices, link);
            for (int d = 0; d < devices; ++d) {
                if (start > clock[size_t(d)]) run.events.push_back({d, "wait", "bubble", -1, clock[size_t(d)], start - clock[size_t(d)]});
                run.events.push_back({d, n.name, reduce ? "all-reduce" : "all-gather", -1, start, t});
                clock[size_t(d)] = start + t;
            }
            run.communicationSeconds += t;
            run.communicationBytes += bytes;
            continue;
        }
        const double t = simulatedNodeSeconds(g, n, device);
        const int d = deviceOfNode(n);
        run.singleDeviceSeconds += t;
        for (int k = 0; k < devices; ++k) {
            if (d >= 0 && d != k) continue;
            run.events.push_back({k, n.name, "compute", -1, clock[size_t(k)], t});
            clock[size_t(k)] += t;
            busy += t;
        }
    }
    // A replicated node runs on every device, but only once on a single device.
    run.totalSeconds = *std::max_element(clock.begin(), clock.end());
    double idle = 0;
    for (const SimulatedEvent& e : run.events) idle += e.kind == "bubble" ? e.duration : 0;
    run.bubbleFraction = run.totalSeconds > 0 ? idle / (run.totalSeconds * devices) : 0;
    run.weightBytes = weightsPerDevice(g, devices);
    return run;
}

SimulatedRun simulatePipelineParallel(const Graph& g, int stages, int microbatches, const Interconnect& link,
                                      const SimulatedDevice& device) {
    SimulatedRun run;
    run.devices = stages;
    std::vector<double> stageSeconds(size_t(stages), 0.0), sendBytes(size_t(stages), 0.0);
    for (NodeId id : g.order()) {
        const Node& n = g.node(id);
        const int s = std::max(0, std::min(stages - 1, deviceOfNode(n)));
        if (n.domain == kFusescopeDomain && n.opType == "Send") {
            sendBytes[size_t(s)] += double(intAttribute(n, "bytes", 0));
            continue;
        }
        if (n.domain == kFusescopeDomain && n.opType == "Recv") continue;
        const double t = simulatedNodeSeconds(g, n, device);
        stageSeconds[size_t(s)] += t;
        run.singleDeviceSeconds += t;
    }
    // Micro-batch m enters stage s when stage s is free and its input has arrived.
    std::vector<double> free(size_t(stages), 0.0);
    std::vector<double> ready(size_t(microbatches), 0.0);
    for (int m = 0; m < microbatches; ++m)
        for (int s = 0; s < stages; ++s) {
            const double start = std::max(free[size_t(s)], ready[size_t(m)]);
            const double t = stageSeconds[size_t(s)] / microbatches;
            if (start > free[size_t(s)]) run.events.push_back({s, "idle", "bubble", m, free[size_t(s)], start - free[size_t(s)]});
            run.events.push_back({s, "stage " + std::to_string(s), "compute", m, start, t});
            free[size_t(s)] = start + t;
            ready[size_t(m)] = start + t;
            if (s + 1 < stages) {
                const double c = sendSeconds(sendBytes[size_t(s)] / microbatches, link);
                run.events.push_back({s, "send to stage " + std::to_string(s + 1), "send", m, ready[size_t(m)], c});
                ready[size_t(m)] += c;
                run.communicationBytes += sendBytes[size_t(s)] / microbatches;
                if (m == 0) run.communicationSeconds += c;
            }
        }
    run.totalSeconds = *std::max_element(free.begin(), free.end());
    double busy = 0;
    for (double t : stageSeconds) busy += t;
    run.bubbleFraction = run.totalSeconds > 0 ? 1.0 - busy / (run.totalSeconds * stages) : 0;
    run.weightBytes = weightsPerDevice(g, stages);
    return run;
}

}  // namespace fsc
