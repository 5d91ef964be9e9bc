#pragma once
// The roofs of a roofline for the CPU, measured rather than guessed: the best of a few
// float GEMMs (the kernel the CPU backend uses) for FLOP/s, and of large memcpys for bytes
// per second (read plus write). Measured once per process, in about half a second.
#include <string>

namespace fsc {

struct DevicePeaks {
    double flopsPerSecond = 0;
    double bytesPerSecond = 0;
    std::string source;  // how they were found, for every place they are shown
};

DevicePeaks measureCpuPeaks();

}  // namespace fsc
