#pragma once
// The roofs of a roofline for the CPU, measured rather than guessed: the best of a few
// float GEMMs (the kernel the CPU backend uses) for FLOP/s, and of large memcpys for bytes
// per second (read plus write). Measured once per process, in about half a second.
#include <string>

#include "compiler/backends/cuda/device_query.h"

namespace fsc {

struct DevicePeaks {
    double flopsPerSecond = 0;
    double bytesPerSecond = 0;
    std::string source;  // how they were found, for every place they are shown
};

DevicePeaks measureCpuPeaks();

// A GPU's roofs from its device query: SMs x lanes per SM x 2 (an FMA) x the SM clock for
// FLOP/s (float32 FMA lanes, or the dense tensor-core rate for half-precision graphs), and
// 2 (double data rate) x the memory clock x the bus width for bytes per second. An unknown
// architecture or a query without clocks gives zeros and says so in `source`.
DevicePeaks gpuPeaksFromQuery(const CudaDeviceInfo& device, bool halfPrecision);

}  // namespace fsc
