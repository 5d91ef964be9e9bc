#pragma once
// The CUDA execution provider: the backend's kernels, the capability table that says which
// ops it claims, and the device (a GPU through the plugin, or the simulated one) they run on.
#include <memory>

#include "compiler/runtime/capability_table.h"
#include "compiler/runtime/execution_provider.h"

namespace fsc {

class CudaDevice;

// Every CUDA kernel (host side: plain C++ that launches through a CudaDevice, so it is built
// with or without the toolkit), registered once.
const KernelRegistry& cudaKernels();
// The built-in table, capabilities.txt.
const CapabilityTable& cudaCapabilities();
// A provider over `device`; a null device makes executors refuse it with a one-line error.
std::shared_ptr<const ExecutionProvider> makeCudaProvider(std::shared_ptr<CudaDevice> device);

}  // namespace fsc
