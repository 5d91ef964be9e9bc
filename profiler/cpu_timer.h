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
    // above 0.2 among the runs up to the p90, over at least 3 runs. One sentence for the CLI, reports and the GUI alike.
    std::string disturbed;
};

SampleStats computeStats(std::vector<double> samplesMs);

// How many timed runs make a median when the user did not say: at least enough for a median
// and a spread, then more while they fit in about a second, within a cap. A 0.2 ms model gets
// 100 runs, a 70 ms one about 15, a 30 s one 3.
struct TimingBudget {
    static constexpr int kMinRuns = 3, kMaxRuns = 100;
    static constexpr double kBudgetMs = 1000;
    static bool wantsMore(int runsDone, double timedMs) {
        return runsDone < kMinRuns || (runsDone < kMaxRuns && timedMs < kBudgetMs);
    }
};

}  // namespace fsc
