#include "core/units.h"

#include <cmath>
#include <cstdio>

namespace fsc {

std::string bytesText(double bytes) {
    if (!std::isfinite(bytes)) return "? B";
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    const bool negative = bytes < 0;
    double v = std::fabs(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, ++u;
    // Rounding may carry into the next unit: 1023.9 KiB reads "1.00 MiB", not "1024 KiB".
    if (u > 0 && u < 4 && v >= 999.5) v /= 1024, ++u;
    const int decimals = u == 0 ? 0 : v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
    char text[48];
    std::snprintf(text, sizeof text, "%s%.*f %s", negative ? "-" : "", decimals, v, units[u]);
    return text;
}

std::string bandwidthText(double bytesPerSecond) {
    if (!std::isfinite(bytesPerSecond)) return "? B/s";
    const char* units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
    double v = std::fabs(bytesPerSecond);
    int u = 0;
    while (v >= 999.5 && u < 4) v /= 1000, ++u;
    const int decimals = u == 0 ? 0 : v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
    char text[48];
    std::snprintf(text, sizeof text, "%s%.*f %s", bytesPerSecond < 0 ? "-" : "", decimals, v, units[u]);
    return text;
}

std::string durationText(double ms) {
    if (!std::isfinite(ms)) return "? ms";
    const double a = std::fabs(ms);
    char text[48];
    if (a >= 999.5) {
        const std::string whole = groupedDigits(uint64_t(std::llround(a)));
        return (ms < 0 ? "-" : "") + whole + " ms";
    }
    if (a >= 0.9995) std::snprintf(text, sizeof text, "%.3g ms", ms);
    else if (a >= 0.0009995) std::snprintf(text, sizeof text, "%.3g µs", ms * 1e3);
    else std::snprintf(text, sizeof text, "%.3g ns", ms * 1e6);
    return text;
}

std::string groupedDigits(uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
        grouped += digits[i];
    }
    return grouped;
}

}  // namespace fsc
