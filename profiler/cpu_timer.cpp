#include "profiler/cpu_timer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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
    double sum = 0, squares = 0;
    for (double v : samples) sum += v;
    s.mean = sum / double(samples.size());
    for (double v : samples) squares += (v - s.mean) * (v - s.mean);
    s.coefficientOfVariation = s.mean > 0 ? std::sqrt(squares / double(samples.size())) / s.mean : 0;
    // The spread test reads the runs up to the p90: a few outliers among a hundred steady runs
    // (a page fault, a timer tick) leave the median sound, and the p90 test sees a wider tail.
    double bodySum = 0, bodySquares = 0;
    size_t body = 0;
    for (double v : samples)
        if (v <= s.p90) bodySum += v, ++body;
    const double bodyMean = bodySum / double(body);
    for (double v : samples)
        if (v <= s.p90) bodySquares += (v - bodyMean) * (v - bodyMean);
    const double bodyVariation = bodyMean > 0 ? std::sqrt(bodySquares / double(body)) / bodyMean : 0;
    if (samples.size() >= 3 && s.median > 0) {
        char text[200];
        if (s.p90 > 1.5 * s.median)
            std::snprintf(text, sizeof text,
                          "timings unreliable: p90 is %.1fx the median (other programs on the cores?)", s.p90 / s.median);
        else if (bodyVariation > 0.2)
            std::snprintf(text, sizeof text,
                          "timings unreliable: the runs vary by %.0f%% of their mean (other programs on the cores?)",
                          100 * bodyVariation);
        else
            text[0] = '\0';
        s.disturbed = text;
    }
    return s;
}

}  // namespace fsc
