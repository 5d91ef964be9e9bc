#include "views/heat_scale.h"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/units.h"

namespace fsc {

unsigned heatColor(double t) {
    // Stops of ColorBrewer's YlOrRd, evenly spaced; linear between them.
    static constexpr unsigned kStops[] = {0xffffcc, 0xffeda0, 0xfed976, 0xfeb24c, 0xfd8d3c,
                                          0xfc4e2a, 0xe31a1c, 0xbd0026, 0x800026};
    constexpr int kLast = int(std::size(kStops)) - 1;
    t = std::isnan(t) ? 0.0 : std::clamp(t, 0.0, 1.0);
    const double at = t * kLast;
    const int i = std::min(int(at), kLast - 1);
    const double f = at - i;
    auto channel = [&](int shift) {
        const double a = (kStops[i] >> shift) & 0xff, b = (kStops[i + 1] >> shift) & 0xff;
        return unsigned(std::lround(a + (b - a) * f)) << shift;
    };
    return channel(16) | channel(8) | channel(0);
}

std::string formatHeat(HeatUnit unit, double value) {
    char text[48];
    switch (unit) {
        case HeatUnit::Share: std::snprintf(text, sizeof text, "%.1f%%", 100.0 * value); break;
        case HeatUnit::Milliseconds: return durationText(value);
        case HeatUnit::BytesPerSecond: return bandwidthText(value);
        case HeatUnit::FlopsPerSecond:
            if (value >= 1e12) std::snprintf(text, sizeof text, "%.2f TFLOP/s", value / 1e12);
            else std::snprintf(text, sizeof text, "%.1f GFLOP/s", value / 1e9);
            break;
        case HeatUnit::RelativeError: std::snprintf(text, sizeof text, "%.1e", value); break;
        case HeatUnit::TimeRatio: std::snprintf(text, sizeof text, "%.2fx", value); break;
    }
    return text;
}

const char* heatTitle(HeatUnit unit) {
    switch (unit) {
        case HeatUnit::Share: return "share of run time";
        case HeatUnit::Milliseconds: return "time per iteration";
        case HeatUnit::BytesPerSecond: return "achieved bandwidth";
        case HeatUnit::FlopsPerSecond: return "achieved FLOP/s";
        case HeatUnit::RelativeError: return "relative error against the reference";
        case HeatUnit::TimeRatio: return "time over the baseline's";
    }
    return "";
}

}  // namespace fsc
