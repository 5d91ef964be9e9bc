#include "views/timeline_model.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace fsc {

std::vector<TimelineLane> buildTimelineLanes(const Trace& trace) {
    std::map<std::pair<int, int>, std::vector<int>> kernels;  // (stream, depth)
    std::map<int, std::vector<int>> copies;
    for (size_t i = 0; i < trace.activities.size(); ++i) {
        const Activity& a = trace.activities[i];
        if (a.kind == ActivityKind::Kernel) kernels[{a.stream, a.depth}].push_back(int(i));
        else if (a.kind != ActivityKind::Range) copies[a.stream].push_back(int(i));
    }
    const bool gpu = trace.backend == "cuda";
    const bool simulated = trace.backend == "simulated";  // a lane per modelled device
    auto byStart = [&](std::vector<int>& list) {
        std::stable_sort(list.begin(), list.end(),
                         [&](int a, int b) { return trace.activities[size_t(a)].startNs < trace.activities[size_t(b)].startNs; });
    };
    std::vector<TimelineLane> lanes;
    for (auto& [key, list] : kernels) {
        byStart(list);
        std::string title = simulated ? "device " + std::to_string(key.first) + " (simulated)"
                            : gpu     ? "stream " + std::to_string(key.first)
                                      : std::string("CPU executor");
        if (key.second > 0) title += " · in control flow, depth " + std::to_string(key.second);
        lanes.push_back({std::move(title), std::move(list)});
    }
    for (auto& [stream, list] : copies) {
        byStart(list);
        lanes.push_back({simulated ? "device " + std::to_string(stream) + " communication (simulated)"
                                   : "copies, stream " + std::to_string(stream),
                         std::move(list)});
    }
    // Host ranges (NVTX) first, one lane per nesting level: a range goes on the first level
    // where it does not overlap the last one placed there.
    std::vector<int> ranges;
    for (size_t i = 0; i < trace.activities.size(); ++i)
        if (trace.activities[i].kind == ActivityKind::Range) ranges.push_back(int(i));
    byStart(ranges);
    std::vector<TimelineLane> levels;
    for (int i : ranges) {
        const Activity& a = trace.activities[size_t(i)];
        auto level = std::find_if(levels.begin(), levels.end(), [&](const TimelineLane& l) {
            return trace.activities[size_t(l.activities.back())].endNs <= a.startNs;
        });
        if (level == levels.end()) {
            // Only the CUDA backend's ranges are NVTX's; the CPU executor's are its iterations.
            const std::string first = gpu ? "host ranges (NVTX)" : "iterations (host clock)";
            levels.push_back({levels.empty() ? first : "host ranges, level " + std::to_string(levels.size() + 1), {}});
            level = levels.end() - 1;
        }
        level->activities.push_back(i);
    }
    lanes.insert(lanes.begin(), std::make_move_iterator(levels.begin()), std::make_move_iterator(levels.end()));
    return lanes;
}

std::pair<int64_t, int64_t> wholeRunSpan(const Trace& trace) {
    if (trace.activities.empty()) return {0, 1};
    int64_t begin = trace.activities.front().startNs, end = begin + 1;
    for (const Activity& a : trace.activities) begin = std::min(begin, a.startNs), end = std::max(end, a.endNs);
    return {begin, end};
}

std::pair<int64_t, int64_t> oneIterationSpan(const Trace& trace) {
    std::map<int, std::pair<int64_t, int64_t>> spans;
    for (const Activity& a : trace.activities) {
        auto [at, added] = spans.try_emplace(a.iteration, a.startNs, a.endNs);
        if (!added) at->second = {std::min(at->second.first, a.startNs), std::max(at->second.second, a.endNs)};
    }
    if (spans.size() <= 1) return wholeRunSpan(trace);
    std::vector<std::pair<int64_t, int64_t>> byLength;
    for (const auto& [iteration, span] : spans) byLength.push_back(span);
    std::sort(byLength.begin(), byLength.end(),
              [](const auto& a, const auto& b) { return a.second - a.first < b.second - b.first; });
    return byLength[(byLength.size() - 1) / 2];
}

void TimeScale::zoomAt(double x, double factor) {
    const double t = toNs(x);
    nsPerPixel = std::clamp(nsPerPixel / factor, 1e-3, 1e12);
    startNs = t - x * nsPerPixel;
}

TimeScale TimeScale::fit(int64_t beginNs, int64_t endNs, double width) {
    TimeScale s;
    const double span = std::max<double>(1, double(endNs - beginNs));
    s.nsPerPixel = span * 1.02 / std::max(1.0, width);
    s.startNs = double(beginNs) - span * 0.01;
    return s;
}

std::vector<TimelineBlock> visibleBlocks(const Trace& trace, const TimelineLane& lane, const TimeScale& scale, double width) {
    std::vector<TimelineBlock> out;
    const auto& acts = trace.activities;
    const double t0 = scale.toNs(0), t1 = scale.toNs(width);
    // The first activity ending after t0 (ends are sorted too: a lane does not overlap).
    auto it = std::lower_bound(lane.activities.begin(), lane.activities.end(), t0,
                               [&](int i, double t) { return double(acts[size_t(i)].endNs) < t; });
    while (it != lane.activities.end()) {
        const Activity& a = acts[size_t(*it)];
        if (double(a.startNs) > t1) break;
        TimelineBlock b{std::max(0.0, scale.toX(double(a.startNs))), std::min(width, scale.toX(double(a.endNs))), *it, 1};
        if (b.x1 - b.x0 >= 1.0) {
            out.push_back(b);
            ++it;
            continue;
        }
        // Less than a pixel: take everything that starts before the next pixel boundary.
        const double boundary = scale.toNs(std::floor(b.x0) + 1.0);
        auto next = std::lower_bound(it + 1, lane.activities.end(), boundary,
                                     [&](int i, double t) { return double(acts[size_t(i)].startNs) < t; });
        b.count = int(next - it);
        b.x1 = std::max(b.x1, b.x0 + 1.0);
        if (b.count > 1) b.x1 = std::min(width, std::max(b.x1, scale.toX(double(acts[size_t(*(next - 1))].endNs))));
        out.push_back(b);
        it = next;
    }
    return out;
}

RangeSummary summarizeRange(const Trace& trace, int64_t beginNs, int64_t endNs) {
    RangeSummary r;
    r.beginNs = std::min(beginNs, endNs);
    r.endNs = std::max(beginNs, endNs);
    std::map<int64_t, int64_t> byNode;
    for (const Activity& a : trace.activities) {
        if (a.kind == ActivityKind::Range || a.endNs <= r.beginNs || a.startNs >= r.endNs) continue;
        const int64_t clipped = std::min(a.endNs, r.endNs) - std::max(a.startNs, r.beginNs);
        ++r.activities;
        r.busyNs += clipped;
        if (a.node >= 0 && a.depth == 0) byNode[a.node] += clipped;
    }
    r.topNodes.assign(byNode.begin(), byNode.end());
    std::sort(r.topNodes.begin(), r.topNodes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (r.topNodes.size() > 5) r.topNodes.resize(5);
    return r;
}

int activityAt(const Trace& trace, const TimelineLane& lane, double ns, double toleranceNs) {
    const auto& acts = trace.activities;
    auto it = std::lower_bound(lane.activities.begin(), lane.activities.end(), ns - toleranceNs,
                               [&](int i, double t) { return double(acts[size_t(i)].endNs) < t; });
    if (it == lane.activities.end()) return -1;
    const Activity& a = acts[size_t(*it)];
    return double(a.startNs) - toleranceNs <= ns ? *it : -1;
}

}  // namespace fsc
