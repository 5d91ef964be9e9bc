#pragma once
// The timeline's maths, without Qt: lanes built from a trace (one per stream and nesting
// depth, plus copies), the time <-> pixel scale with zoom and pan, the activities a pixel
// range shows (merged so a repaint draws at most one block per pixel per lane, however many
// kernels there are), and the aggregates of a selected time range.
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/trace.h"

namespace fsc {

struct TimelineLane {
    std::string title;
    std::vector<int> activities;  // indices into the trace, sorted by start, not overlapping
};

// Host ranges by nesting level (NVTX on the CUDA backend, the iterations' own on the CPU),
// kernels by (stream, depth), then copies and memsets by stream.
std::vector<TimelineLane> buildTimelineLanes(const Trace& trace);

// Where the timeline opens: the span of one iteration, the one of median length (all of a
// run's iterations side by side leave every kernel under a pixel). [0, 1) for no activity.
std::pair<int64_t, int64_t> oneIterationSpan(const Trace& trace);
// The whole run, every iteration.
std::pair<int64_t, int64_t> wholeRunSpan(const Trace& trace);

struct TimeScale {
    double startNs = 0;      // time at x = 0 of the plot area
    double nsPerPixel = 1;

    double toX(double ns) const { return (ns - startNs) / nsPerPixel; }
    double toNs(double x) const { return startNs + x * nsPerPixel; }
    // Zooms by `factor` (> 1 magnifies) keeping the time under x where it is.
    void zoomAt(double x, double factor);
    void pan(double pixels) { startNs -= pixels * nsPerPixel; }
    static TimeScale fit(int64_t beginNs, int64_t endNs, double width);
};

// One drawn block: a single activity, or several merged into one pixel-wide run.
struct TimelineBlock {
    double x0 = 0, x1 = 0;  // pixels
    int first = -1;         // trace index of the first activity in it
    int count = 0;          // activities merged (1: a real block)
};

// The blocks of `lane` inside [0, width) pixels. Activities smaller than a pixel merge with
// their neighbours in the same pixel; cost O(blocks x log n).
std::vector<TimelineBlock> visibleBlocks(const Trace& trace, const TimelineLane& lane, const TimeScale& scale, double width);

// What a selected time range holds: activities that overlap it (clipped time), and the
// nodes taking most of it.
struct RangeSummary {
    int64_t beginNs = 0, endNs = 0;
    int64_t activities = 0;
    int64_t busyNs = 0;  // clipped to the range, summed over lanes
    std::vector<std::pair<int64_t, int64_t>> topNodes;  // (node, clipped ns), largest first, at most 5
};

RangeSummary summarizeRange(const Trace& trace, int64_t beginNs, int64_t endNs);

// The activity under time `ns` in `lane`, or -1.
int activityAt(const Trace& trace, const TimelineLane& lane, double ns, double toleranceNs);

}  // namespace fsc
