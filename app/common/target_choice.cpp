#include "app/common/target_choice.h"

#include "compiler/backends/cuda/device.h"

namespace fsc {

Result<Target> makeTarget(const TargetChoice& choice) {
    Target target;
    target.threads = choice.threads;
    target.tf32 = choice.tf32;
    target.cudaGraphs = choice.cudaGraphs;
    if (choice.backend == "cpu") return target;
    if (choice.backend != "cuda")
        return Status(ErrorCode::InvalidArgument, "unknown backend '" + choice.backend + "' (cpu or cuda)");
    auto device = openCudaDevice();
    if (!device) return device.status();
    target.backend = Backend::Cuda;
    target.device = *device;
    return target;
}

}  // namespace fsc
