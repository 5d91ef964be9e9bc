#pragma once
// Charts as inline SVG (no scripts, no network to view): the profile report's memory
// timeline and roofline, and the plain bar and step charts the walkthrough draws its
// figures with. Each returns one <svg> element, or a short <p> note when there is no data.
#include <string>
#include <utility>
#include <vector>

#include "core/units.h"
#include "profiler/trace.h"

namespace fsc {

// Numbers as the report and its charts print them: fixed decimals (bytes: core/units.h).
std::string fixedText(double v, int decimals = 3);

// Planned and measured bytes over the first iteration, the planned peak marked.
std::string memoryChartSvg(const Trace& trace);
// Achieved FLOP/s against FLOPs per byte (log scales), a dot per node, under the roofs.
std::string rooflineSvg(const Trace& trace, const std::vector<NodeStat>& stats);

struct ChartBar {
    std::string label;
    double value = 0;
};
// Horizontal bars, one per row, labelled on the left and valued on the right in `unit`.
std::string barChartSvg(const std::vector<ChartBar>& bars, const std::string& unit);
// The memory plan as buffers over time: each planned buffer a rectangle from the step that
// writes it to the last that reads it (x), at its offset in the arena (y), `steps` steps and
// an arena of `arenaBytes`; tensors that never live at once share rows.
std::string arenaLayoutSvg(const std::vector<PlannedBuffer>& buffers, int64_t steps, int64_t arenaBytes);

// Vertical bars side by side with no gaps (a histogram or a per-step curve): a y axis in
// `unit` with ticks at 0, half and the largest value, `xLabel` under the bars and, when given,
// `edges` (values.size() + 1 labels, the bars' boundaries: a histogram's bin edges) as x ticks,
// every one that has room.
std::string columnChartSvg(const std::vector<double>& values, const std::string& xLabel, const std::string& unit,
                           const std::vector<std::string>& edges = {});

}  // namespace fsc
