#pragma once
// Kernel registry: (domain, op, opset range) -> factory, backend and variant. Kernel ids
// read `<op>.<dtype>.<variant>`, e.g. `Conv.float32.im2col_sgemm`.
#include <map>
#include <string>
#include <vector>

#include "compiler/runtime/kernel.h"

namespace fsc {

enum class Backend { Cpu, Cuda };
const char* backendName(Backend backend);

struct KernelDef {
    std::string domain;  // "" for ai.onnx
    std::string op;
    int64_t minOpset = 1;
    int64_t maxOpset = 1 << 30;
    std::string variant = "ref";
    Backend backend = Backend::Cpu;
    // float16/bfloat16 inputs are widened to float32 around the kernel and float32
    // outputs narrowed back (the kernel itself only knows float32).
    bool halfViaFloat = true;
    // Inputs a device kernel reads on the host (shape operands such as Reshape's target):
    // the executor keeps them in host memory for it.
    std::vector<int> hostInputs;
    KernelFactory factory;
};

// How a def differs from the defaults, e.g. {.variant = "openblas"}.
struct KernelDefOptions {
    std::string variant = "ref";
    bool halfViaFloat = true;
    int64_t minOpset = 1;
};

class KernelRegistry {
public:
    void add(KernelDef def);
    // A CPU kernel for an ai.onnx op.
    void add(const std::string& op, KernelFactory factory, const KernelDefOptions& options = {});
    // The def for an op at an opset, or null.
    const KernelDef* find(const std::string& domain, const std::string& op, int64_t opset,
                          Backend backend) const;
    std::vector<std::string> ops(Backend backend) const;  // "Conv", "com.microsoft.Gelu"

    // Every CPU kernel, registered once.
    static const KernelRegistry& cpu();
    // Every CUDA backend kernel (backends/cuda/cuda_kernels.cpp); plain C++ that launches
    // through a Device, so it is built with or without the toolkit.
    static const KernelRegistry& cuda();

private:
    std::map<std::pair<std::string, std::string>, std::vector<KernelDef>> m_defs;
};

// Registration functions, one per kernel family file under backends/cpu/.
void registerElementwiseKernels(KernelRegistry& registry);
void registerReductionKernels(KernelRegistry& registry);
void registerTensorKernels(KernelRegistry& registry);
void registerNnKernels(KernelRegistry& registry);
void registerConvKernels(KernelRegistry& registry);
void registerRnnKernels(KernelRegistry& registry);
void registerQuantKernels(KernelRegistry& registry);
void registerResizeKernels(KernelRegistry& registry);
void registerControlFlowKernels(KernelRegistry& registry);
void registerMiscKernels(KernelRegistry& registry);
void registerSignalKernels(KernelRegistry& registry);
void registerGridSampleKernels(KernelRegistry& registry);
void registerRoiAlignKernels(KernelRegistry& registry);
void registerFusedKernels(KernelRegistry& registry);  // the ai.fusescope domain
void registerCollectiveKernels(KernelRegistry& registry);  // ai.fusescope AllReduce, AllGather, Send, Recv
void registerCudaKernels(KernelRegistry& registry);

}  // namespace fsc
