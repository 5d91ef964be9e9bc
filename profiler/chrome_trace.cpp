#include "profiler/chrome_trace.h"

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

namespace fsc {
namespace {

using nlohmann::json;

constexpr int kHostPid = 1;    // the CPU: plan-node ranges, iterations, CPU kernels
constexpr int kDevicePid = 2;  // the GPU: one thread per stream
constexpr int kNodeTid = 1000, kIterationTid = 1001;

double us(int64_t ns) {
    return double(ns) / 1000.0;
}

json nodeArgs(const Trace& trace, int64_t node) {
    json args = json::object();
    if (node < 0) return args;
    args["node"] = node;
    if (const TraceNode* n = trace.findNode(node)) {
        args["node_name"] = n->name;
        args["op"] = n->opType;
        args["origins"] = n->origins;
        if (n->flops > 0) args["flops"] = n->flops;
        if (n->bytes > 0) args["bytes"] = n->bytes;
    }
    return args;
}

json meta(const char* what, int pid, int tid, const std::string& name) {
    json m = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}};
    if (tid >= 0) m["tid"] = tid;
    return m;
}

}  // namespace

std::string chromeTraceJson(const Trace& trace) {
    const bool gpu = trace.backend == "cuda";
    const int kernelPid = gpu ? kDevicePid : kHostPid;
    json events = json::array();
    events.push_back(meta("process_name", kHostPid, -1, "host (" + (gpu ? std::string("CPU") : trace.device) + ")"));
    if (gpu) events.push_back(meta("process_name", kDevicePid, -1, trace.device));
    events.push_back(meta("thread_name", kHostPid, kNodeTid, "plan nodes"));
    events.push_back(meta("thread_name", kHostPid, kIterationTid, "iterations"));
    std::map<int, bool> streams;
    for (const Activity& a : trace.activities)
        if (a.kind != ActivityKind::Range) streams[a.stream] = true;
    for (const auto& [stream, _] : streams)
        events.push_back(meta("thread_name", kernelPid, stream, gpu ? "stream " + std::to_string(stream) : "executor"));

    // Iterations: one range per timed iteration, from its first to its last activity.
    std::map<int, std::pair<int64_t, int64_t>> iterations;
    for (const Activity& a : trace.activities) {
        auto [it, added] = iterations.emplace(a.iteration, std::pair{a.startNs, a.endNs});
        if (!added) it->second = {std::min(it->second.first, a.startNs), std::max(it->second.second, a.endNs)};
    }
    for (const auto& [i, span] : iterations)
        events.push_back({{"name", "iteration " + std::to_string(i)}, {"cat", "iteration"}, {"ph", "X"}, {"pid", kHostPid},
                          {"tid", kIterationTid}, {"ts", us(span.first)}, {"dur", us(span.second - span.first)}});

    int64_t flow = 0;
    for (const Activity& a : trace.activities) {
        json args = nodeArgs(trace, a.node);
        args["iteration"] = a.iteration;
        if (a.depth) args["depth"] = a.depth;
        if (a.bytes) args["bytes"] = a.bytes;
        if (a.kind == ActivityKind::Kernel && gpu) {
            args["grid"] = {a.grid[0], a.grid[1], a.grid[2]};
            args["block"] = {a.block[0], a.block[1], a.block[2]};
            args["registers"] = a.registers;
            args["shared_bytes"] = a.sharedBytes;
        }
        const int pid = a.kind == ActivityKind::Range ? kHostPid : kernelPid;
        const int tid = a.kind == ActivityKind::Range ? kNodeTid : a.stream;
        events.push_back({{"name", a.name}, {"cat", activityKindName(a.kind)}, {"ph", "X"}, {"pid", pid}, {"tid", tid},
                          {"ts", us(a.startNs)}, {"dur", us(a.durationNs())}, {"args", args}});
        if (a.kind != ActivityKind::Kernel || a.node < 0 || a.depth != 0) continue;
        // The plan node's range, and a flow arrow from it to its kernel.
        const TraceNode* n = trace.findNode(a.node);
        const std::string label = n ? n->name : "node " + std::to_string(a.node);
        events.push_back({{"name", label}, {"cat", "node"}, {"ph", "X"}, {"pid", kHostPid}, {"tid", kNodeTid},
                          {"ts", us(a.startNs)}, {"dur", us(a.durationNs())}, {"args", nodeArgs(trace, a.node)}});
        ++flow;
        events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", flow}, {"pid", kHostPid},
                          {"tid", kNodeTid}, {"ts", us(a.startNs)}});
        events.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"}, {"id", flow}, {"pid", kernelPid},
                          {"tid", a.stream}, {"ts", us(a.startNs)}});
    }
    for (const auto& [samples, track] : {std::pair{&trace.plannedMemory, "planned memory (bytes)"},
                                         std::pair{&trace.measuredMemory, "measured memory (bytes)"}})
        for (const MemorySample& m : *samples)
            events.push_back({{"name", track}, {"ph", "C"}, {"pid", gpu ? kDevicePid : kHostPid}, {"ts", us(m.timeNs)},
                              {"args", {{"bytes", m.bytes}}}});

    json root = {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
    root["metadata"] = {{"model", trace.model},        {"pipeline", trace.pipeline}, {"backend", trace.backend},
                        {"device", trace.device},      {"iterations", trace.iterations},
                        {"dropped_records", trace.droppedRecords}, {"started_at", trace.startedAt}};
    if (trace.overheadPercent() >= -100) root["metadata"]["profiler_overhead_percent"] = trace.overheadPercent();
    return root.dump();
}

Status writeChromeTrace(const Trace& trace, const std::string& path) {
    std::ofstream out(path, std::ios::binary);
    if (!out) return Status(ErrorCode::Io, path + ": cannot write the trace");
    out << chromeTraceJson(trace);
    return out ? Status::ok() : Status(ErrorCode::Io, path + ": cannot write the trace");
}

}  // namespace fsc
