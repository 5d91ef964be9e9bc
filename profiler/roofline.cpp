#include "profiler/roofline.h"

#include <algorithm>
#include <cmath>

namespace fsc {

double Roofline::attainable(double intensity) const {
    return hasRoofs ? std::min(peakFlopsPerSecond, intensity * peakBytesPerSecond) : 0.0;
}

Roofline buildRoofline(const Trace& trace, const std::vector<NodeStat>& stats) {
    Roofline r;
    for (const NodeStat& s : stats)
        if (const TraceNode* n = trace.findNode(s.node); n && s.flopsPerSecond > 0 && s.arithmeticIntensity > 0) r.points.push_back({&s, n});
    r.hasRoofs = trace.peakFlopsPerSecond > 0 && trace.peakBytesPerSecond > 0;
    r.peakFlopsPerSecond = trace.peakFlopsPerSecond;
    r.peakBytesPerSecond = trace.peakBytesPerSecond;
    if (r.points.empty() && !r.hasRoofs) return r;
    double lx = 1e300, hx = 0, ly = 1e300, hy = 0;
    for (const RooflinePoint& p : r.points) {
        lx = std::min(lx, p.stat->arithmeticIntensity), hx = std::max(hx, p.stat->arithmeticIntensity);
        ly = std::min(ly, p.stat->flopsPerSecond), hy = std::max(hy, p.stat->flopsPerSecond);
    }
    if (r.hasRoofs) {  // the ridge point and the compute roof in view
        r.ridge = r.peakFlopsPerSecond / r.peakBytesPerSecond;
        lx = std::min(lx, r.ridge / 10), hx = std::max(hx, r.ridge * 10);
        hy = std::max(hy, r.peakFlopsPerSecond * 1.5);
        ly = std::min(ly, r.peakBytesPerSecond * lx);
    }
    r.log10MinX = std::floor(std::log10(lx)), r.log10MaxX = std::ceil(std::log10(hx));
    r.log10MinY = std::floor(std::log10(ly)), r.log10MaxY = std::ceil(std::log10(hy));
    if (r.log10MaxX <= r.log10MinX) r.log10MaxX = r.log10MinX + 1;
    if (r.log10MaxY <= r.log10MinY) r.log10MaxY = r.log10MinY + 1;
    return r;
}

}  // namespace fsc
