#pragma once
// Which CUDA devices this process can use. Built without the toolkit, or run on a machine
// without a GPU or driver, it answers with no devices and the reason.
#include <cstdint>
#include <string>
#include <vector>

namespace fsc {

struct CudaDeviceInfo {
    int index = 0;
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    uint64_t totalMemoryBytes = 0;
    int multiprocessors = 0;
    int clockKHz = 0;            // peak SM clock
    int memoryClockKHz = 0;      // peak memory clock
    int memoryBusWidthBits = 0;
};

struct CudaDeviceReport {
    bool builtWithCuda = false;
    int runtimeVersion = 0;  // e.g. 13000
    int driverVersion = 0;   // 0 when no driver is loaded
    std::vector<CudaDeviceInfo> devices;
    std::string whyNone;  // set when devices is empty
};

CudaDeviceReport queryCudaDevices();

}  // namespace fsc
