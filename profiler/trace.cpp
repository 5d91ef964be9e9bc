#include "profiler/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace fsc {

const char* activityKindName(ActivityKind kind) {
    switch (kind) {
        case ActivityKind::Kernel: return "kernel";
        case ActivityKind::Memcpy: return "memcpy";
        case ActivityKind::Memset: return "memset";
        case ActivityKind::Range: return "range";
    }
    return "?";
}

double Trace::overheadPercent() const {
    if (unprofiledMs <= 0 || profiledMs < 0) return -1;
    return 100.0 * (profiledMs - unprofiledMs) / unprofiledMs;
}

std::string Trace::overheadText() const {
    if (unprofiledMs <= 0 || profiledMs < 0) return "overhead not measured";
    // Disturbed runs hide any overhead: the warning says why, a percentage would mislead.
    if (!timingWarning.empty()) return "overhead not measurable: the timed runs were disturbed";
    const double overhead = overheadPercent();
    auto percent = [](double v) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.1f%%", v);
        return std::string(buffer);
    };
    const bool spreadKnown = unprofiledSpreadPercent >= 0;
    if (overhead >= 0 && (!spreadKnown || overhead > unprofiledSpreadPercent)) return "overhead " + percent(overhead);
    return "overhead within noise (measured " + percent(overhead) +
           (spreadKnown ? ", while unprofiled runs spread " + percent(unprofiledSpreadPercent) + ")"
                        : ": profiling cannot make a run faster)");
}

const TraceNode* Trace::findNode(int64_t id) const {
    for (const TraceNode& n : nodes)
        if (n.id == id) return &n;
    return nullptr;
}

namespace {

// The median and p90 of a node's per-iteration times; iterations it did not run in count 0.
void setPerIteration(NodeStat& s, const std::map<int, int64_t>& byIteration, int iterations) {
    std::vector<int64_t> ns;
    for (const auto& [iteration, total] : byIteration) ns.push_back(total);
    ns.resize(std::max<size_t>(ns.size(), size_t(std::max(1, iterations))), 0);
    std::sort(ns.begin(), ns.end());
    const size_t n = ns.size();
    s.medianNs = n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2;
    s.p90Ns = ns[std::min(n - 1, size_t(std::ceil(0.9 * double(n))) - 1)];
}

}  // namespace

std::vector<NodeStat> computeNodeStats(const Trace& trace) {
    std::map<int64_t, NodeStat> byNode;
    std::map<int64_t, std::map<int, int64_t>> byNodeIteration;
    // Nested launches (depth > 0) run inside their control-flow node's launch: its total
    // includes them, its self time does not.
    for (const Activity& a : trace.activities) {
        if (a.kind != ActivityKind::Kernel || a.node < 0) continue;
        if (a.depth == 0) {
            NodeStat& s = byNode[a.node];
            s.node = a.node;
            s.totalNs += a.durationNs();
            s.selfNs += a.durationNs();
            s.launches += 1;
            byNodeIteration[a.node][a.iteration] += a.durationNs();
        }
    }
    // Self time: subtract nested launches from the main-graph launch that encloses them
    // (found by binary search among that stream's main-graph launches, sorted by start).
    std::map<int, std::vector<const Activity*>> mainByStream;
    for (const Activity& a : trace.activities)
        if (a.kind == ActivityKind::Kernel && a.depth == 0 && a.node >= 0) mainByStream[a.stream].push_back(&a);
    for (auto& [stream, list] : mainByStream)
        std::sort(list.begin(), list.end(), [](const Activity* x, const Activity* y) { return x->startNs < y->startNs; });
    for (const Activity& a : trace.activities) {
        // Depth 1 only: deeper launches are already inside a depth-1 one.
        if (a.kind != ActivityKind::Kernel || a.depth != 1) continue;
        auto it = mainByStream.find(a.stream);
        if (it == mainByStream.end()) continue;
        const auto& list = it->second;
        auto after = std::upper_bound(list.begin(), list.end(), a.startNs,
                                      [](int64_t t, const Activity* o) { return t < o->startNs; });
        if (after == list.begin()) continue;
        const Activity* o = *(after - 1);
        if (o->endNs >= a.endNs) byNode[o->node].selfNs -= a.durationNs();
    }
    int64_t mediansTotal = 0;
    for (auto& [id, s] : byNode) {
        setPerIteration(s, byNodeIteration[id], trace.iterations);
        mediansTotal += s.medianNs;
    }
    std::vector<NodeStat> out;
    for (auto& [id, s] : byNode) {
        s.selfNs = std::max<int64_t>(0, s.selfNs);
        s.share = mediansTotal > 0 ? double(s.medianNs) / double(mediansTotal) : 0;
        if (const TraceNode* n = trace.findNode(id); n && s.medianNs > 0) {
            const double seconds = double(s.medianNs) / 1e9;  // per iteration
            s.flopsPerSecond = n->flops / seconds;
            s.bytesPerSecond = n->bytes / seconds;
            s.arithmeticIntensity = n->bytes > 0 ? n->flops / n->bytes : 0;
        }
        out.push_back(s);
    }
    std::stable_sort(out.begin(), out.end(), [](const NodeStat& a, const NodeStat& b) { return a.medianNs > b.medianNs; });
    return out;
}

}  // namespace fsc
