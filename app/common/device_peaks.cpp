#include "app/common/device_peaks.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "profiler/cpu_timer.h"

namespace fsc {

namespace {

DevicePeaks measure() {
    DevicePeaks peaks;
    constexpr int64_t n = 2048;
    std::vector<float> a(size_t(n * n), 1.0f), b(size_t(n * n), 0.5f), c(size_t(n * n), 0.0f);
    double bestGemm = 1e30;
    for (int i = 0; i < 5; ++i) {  // the first warms oneDNN's kernels and threads
        Stopwatch watch;
        cpu::gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
        if (i > 0) bestGemm = std::min(bestGemm, watch.elapsedMs());
    }
    peaks.flopsPerSecond = 2.0 * double(n) * double(n) * double(n) / (bestGemm / 1e3);

    constexpr size_t bytes = size_t(64) << 20;
    std::vector<char> from(bytes, 1), to(bytes, 0);
    double bestCopy = 1e30;
    for (int i = 0; i < 4; ++i) {
        Stopwatch watch;
        std::memcpy(to.data(), from.data(), bytes);
        if (i > 0) bestCopy = std::min(bestCopy, watch.elapsedMs());
    }
    peaks.bytesPerSecond = 2.0 * double(bytes) / (bestCopy / 1e3);
    peaks.source = "measured here: best float GEMM 2048x2048x2048, best 64 MiB memcpy (read + write)";
    return peaks;
}

}  // namespace

DevicePeaks measureCpuPeaks() {
    static const DevicePeaks peaks = measure();  // once per process: the machine does not change
    return peaks;
}

}  // namespace fsc
