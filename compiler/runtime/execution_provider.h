#pragma once
// Where plan steps run, in the spirit of ONNX Runtime's IExecutionProvider: a provider has
// its kernels, says which nodes it claims, and (a device provider) owns the device its
// kernels' values live on. Lowering offers each node to the executor's device provider first
// and gives the rest to its host provider; the executor walks the steps and asks the step's
// provider's device for memory, copies and capture. The runtime knows no backend: the CPU
// provider is backends/cpu (cpuProvider()), the CUDA one backends/cuda (makeCudaProvider()),
// and compiler/target.h picks them for a Target.
#include <memory>

#include "compiler/runtime/kernel_registry.h"

namespace fsc {

class CapabilityTable;
class Device;

class ExecutionProvider {
public:
    virtual ~ExecutionProvider() = default;
    virtual Backend backend() const = 0;
    virtual const KernelRegistry& kernels() const = 0;
    // The ops and dtypes a device provider claims before its kernels are asked (a kernel's
    // factory may still decline a node); null for a host provider, which runs every node it
    // has a kernel for.
    virtual const CapabilityTable* capabilities() const { return nullptr; }
    // A device provider's device (memory, copies, capture and replay); null on the host.
    virtual std::shared_ptr<Device> device() const { return nullptr; }
};

}  // namespace fsc
