#include "app/profiling/device_peaks.h"

#include <algorithm>
#include <cstdio>
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

DevicePeaks gpuPeaksFromQuery(const CudaDeviceInfo& d, bool halfPrecision) {
    DevicePeaks peaks;
    const int cc = d.computeMajor * 10 + d.computeMinor;
    // Per SM per clock, from NVIDIA's architecture white papers.
    const int fp32Lanes = cc >= 86 || (cc >= 75 && cc < 80) ? 128 : cc >= 60 ? 64 : 0;
    const int tensorFlops = cc >= 90 ? 4096 : cc >= 80 ? 2048 : cc >= 70 ? 1024 : 0;  // dense fp16 FLOPs
    const int perClock = halfPrecision ? tensorFlops : 2 * fp32Lanes;
    if (perClock == 0 || d.clockKHz <= 0 || d.memoryClockKHz <= 0 || d.memoryBusWidthBits <= 0) {
        peaks.source = "no roofs: the device query of " + d.name + " (compute " + std::to_string(d.computeMajor) + "." +
                       std::to_string(d.computeMinor) + ") gave no clocks or an architecture Fusescope does not know";
        return peaks;
    }
    peaks.flopsPerSecond = double(d.multiprocessors) * perClock * double(d.clockKHz) * 1e3;
    peaks.bytesPerSecond = 2.0 * double(d.memoryClockKHz) * 1e3 * double(d.memoryBusWidthBits) / 8.0;
    char text[256];
    std::snprintf(text, sizeof text, "device query: %d SMs x %d %s FLOPs per clock x %.2f GHz; %.2f GHz x 2 x %d-bit bus",
                  d.multiprocessors, perClock, halfPrecision ? "dense fp16 tensor-core" : "fp32 FMA", d.clockKHz / 1e6,
                  d.memoryClockKHz / 1e6, d.memoryBusWidthBits);
    peaks.source = text;
    return peaks;
}

DevicePeaks measureCpuPeaks() {
    static const DevicePeaks peaks = measure();  // once per process: the machine does not change
    return peaks;
}

}  // namespace fsc
