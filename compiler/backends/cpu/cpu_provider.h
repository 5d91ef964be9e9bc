#pragma once
// The CPU execution provider: every CPU kernel, and the host every executor falls back to.
#include <memory>

#include "compiler/runtime/execution_provider.h"

namespace fsc {

// Every CPU kernel, registered once.
const KernelRegistry& cpuKernels();
// The provider over them (one, shared: it holds no state of its own; each executor has its
// own thread pool).
std::shared_ptr<const ExecutionProvider> cpuProvider();

}  // namespace fsc
