#include "compiler/backends/cpu/cpu_provider.h"

namespace fsc {

// Registration functions, one per kernel family file under backends/cpu/.
void registerElementwiseKernels(KernelRegistry& registry);
void registerReductionKernels(KernelRegistry& registry);
void registerTensorKernels(KernelRegistry& registry);
void registerNnKernels(KernelRegistry& registry);
void registerConvKernels(KernelRegistry& registry);
void registerRnnKernels(KernelRegistry& registry);
void registerQuantKernels(KernelRegistry& registry);
// com.microsoft's quantized ops, as ONNX Runtime's quantizer writes them
void registerQLinearBinaryKernels(KernelRegistry& registry);
void registerQLinearPoolKernel(KernelRegistry& registry);
void registerQLinearConcatKernel(KernelRegistry& registry);
void registerQuantizedLookupKernel(KernelRegistry& registry);
void registerQLinearSoftmaxKernel(KernelRegistry& registry);
void registerQGemmKernel(KernelRegistry& registry);
void registerMatMulIntegerToFloatKernel(KernelRegistry& registry);
void registerContribKernels(KernelRegistry& registry);  // what ONNX Runtime's optimizer writes
void registerResizeKernels(KernelRegistry& registry);
void registerControlFlowKernels(KernelRegistry& registry);
void registerSequenceKernels(KernelRegistry& registry);
void registerMiscKernels(KernelRegistry& registry);
void registerNonMaxSuppressionKernel(KernelRegistry& registry);
void registerSignalKernels(KernelRegistry& registry);
void registerGridSampleKernels(KernelRegistry& registry);
void registerRoiAlignKernels(KernelRegistry& registry);
void registerFusedKernels(KernelRegistry& registry);      // the ai.fusescope domain
void registerCollectiveKernels(KernelRegistry& registry);  // ai.fusescope AllReduce, AllGather, Send, Recv

const KernelRegistry& cpuKernels() {
    static const KernelRegistry registry = [] {
        KernelRegistry r;
        registerElementwiseKernels(r);
        registerReductionKernels(r);
        registerTensorKernels(r);
        registerNnKernels(r);
        registerConvKernels(r);
        registerRnnKernels(r);
        registerQuantKernels(r);
        registerQLinearBinaryKernels(r);
        registerQLinearPoolKernel(r);
        registerQLinearConcatKernel(r);
        registerQuantizedLookupKernel(r);
        registerQLinearSoftmaxKernel(r);
        registerQGemmKernel(r);
        registerMatMulIntegerToFloatKernel(r);
        registerContribKernels(r);
        registerResizeKernels(r);
        registerControlFlowKernels(r);
        registerSequenceKernels(r);
        registerMiscKernels(r);
        registerNonMaxSuppressionKernel(r);
        registerSignalKernels(r);
        registerGridSampleKernels(r);
        registerRoiAlignKernels(r);
        registerFusedKernels(r);
        registerCollectiveKernels(r);
        return r;
    }();
    return registry;
}

namespace {

class CpuProvider : public ExecutionProvider {
public:
    Backend backend() const override { return Backend::Cpu; }
    const KernelRegistry& kernels() const override { return cpuKernels(); }
};

}  // namespace

std::shared_ptr<const ExecutionProvider> cpuProvider() {
    static const auto provider = std::make_shared<const CpuProvider>();
    return provider;
}

}  // namespace fsc
