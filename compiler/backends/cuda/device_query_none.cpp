#include "compiler/backends/cuda/device_query.h"

namespace fsc {

CudaDeviceReport queryCudaDevices() {
    CudaDeviceReport report;
    report.whyNone = "this build has no CUDA support (configured without the CUDA toolkit)";
    return report;
}

}  // namespace fsc
