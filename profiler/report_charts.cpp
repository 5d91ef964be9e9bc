#include "profiler/report_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <tuple>

#include "profiler/roofline.h"
#include "core/units.h"
#include "profiler/xml_escape.h"

namespace fsc {

std::string fixedText(double v, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

namespace {


std::string valueText(double v, const std::string& unit) {
    if (unit == "bytes") return bytesText(v);
    const int decimals = v == std::floor(v) || std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 1 ? 2 : 3;  // 15 runs, not 15.00
    return fixedText(v, decimals) + (unit.empty() ? "" : " " + unit);
}

}  // namespace

// A step plot of bytes over time, planned and measured, with the planned peak marked.
std::string memoryChartSvg(const Trace& t) {
    if (t.plannedMemory.empty() && t.measuredMemory.empty()) return "<p class=\"note\">No memory timeline recorded.</p>";
    int64_t end = 1, peak = 1;
    for (const auto* list : {&t.plannedMemory, &t.measuredMemory})
        for (const MemorySample& m : *list) end = std::max(end, m.timeNs), peak = std::max(peak, m.bytes);
    for (const Activity& a : t.activities)
        if (a.iteration == 0) end = std::max(end, a.endNs);
    const double w = 900, h = 220, left = 70, bottom = 24;
    auto x = [&](int64_t ns) { return left + (w - left - 10) * double(ns) / double(end); };
    auto y = [&](int64_t b) { return h - bottom - (h - bottom - 10) * double(b) / double(peak); };
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" font-size=\"11\">";
    s << "<line x1=\"" << left << "\" y1=\"" << h - bottom << "\" x2=\"" << w - 10 << "\" y2=\"" << h - bottom << "\" stroke=\"#999\"/>";
    s << "<text x=\"4\" y=\"14\">" << bytesText(double(peak)) << "</text><text x=\"4\" y=\"" << h - bottom << "\">0</text>";
    s << "<text x=\"" << w - 10 << "\" y=\"" << h - 6 << "\" text-anchor=\"end\">" << fixedText(double(end) / 1e6) << " ms</text>";
    for (const auto& [list, colour, name] : {std::tuple{&t.plannedMemory, "#3d8ee6", "planned"},
                                              std::tuple{&t.measuredMemory, "#d04010", "measured"}}) {
        if (list->empty()) continue;
        s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\" points=\"";
        int64_t last = 0;
        for (const MemorySample& m : *list) {
            s << x(m.timeNs) << ',' << y(last) << ' ' << x(m.timeNs) << ',' << y(m.bytes) << ' ';
            last = m.bytes;
        }
        s << x(end) << ',' << y(last) << "\"><title>" << name << "</title></polyline>";
    }
    int64_t plannedPeak = 0, at = 0;
    for (const MemorySample& m : t.plannedMemory)
        if (m.bytes > plannedPeak) plannedPeak = m.bytes, at = m.timeNs;
    if (plannedPeak > 0)
        s << "<circle cx=\"" << x(at) << "\" cy=\"" << y(plannedPeak) << "\" r=\"4\" fill=\"#3d8ee6\"/><text x=\"" << x(at) + 6
          << "\" y=\"" << y(plannedPeak) + 4 << "\">planned peak " << bytesText(double(plannedPeak)) << "</text>";
    s << "<text x=\"" << left << "\" y=\"" << h - 6 << "\" fill=\"#3d8ee6\">planned (arena occupancy per step)</text>";
    s << "<text x=\"" << left + 260 << "\" y=\"" << h - 6 << "\" fill=\"#d04010\">measured (allocations)</text></svg>";
    return s.str();
}

// Achieved FLOP/s against FLOPs per byte, both log scales, one dot per node.
std::string rooflineSvg(const Trace& t, const std::vector<NodeStat>& stats) {
    const Roofline roof = buildRoofline(t, stats);
    if (roof.points.empty()) return "<p class=\"note\">No node has both a FLOP count and a measured time.</p>";
    const double lx = roof.log10MinX, hx = roof.log10MaxX, ly = roof.log10MinY, hy = roof.log10MaxY;
    const bool roofs = roof.hasRoofs;
    const double w = 600, h = 320, left = 60, bottom = 30;
    auto x = [&](double v) { return left + (w - left - 10) * (std::log10(v) - lx) / (hx - lx); };
    auto y = [&](double v) { return h - bottom - (h - bottom - 10) * (std::log10(v) - ly) / (hy - ly); };
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" font-size=\"11\">";
    s << "<rect x=\"" << left << "\" y=\"10\" width=\"" << w - left - 10 << "\" height=\"" << h - bottom - 10
      << "\" fill=\"none\" stroke=\"#999\"/>";
    for (double e = lx; e <= hx; ++e)
        s << "<text x=\"" << x(std::pow(10, e)) << "\" y=\"" << h - 14 << "\" text-anchor=\"middle\">1e" << int(e) << "</text>";
    for (double e = ly; e <= hy; ++e)
        s << "<text x=\"" << left - 4 << "\" y=\"" << y(std::pow(10, e)) + 4 << "\" text-anchor=\"end\">1e" << int(e) << "</text>";
    s << "<text x=\"" << w / 2 << "\" y=\"" << h - 2 << "\" text-anchor=\"middle\">FLOPs per byte (cost model)</text>";
    s << "<text x=\"12\" y=\"" << h / 2 << "\" transform=\"rotate(-90 12 " << h / 2 << ")\" text-anchor=\"middle\">achieved FLOP/s</text>";
    if (roofs) {
        const double ridge = t.peakFlopsPerSecond / t.peakBytesPerSecond;
        const double x0 = std::pow(10, lx), x1 = std::pow(10, hx);
        s << "<polyline fill=\"none\" stroke=\"#555\" stroke-width=\"1.5\" points=\"" << x(x0) << ',' << y(x0 * t.peakBytesPerSecond)
          << ' ' << x(ridge) << ',' << y(t.peakFlopsPerSecond) << ' ' << x(x1) << ',' << y(t.peakFlopsPerSecond) << "\"/>";
        s << "<text x=\"" << x(ridge) + 4 << "\" y=\"" << y(t.peakFlopsPerSecond) - 4 << "\">" << fixedText(t.peakFlopsPerSecond / 1e9, 0)
          << " GFLOP/s, " << bandwidthText(t.peakBytesPerSecond) << "</text>";
    }
    for (const auto& [st, n] : roof.points)
        s << "<circle cx=\"" << x(st->arithmeticIntensity) << "\" cy=\"" << y(st->flopsPerSecond) << "\" r=\""
          << 3 + 6 * std::sqrt(st->share) << "\" fill=\"#e31a1c\" fill-opacity=\"0.6\"><title>" << escapeXml(n->name) << " ("
          << escapeXml(n->opType) << "): " << fixedText(st->flopsPerSecond / 1e9, 1) << " GFLOP/s at " << fixedText(st->arithmeticIntensity, 1)
          << " FLOP/byte</title></circle>";
    s << "</svg>";
    return s.str();
}

std::string barChartSvg(const std::vector<ChartBar>& bars, const std::string& unit) {
    if (bars.empty()) return "<p class=\"note\">Nothing to chart.</p>";
    double top = 0;
    for (const ChartBar& b : bars) top = std::max(top, b.value);
    const double w = 640, row = 20, left = 220, right = 90;
    const double h = row * double(bars.size()) + 6;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" font-size=\"11\">";
    for (size_t i = 0; i < bars.size(); ++i) {
        const double y = 3 + row * double(i);
        const double len = top > 0 ? (w - left - right) * std::max(0.0, bars[i].value) / top : 0;
        std::string label = bars[i].label;
        if (label.size() > 36) label = label.substr(0, 35) + "\u2026";
        s << "<text x=\"" << left - 6 << "\" y=\"" << y + 13 << "\" text-anchor=\"end\">" << escapeXml(label) << "</text>";
        s << "<rect x=\"" << left << "\" y=\"" << y + 2 << "\" width=\"" << len << "\" height=\"" << row - 6
          << "\" fill=\"#3d8ee6\"><title>" << escapeXml(bars[i].label) << ": " << escapeXml(valueText(bars[i].value, unit))
          << "</title></rect>";
        s << "<text x=\"" << left + len + 4 << "\" y=\"" << y + 13 << "\">" << escapeXml(valueText(bars[i].value, unit)) << "</text>";
    }
    s << "</svg>";
    return s.str();
}

std::string arenaLayoutSvg(const std::vector<PlannedBuffer>& buffers, int64_t steps, int64_t arenaBytes) {
    if (buffers.empty() || steps <= 0 || arenaBytes <= 0) return "<p class=\"note\">Nothing to chart.</p>";
    const double w = 640, h = 220, left = 76, right = 10, top = 10, bottom = 36;
    const double plotW = w - left - right, plotH = h - top - bottom;
    auto x = [&](double step) { return left + plotW * step / double(steps); };
    auto y = [&](double offset) { return top + plotH - plotH * offset / double(arenaBytes); };
    static const char* colours[] = {"#3d8ee6", "#e69a3d", "#4fb06c", "#b05fc4", "#d9534f", "#5bc0be", "#c9b037", "#8a8fa3"};
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" font-size=\"11\">";
    for (size_t i = 0; i < buffers.size(); ++i) {
        const PlannedBuffer& b = buffers[i];
        const double x0 = x(double(b.firstStep)), x1 = x(double(b.lastStep + 1));
        const double y0 = y(double(b.offset + b.bytes)), y1 = y(double(b.offset));
        s << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << std::max(x1 - x0 - 0.5, 0.5) << "\" height=\""
          << std::max(y1 - y0 - 0.5, 0.5) << "\" fill=\"" << colours[i % std::size(colours)] << "\" fill-opacity=\"0.8\"><title>"
          << escapeXml(b.name) << ": " << escapeXml(bytesText(double(b.bytes))) << " at offset "
          << escapeXml(bytesText(double(b.offset))) << ", steps " << b.firstStep << " to " << b.lastStep << "</title></rect>";
    }
    s << "<line x1=\"" << left << "\" y1=\"" << top + plotH << "\" x2=\"" << w - right << "\" y2=\"" << top + plotH
      << "\" stroke=\"#999\"/><line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + plotH
      << "\" stroke=\"#999\"/>";
    for (double offset : {0.0, double(arenaBytes) / 2, double(arenaBytes)})
        s << "<text x=\"" << left - 6 << "\" y=\"" << y(offset) + 4 << "\" text-anchor=\"end\">" << escapeXml(bytesText(offset))
          << "</text>";
    for (int64_t step : {int64_t(0), steps / 2, steps - 1})
        s << "<text x=\"" << x(double(step) + 0.5) << "\" y=\"" << top + plotH + 14 << "\" text-anchor=\"middle\">" << step
          << "</text>";
    s << "<text x=\"" << left + plotW / 2 << "\" y=\"" << h - 6 << "\" text-anchor=\"middle\">schedule step (offset in the arena up the side)</text>";
    s << "</svg>";
    return s.str();
}

std::string columnChartSvg(const std::vector<double>& values, const std::string& xLabel, const std::string& unit,
                           const std::vector<std::string>& edges) {
    if (values.empty()) return "<p class=\"note\">Nothing to chart.</p>";
    double top = 0;
    for (double v : values) top = std::max(top, v);
    const bool ticksBelow = edges.size() == values.size() + 1;
    const double w = 640, left = 76, bottom = ticksBelow ? 36 : 22, plotTop = 10;
    const double h = 170 + bottom;
    const double width = (w - left - 10) / double(values.size());
    const double axisY = h - bottom;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" font-size=\"11\">";
    s << "<line x1=\"" << left << "\" y1=\"" << axisY << "\" x2=\"" << w - 10 << "\" y2=\"" << axisY << "\" stroke=\"#999\"/>";
    s << "<line x1=\"" << left << "\" y1=\"" << plotTop << "\" x2=\"" << left << "\" y2=\"" << axisY << "\" stroke=\"#999\"/>";
    // y ticks: 0, half and the largest value (a count's half rounded down to a whole number).
    const bool whole = std::all_of(values.begin(), values.end(), [](double v) { return v == std::floor(v); });
    std::vector<double> yTicks{0.0};
    if (top > 0) yTicks = {0.0, whole ? std::floor(top / 2) : top / 2, top};
    for (double tick : yTicks) {
        const double y = top > 0 ? axisY - (axisY - plotTop) * tick / top : axisY;
        s << "<line x1=\"" << left - 4 << "\" y1=\"" << y << "\" x2=\"" << left << "\" y2=\"" << y << "\" stroke=\"#999\"/>";
        s << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << escapeXml(valueText(tick, unit))
          << "</text>";
    }
    if (ticksBelow) {
        // Every `every`-th edge, about 80 px apart, and the last one.
        const size_t every = std::max<size_t>(1, size_t(std::ceil(80.0 / std::max(width, 1.0))));
        for (size_t i = 0; i < edges.size(); ++i) {
            const bool last = i + 1 == edges.size();
            if (i % every != 0 && !last) continue;
            if (!last && i > 0 && edges.size() - 1 - i < every / 2) continue;  // would crowd the last label
            const double x = left + width * double(i);
            s << "<line x1=\"" << x << "\" y1=\"" << axisY << "\" x2=\"" << x << "\" y2=\"" << axisY + 4 << "\" stroke=\"#999\"/>";
            const char* anchor = i == 0 ? "start" : last ? "end" : "middle";
            s << "<text x=\"" << x << "\" y=\"" << axisY + 15 << "\" text-anchor=\"" << anchor << "\">" << escapeXml(edges[i])
              << "</text>";
        }
    }
    s << "<text x=\"" << (left + w) / 2 << "\" y=\"" << h - 6 << "\" text-anchor=\"middle\">" << escapeXml(xLabel) << "</text>";
    for (size_t i = 0; i < values.size(); ++i) {
        const double barH = top > 0 ? (axisY - plotTop) * std::max(0.0, values[i]) / top : 0;
        s << "<rect x=\"" << left + width * double(i) << "\" y=\"" << axisY - barH << "\" width=\""
          << std::max(width - (width > 4 ? 1 : 0), 0.5) << "\" height=\"" << barH << "\" fill=\"#3d8ee6\"><title>" << i
          << ": " << escapeXml(valueText(values[i], unit)) << "</title></rect>";
    }
    s << "</svg>";
    return s.str();
}

}  // namespace fsc
