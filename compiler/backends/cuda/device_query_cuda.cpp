#include <cuda_runtime_api.h>

#include "compiler/backends/cuda/device_query.h"

namespace fsc {

CudaDeviceReport queryCudaDevices() {
    CudaDeviceReport report;
    report.builtWithCuda = true;
    cudaRuntimeGetVersion(&report.runtimeVersion);
    cudaDriverGetVersion(&report.driverVersion);
    if (report.driverVersion == 0) {
        report.whyNone = "no NVIDIA driver is loaded on this machine";
        return report;
    }
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        report.whyNone = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
        return report;
    }
    if (report.driverVersion != 0 && report.driverVersion < report.runtimeVersion) {
        report.whyNone = "the CUDA driver (" + std::to_string(report.driverVersion) +
                         ") is older than the runtime this build uses (" +
                         std::to_string(report.runtimeVersion) + ")";
        return report;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        CudaDeviceInfo info;
        info.index = i;
        info.name = prop.name;
        info.computeMajor = prop.major;
        info.computeMinor = prop.minor;
        info.totalMemoryBytes = prop.totalGlobalMem;
        info.multiprocessors = prop.multiProcessorCount;
        // Moved out of cudaDeviceProp in CUDA 13; the attributes remain.
        cudaDeviceGetAttribute(&info.clockKHz, cudaDevAttrClockRate, i);
        cudaDeviceGetAttribute(&info.memoryClockKHz, cudaDevAttrMemoryClockRate, i);
        cudaDeviceGetAttribute(&info.memoryBusWidthBits, cudaDevAttrGlobalMemoryBusWidth, i);
        report.devices.push_back(std::move(info));
    }
    if (report.devices.empty()) report.whyNone = "no CUDA device found";
    return report;
}

}  // namespace fsc
