#pragma once
// The heat colours of the run overlay: pale yellow for little time through orange to dark
// red for the most (a sequential ramp that reads in both palettes and in greyscale prints).
#include <string>
#include <vector>

namespace fsc {

// `t` in [0, 1] (clamped) to 0xRRGGBB.
unsigned heatColor(double t);

// What the overlay measures. Time and share add up over a collapsed group; rates do not:
// a group shows its nodes' summed work over their summed time.
// RelativeError is no run's: numeric bisection's error per node against its reference, which
// a collapsed group shows as its largest (errors do not add up).
// TimeRatio is no run's either: N-way compare's time of one variant over the baseline's,
// per node, which a collapsed group also shows as its largest.
enum class HeatUnit { Share, Milliseconds, BytesPerSecond, FlopsPerSecond, RelativeError, TimeRatio };

// Whether a collapsed group shows its nodes' largest figure rather than their sum.
inline bool heatTakesLargest(HeatUnit unit) {
    return unit == HeatUnit::RelativeError || unit == HeatUnit::TimeRatio;
}

struct NodeHeat {
    HeatUnit unit = HeatUnit::Share;
    std::vector<double> values;  // by node index; for rates, the work (bytes or FLOPs)
    std::vector<double> seconds;  // rates only: the time the work took, by node index
    bool empty() const { return values.empty(); }
};

// "12.5%", "3.20 ms", "45.1 GB/s", "1.23 TFLOP/s"
std::string formatHeat(HeatUnit unit, double value);
const char* heatTitle(HeatUnit unit);  // "share of run time", ...

}  // namespace fsc
