#pragma once
// A self-contained HTML report of a profiled run (no network needed to view it: styles and
// pictures are inline): model and device, latency and the profiler's own overhead, the
// pipeline's passes, the graph with its heat overlay, top nodes and kernels, graph breaks
// with what they cost, the memory timeline and a roofline of the nodes.
#include <string>
#include <vector>

#include "core/status.h"
#include "profiler/trace.h"

namespace fsc {

struct ReportBreak {
    std::string kind;    // "unsupported-op", "device-to-host-copy", ...
    std::string node;
    std::string reason;
    double measuredMs = -1;  // per iteration, where the run measured it; -1: not measured
};

struct ReportExtras {
    std::string graphSvg;  // the graph with the heat overlay (made by the app)
    std::vector<ReportBreak> breaks;
    std::string breaksNote;  // how to read the breaks for this backend
    std::vector<std::pair<std::string, std::string>> software;  // name -> version
};

std::string htmlReport(const Trace& trace, const ReportExtras& extras);
Status writeHtmlReport(const Trace& trace, const ReportExtras& extras, const std::string& path);

}  // namespace fsc
