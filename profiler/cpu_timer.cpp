#include "profiler/cpu_timer.h"

#include <cmath>

namespace fsc {

SampleStats computeStats(std::vector<double> samples) {
    SampleStats s;
    s.count = samples.size();
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    // Nearest-rank percentiles: the reported value is always one that was measured.
    auto rank = [&](double q) {
        size_t r = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
        return samples[std::clamp<size_t>(r, 1, samples.size()) - 1];
    };
    s.min = samples.front();
    s.max = samples.back();
    s.median = rank(0.5);
    s.p90 = rank(0.9);
    s.p99 = rank(0.99);
    return s;
}

}  // namespace fsc
