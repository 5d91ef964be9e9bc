#pragma once
// The roofline's data: each node with both cost-model FLOPs and a measured time, at its
// arithmetic intensity (x) and achieved FLOP/s (y), the device's roofs, and log10 axis
// bounds (whole decades) holding all of them. The HTML report and the GUI draw from this.
#include <vector>

#include "profiler/trace.h"

namespace fsc {

struct RooflinePoint {
    const NodeStat* stat = nullptr;
    const TraceNode* node = nullptr;
};

struct Roofline {
    std::vector<RooflinePoint> points;
    bool hasRoofs = false;
    double peakFlopsPerSecond = 0, peakBytesPerSecond = 0;
    double ridge = 0;  // FLOPs per byte where the two roofs meet
    double log10MinX = 0, log10MaxX = 1, log10MinY = 0, log10MaxY = 1;
    // The attainable FLOP/s at `intensity` under the roofs.
    double attainable(double intensity) const;
};

// `stats` must outlive the result (points refer to them).
Roofline buildRoofline(const Trace& trace, const std::vector<NodeStat>& stats);

}  // namespace fsc
