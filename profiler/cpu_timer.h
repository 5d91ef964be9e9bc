#pragma once
// Wall-clock timing on the host: a stopwatch and robust statistics over repeated samples.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace fsc {

class Stopwatch {
public:
    Stopwatch() : m_start(std::chrono::steady_clock::now()) {}
    void restart() { m_start = std::chrono::steady_clock::now(); }
    double elapsedMs() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                         m_start)
            .count();
    }

private:
    std::chrono::steady_clock::time_point m_start;
};

// Order statistics over timing samples (milliseconds). Empty samples give zeros.
struct SampleStats {
    double min = 0, median = 0, p90 = 0, p99 = 0, max = 0;
    double mean = 0, coefficientOfVariation = 0;  // standard deviation / mean
    size_t count = 0;
    // Why the timed runs' spread makes the figures unreliable (other programs on the cores,
    // frequency changes), or empty: p90 above 1.5x the median, or a coefficient of variation
    // above 0.2, over at least 3 runs. One sentence for the CLI, reports and the GUI alike.
    std::string disturbed;
};

SampleStats computeStats(std::vector<double> samplesMs);

}  // namespace fsc
