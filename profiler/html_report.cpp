#include "profiler/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "profiler/report_charts.h"
#include "profiler/xml_escape.h"

namespace fsc {
namespace {


const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 24px; color: #202024; max-width: 1200px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.sub { color: #666; margin-bottom: 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 10px 14px; min-width: 140px; }
.card b { display: block; font-size: 20px; }
table { border-collapse: collapse; font-size: 13px; margin-top: 8px; }
th, td { border-bottom: 1px solid #eee; padding: 4px 10px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.graph { overflow: auto; max-height: 720px; border: 1px solid #ddd; }
.note { color: #666; font-size: 13px; }
)css";

}  // namespace

std::string htmlReport(const Trace& t, const ReportExtras& extras) {
    const std::vector<NodeStat> stats = computeNodeStats(t);
    const double iterations = std::max(1, t.iterations);
    std::ostringstream s;
    s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Fusescope report: " << escapeXml(t.model)
      << "</title><style>" << kStyle << "</style></head><body>\n";
    s << "<h1>" << escapeXml(t.model) << "</h1><div class=\"sub\">pipeline " << escapeXml(t.pipeline) << " &middot; " << escapeXml(t.backend)
      << " backend on " << escapeXml(t.device) << " &middot; " << escapeXml(t.startedAt) << "</div>\n";
    s << "<div class=\"cards\">";
    auto card = [&](const std::string& title, const std::string& value) {
        s << "<div class=\"card\">" << escapeXml(title) << "<b>" << escapeXml(value) << "</b></div>";
    };
    card("median latency", fixedText(t.unprofiledMs) + " ms");
    card("profiled", fixedText(t.profiledMs) + " ms");
    card("profiler overhead", t.overheadText().substr(std::string("overhead ").size()));
    card("plan nodes", std::to_string(t.nodes.size()));
    card("iterations", std::to_string(t.iterations) + " (+" + std::to_string(t.warmup) + " warm-up)");
    card("dropped records", std::to_string(t.droppedRecords));
    s << "</div>\n";
    if (!t.timingWarning.empty()) s << "<p class=\"note\"><b>Warning: " << escapeXml(t.timingWarning) << ".</b></p>\n";
    s << "<p class=\"note\">Latency is the median per iteration of the same plan run without the profiler; the "
         "overhead compares it with the profiled runs, alternated in one process.</p>\n";

    s << "<h2>Pipeline</h2><table><tr><th>pass</th><th>nodes before</th><th>after</th><th>ms</th><th>changes</th>"
         "<th>rejected</th></tr>";
    for (const PassSummary& p : t.passes)
        s << "<tr><td>" << escapeXml(p.name) << "</td><td class=\"n\">" << p.nodesBefore << "</td><td class=\"n\">" << p.nodesAfter
          << "</td><td class=\"n\">" << fixedText(p.milliseconds, 2) << "</td><td class=\"n\">" << p.changes << "</td><td class=\"n\">"
          << p.rejections << "</td></tr>";
    s << "</table>\n";

    if (!extras.graphSvg.empty())
        s << "<h2>Graph, coloured by share of run time</h2><div class=\"graph\">" << extras.graphSvg << "</div>\n";

    s << "<h2>Top nodes</h2><table><tr><th>node</th><th>op</th><th>kernel</th><th>ms / iteration (median)</th><th>p90</th><th>share</th>"
         "<th>GFLOP/s</th><th>GB/s</th><th>made from</th></tr>";
    for (size_t i = 0; i < stats.size() && i < 25; ++i) {
        const NodeStat& st = stats[i];
        const TraceNode* n = t.findNode(st.node);
        std::string origins;
        if (n)
            for (const std::string& o : n->origins) origins += (origins.empty() ? "" : ", ") + o;
        s << "<tr><td>" << escapeXml(n ? n->name : "?") << "</td><td>" << escapeXml(n ? n->opType : "") << "</td><td>"
          << escapeXml(n ? n->kernelId : "") << "</td><td class=\"n\">" << fixedText(double(st.medianNs) / 1e6)
          << "</td><td class=\"n\">" << fixedText(double(st.p90Ns) / 1e6) << "</td><td class=\"n\">" << fixedText(100 * st.share, 1) << "%</td><td class=\"n\">" << fixedText(st.flopsPerSecond / 1e9, 1)
          << "</td><td class=\"n\">" << fixedText(st.bytesPerSecond / 1e9, 2) << "</td><td>" << escapeXml(origins) << "</td></tr>";
    }
    s << "</table>\n";

    std::map<std::string, std::pair<int64_t, int64_t>> kernels;  // name -> (total ns, launches)
    for (const Activity& a : t.activities)
        if (a.kind != ActivityKind::Range) kernels[a.name].first += a.durationNs(), kernels[a.name].second += 1;
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> byTime(kernels.begin(), kernels.end());
    std::sort(byTime.begin(), byTime.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    s << "<h2>Top kernels</h2><table><tr><th>kernel</th><th>ms / iteration</th><th>launches / iteration</th></tr>";
    for (size_t i = 0; i < byTime.size() && i < 15; ++i)
        s << "<tr><td>" << escapeXml(byTime[i].first) << "</td><td class=\"n\">" << fixedText(double(byTime[i].second.first) / 1e6 / iterations)
          << "</td><td class=\"n\">" << fixedText(double(byTime[i].second.second) / iterations, 1) << "</td></tr>";
    s << "</table>\n";

    s << "<h2>Graph breaks</h2>";
    if (!extras.breaksNote.empty()) s << "<p class=\"note\">" << escapeXml(extras.breaksNote) << "</p>";
    if (extras.breaks.empty()) {
        s << "<p>None: the graph runs in one region.</p>";
    } else {
        s << "<table><tr><th>break</th><th>node</th><th>reason</th><th>measured ms / iteration</th></tr>";
        for (const ReportBreak& b : extras.breaks)
            s << "<tr><td>" << escapeXml(b.kind) << "</td><td>" << escapeXml(b.node) << "</td><td>" << escapeXml(b.reason) << "</td><td class=\"n\">"
              << (b.measuredMs >= 0 ? fixedText(b.measuredMs) : std::string("&ndash;")) << "</td></tr>";
        s << "</table>";
    }
    s << "\n<h2>Memory</h2>" << memoryChartSvg(t) << "\n";
    s << "<h2>Roofline</h2><p class=\"note\">Each node's achieved FLOP/s against its arithmetic intensity (cost-model "
         "estimates over measured time); dot area follows its share of the run. Roofs: "
      << escapeXml(t.peaksSource.empty() ? std::string("not known") : t.peaksSource) << ".</p>"
      << rooflineSvg(t, stats) << "\n";
    s << "<h2>Software</h2><table>";
    for (const auto& [name, version] : extras.software)
        s << "<tr><td>" << escapeXml(name) << "</td><td>" << escapeXml(version) << "</td></tr>";
    s << "<tr><td>device</td><td>" << escapeXml(t.device) << "</td></tr></table>\n</body></html>\n";
    return s.str();
}

Status writeHtmlReport(const Trace& trace, const ReportExtras& extras, const std::string& path) {
    std::ofstream out(path, std::ios::binary);
    if (!out || !(out << htmlReport(trace, extras))) return Status(ErrorCode::Io, path + ": cannot write the report");
    return Status::ok();
}

}  // namespace fsc
