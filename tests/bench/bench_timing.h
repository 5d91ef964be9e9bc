#pragma once
// Timing helpers the benches share: wall-clock milliseconds and the median of samples.
#include <algorithm>
#include <chrono>
#include <vector>

namespace fsc::bench {

inline double nowMs() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The upper median: the middle sample, or the later of the two middle ones.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace fsc::bench
