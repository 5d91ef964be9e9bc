#pragma once
// Wall-clock timing on the host: a stopwatch and robust statistics over repeated samples.
#include <algorithm>
#include <chrono>
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
    size_t count = 0;
};

SampleStats computeStats(std::vector<double> samplesMs);

}  // namespace fsc
