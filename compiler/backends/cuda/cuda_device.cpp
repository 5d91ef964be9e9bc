// The real device: one GPU, one stream, cuBLASLt for GEMMs and the kernels of
// kernels/device_kernels.cu for the rest. Built as the plugin libfsc_cuda_device.so
// (device_loader.cpp opens it), so only machines that run it need the CUDA libraries.
// Every CUDA error becomes one line naming the call; nothing aborts.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "compiler/backends/cuda/cudnn_attention.h"
#include "compiler/backends/cuda/cudnn_convolution.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/backends/cuda/gemm_lowering.h"
#include "compiler/backends/cuda/kernels/device_kernels.h"
#include "compiler/backends/cuda/kernels/generated_args.h"

namespace fsc {
namespace {

Status cudaFailure(const char* what, cudaError_t e) {
    return Status(ErrorCode::Internal, std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                                           cudaGetErrorString(e) + ")");
}
Status ltFailure(const char* what, cublasStatus_t s) {
    return Status(ErrorCode::Internal,
                  std::string(what) + ": cuBLASLt status " + std::to_string(int(s)));
}
#define FSC_CUDA(call)                                                                 \
    do {                                                                               \
        if (cudaError_t e_ = (call); e_ != cudaSuccess) return cudaFailure(#call, e_); \
    } while (0)
#define FSC_LT(call)                                                                              \
    do {                                                                                          \
        if (cublasStatus_t s_ = (call); s_ != CUBLAS_STATUS_SUCCESS) return ltFailure(#call, s_); \
    } while (0)

cudaDataType_t ltType(dk::ElemType t) {
    return t == dk::ElemType::F16    ? CUDA_R_16F
           : t == dk::ElemType::BF16 ? CUDA_R_16BF
           : t == dk::ElemType::I8   ? CUDA_R_8I
                                     : CUDA_R_32F;
}
// The largest power of two up to 256 that divides the address (cuBLASLt's alignment preference).
uint32_t pointerAlignment(const void* p) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    uint32_t align = 256;
    while (align > 1 && address % align) align /= 2;
    return align;
}
cublasLtEpilogue_t ltEpilogue(LtEpilogue e) {
    switch (e) {
        case LtEpilogue::Relu:
            return CUBLASLT_EPILOGUE_RELU;
        case LtEpilogue::Bias:
            return CUBLASLT_EPILOGUE_BIAS;
        case LtEpilogue::ReluBias:
            return CUBLASLT_EPILOGUE_RELU_BIAS;
        case LtEpilogue::Gelu:
            return CUBLASLT_EPILOGUE_GELU;
        case LtEpilogue::GeluBias:
            return CUBLASLT_EPILOGUE_GELU_BIAS;
        default:
            return CUBLASLT_EPILOGUE_DEFAULT;
    }
}

// RAII for cuBLASLt's descriptors.
struct LtDescriptors {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    ~LtDescriptors() {
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (c) cublasLtMatrixLayoutDestroy(c);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

class GpuDevice : public CudaDevice {
public:
    ~GpuDevice() override {
        for (auto& [id, exec] : m_graphs) cudaGraphExecDestroy(exec);
        for (auto& [name, loaded] : m_generated) cudaLibraryUnload(loaded.library);
        m_attention.reset();  // before the library it uses
        m_dnn.reset();
        for (void* w : m_kernelWorkspaces) cudaFree(w);
        if (m_staging) cudaFreeHost(m_staging);
        if (m_workspace) cudaFree(m_workspace);
        if (m_lt) cublasLtDestroy(m_lt);
        if (m_stream) cudaStreamDestroy(m_stream);
    }

    Status open(int index) {
        FSC_CUDA(cudaSetDevice(index));
        cudaDeviceProp prop{};
        FSC_CUDA(cudaGetDeviceProperties(&prop, index));
        m_index = index;
        m_name = prop.name;
        m_computeCapability = prop.major * 10 + prop.minor;
        FSC_CUDA(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
        FSC_LT(cublasLtCreate(&m_lt));
        FSC_CUDA(cudaMalloc(&m_workspace, kWorkspaceBytes));
        m_dnn = CudnnConvolution::open(m_stream, &m_dnnMissing);
        // cuDNN's fused attention engines start at sm_80.
        if (m_dnn && m_computeCapability >= 80) m_attention = std::make_unique<CudnnAttention>(*m_dnn);
        return Status::ok();
    }

    std::string name() const override { return m_name; }
    bool simulated() const override { return false; }
    DeviceMemoryInfo memory() const override {
        size_t freeBytes = 0, total = 0;
        cudaSetDevice(m_index);
        cudaMemGetInfo(&freeBytes, &total);
        std::lock_guard lock(m_allocationMutex);
        return {freeBytes, total, m_peakBytes + kWorkspaceBytes};
    }

    Result<void*> allocate(size_t bytes) override {
        cudaSetDevice(m_index);
        void* p = nullptr;
        const cudaError_t e = cudaMalloc(&p, std::max<size_t>(bytes, 1));
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();  // clears the sticky-free error so later calls work
            return Status(ErrorCode::Unsupported, "out of device memory: asked for " +
                                                      std::to_string(bytes) + " bytes, " +
                                                      std::to_string(memory().freeBytes) + " free");
        }
        if (e != cudaSuccess) return cudaFailure("cudaMalloc", e);
        std::lock_guard lock(m_allocationMutex);
        m_allocations[p] = bytes;
        m_liveBytes += bytes;
        m_peakBytes = std::max(m_peakBytes, m_liveBytes);
        return p;
    }
    Result<void*> workspace(size_t bytes) override {
        if (!m_kernelWorkspaces.empty() && m_kernelWorkspaceBytes >= bytes)
            return m_kernelWorkspaces.back();
        if (m_capturing)
            return Status(ErrorCode::Internal,
                          "the kernels' workspace would grow while capturing a CUDA graph");
        auto grown = allocate(bytes);
        if (!grown) return grown.status().withContext("growing the kernels' workspace");
        m_kernelWorkspaces.push_back(*grown);
        m_kernelWorkspaceBytes = bytes;
        return *grown;
    }
    void release(void* ptr) override {
        if (!ptr) return;
        cudaFree(ptr);
        std::lock_guard lock(m_allocationMutex);
        if (auto it = m_allocations.find(ptr); it != m_allocations.end()) {
            m_liveBytes -= it->second;
            m_allocations.erase(it);
        }
    }

    // Pageable host memory goes through a pinned staging buffer in chunks, so copies run at
    // full PCIe speed and finish before the call returns.
    Status copyToDevice(void* dst, const void* src, size_t bytes) override {
        std::lock_guard lock(m_mutex);
        FSC_RETURN_IF_ERROR(ensureStaging());
        for (size_t done = 0; done < bytes;) {
            const size_t n = std::min(kStagingBytes, bytes - done);
            std::memcpy(m_staging, static_cast<const char*>(src) + done, n);
            FSC_CUDA(cudaMemcpyAsync(static_cast<char*>(dst) + done, m_staging, n,
                                     cudaMemcpyHostToDevice, m_stream));
            FSC_CUDA(cudaStreamSynchronize(m_stream));
            done += n;
        }
        return Status::ok();
    }
    Status copyToHost(void* dst, const void* src, size_t bytes) override {
        std::lock_guard lock(m_mutex);
        FSC_RETURN_IF_ERROR(ensureStaging());
        for (size_t done = 0; done < bytes;) {
            const size_t n = std::min(kStagingBytes, bytes - done);
            FSC_CUDA(cudaMemcpyAsync(m_staging, static_cast<const char*>(src) + done, n,
                                     cudaMemcpyDeviceToHost, m_stream));
            FSC_CUDA(cudaStreamSynchronize(m_stream));
            std::memcpy(static_cast<char*>(dst) + done, m_staging, n);
            done += n;
        }
        if (bytes == 0) FSC_CUDA(cudaStreamSynchronize(m_stream));
        return Status::ok();
    }
    Status copyOnDevice(void* dst, const void* src, size_t bytes) override {
        FSC_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_stream));
        return Status::ok();
    }
    Status fill(void* dst, int byte, size_t bytes) override {
        FSC_CUDA(cudaMemsetAsync(dst, byte, bytes, m_stream));
        return Status::ok();
    }

    Status launch(const DeviceLaunch& l) override {
        const cudaError_t e = std::visit([&](const auto& p) { return dk::launch(p, l.geometry, m_stream); }, l.params);
        if (e != cudaSuccess) return cudaFailure(l.name(), e);
        return Status::ok();
    }

    int computeCapability() const override { return m_computeCapability; }
    Status launchGenerated(const GeneratedLaunch& g) override {
        cudaKernel_t kernel = nullptr;
        {
            std::lock_guard lock(m_mutex);
            auto loaded = m_generated.find(g.name);
            if (loaded != m_generated.end()) {
                kernel = loaded->second.kernel;
            } else {
                // Loading a module is not a stream operation: it cannot be captured.
                if (m_capturing)
                    return Status(
                        ErrorCode::Internal,
                        "generated kernel " + g.name + " was not loaded before CUDA graph capture");
                if (!g.ptx)
                    return Status(ErrorCode::Internal,
                                  "generated kernel " + g.name + " without PTX");
                Generated entry;
                FSC_CUDA(cudaLibraryLoadData(&entry.library, g.ptx->c_str(), nullptr, nullptr, 0,
                                             nullptr, nullptr, 0));
                if (cudaError_t e =
                        cudaLibraryGetKernel(&entry.kernel, entry.library, g.name.c_str());
                    e != cudaSuccess) {
                    cudaLibraryUnload(entry.library);
                    return cudaFailure("cudaLibraryGetKernel", e);
                }
                kernel = entry.kernel;
                m_generated.emplace(g.name, entry);
            }
        }
        dk::GeneratedArgs args = dk::generatedArgs(g.params);
        if (args.broadcastBytes == 0)
            return Status(ErrorCode::Internal, "generated kernel " + g.name + ": bad input count");
        void* pointers[dk::kEwMaxInputs + 3];
        args.pointers(pointers);
        FSC_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(kernel),
                                  dim3(unsigned(g.geometry.grid)), dim3(unsigned(g.geometry.block)),
                                  pointers, 0, m_stream));
        return Status::ok();
    }

    Status gemm(const GemmCall& call) override {
        const bool integer = call.type == dk::ElemType::I8;
        const int64_t cBytes = integer || call.floatOutput ? 4 : dk::elemBytes(call.type);
        if (call.k == 0) {  // alpha * (empty product) is zero; cuBLASLt wants k >= 1
            if (call.beta != 0.f || call.bias || call.act != dk::Act::None)
                return Status(ErrorCode::Unsupported, "a GEMM with k = 0 and an epilogue");
            for (int64_t i = 0; i < call.batch; ++i)
                FSC_CUDA(cudaMemset2DAsync(static_cast<char*>(call.c) + i * call.strideC * cBytes,
                                           size_t(call.ldc * cBytes), 0, size_t(call.n * cBytes),
                                           size_t(call.m), m_stream));
            return Status::ok();
        }
        auto plan = describeForLt(call);
        if (!plan) return plan.status();
        const cudaDataType_t type = ltType(call.type);
        LtDescriptors d;
        // float32 accumulates in float32 (strict unless asked for TF32: results match the CPU
        // to 1e-4); the half types on tensor cores; int8 exactly in int32, with int32 alpha and beta.
        const bool tf32 = call.tf32 && call.type == dk::ElemType::F32;
        if (integer)
            FSC_LT(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
        else
            FSC_LT(cublasLtMatmulDescCreate(&d.op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
        const cublasOperation_t opA = plan->transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                                opB = plan->transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        FSC_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA));
        FSC_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB));
        const cublasLtEpilogue_t epilogue = ltEpilogue(plan->epilogue);
        FSC_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof epilogue));
        if (call.bias) {
            const void* bias = call.bias;
            FSC_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                  sizeof bias));
        }
        auto layout = [&](cublasLtMatrixLayout_t* out, const LtMatrixLayout& m,
                          cudaDataType_t t) -> Status {
            FSC_LT(cublasLtMatrixLayoutCreate(out, t, m.rows, m.cols, m.ld));
            if (plan->batch > 1) {
                const int32_t count = plan->batch;
                const int64_t stride = m.batchStride;
                FSC_LT(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                        &count, sizeof count));
                FSC_LT(cublasLtMatrixLayoutSetAttribute(
                    *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
            }
            return Status::ok();
        };
        FSC_RETURN_IF_ERROR(layout(&d.a, plan->a, type));
        FSC_RETURN_IF_ERROR(layout(&d.b, plan->b, type));
        FSC_RETURN_IF_ERROR(layout(&d.c, plan->c,
                                   integer            ? CUDA_R_32I
                                   : call.floatOutput ? CUDA_R_32F
                                                      : type));
        // cuBLASLt's heuristics assume 256-byte aligned matrices unless told otherwise; a
        // matrix that starts inside a tensor (a head of Q, a batch of a broadcast MatMul)
        // may be aligned to less, and an algorithm that relies on more would misread it.
        const uint32_t alignA = pointerAlignment(call.b), alignB = pointerAlignment(call.a),
                       alignC = pointerAlignment(call.c);
        const std::string key = plan->key + (tf32 ? ":tf32" : "") + ":align" + std::to_string(alignA) + "," +
                                std::to_string(alignB) + "," + std::to_string(alignC);
        cublasLtMatmulAlgo_t algo{};
        {
            std::lock_guard lock(m_mutex);
            auto cached = m_algorithms.find(key);
            if (cached != m_algorithms.end()) {
                algo = cached->second;
            } else {
                cublasLtMatmulPreference_t pref = nullptr;
                FSC_LT(cublasLtMatmulPreferenceCreate(&pref));
                const uint64_t workspace = kWorkspaceBytes;
                cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &workspace, sizeof workspace);
                cublasLtMatmulPreferenceSetAttribute(
                    pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA, sizeof alignA);
                cublasLtMatmulPreferenceSetAttribute(
                    pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB, sizeof alignB);
                cublasLtMatmulPreferenceSetAttribute(
                    pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC, sizeof alignC);
                cublasLtMatmulPreferenceSetAttribute(
                    pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC, sizeof alignC);
                cublasLtMatmulHeuristicResult_t result{};
                int found = 0;
                const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
                    m_lt, d.op, d.a, d.b, d.c, d.c, pref, 1, &result, &found);
                cublasLtMatmulPreferenceDestroy(pref);
                if (s != CUBLAS_STATUS_SUCCESS || found == 0)
                    return Status(ErrorCode::Unsupported,
                                  "cuBLASLt has no algorithm for the GEMM " + key);
                algo = result.algo;
                m_algorithms.emplace(key, algo);
            }
        }
        const float alpha = call.alpha, beta = call.beta;
        const int32_t intAlpha = 1, intBeta = 0;  // checkGemmCall holds int8 GEMMs to these
        const void* alphaPtr = integer ? static_cast<const void*>(&intAlpha) : &alpha;
        const void* betaPtr = integer ? static_cast<const void*>(&intBeta) : &beta;
        // cuBLASLt's A is our B and its B our A (gemm_lowering.h).
        FSC_LT(cublasLtMatmul(m_lt, d.op, alphaPtr, call.b, d.a, call.a, d.b, betaPtr, call.c, d.c,
                              call.c, d.c, &algo, m_workspace, kWorkspaceBytes, m_stream));
        return Status::ok();
    }

    bool hasConvolution() const override { return m_dnn != nullptr; }
    Status convolution(const ConvCall& call) override {
        if (!m_dnn)
            return Status(ErrorCode::Unsupported, "no convolutions on this GPU: " + m_dnnMissing);
        const CudnnConvolution::Memory memory{[this](size_t bytes) { return allocate(bytes); },
                                              [this](void* p) { release(p); }};
        return m_dnn->run(
            call, [this](size_t bytes) { return workspace(bytes); },
            [this](const DeviceLaunch& l) { return launch(l); }, memory, m_capturing);
    }

    bool hasFusedAttention() const override { return m_attention != nullptr; }
    Status fusedAttention(const FusedAttentionCall& call) override {
        if (!m_attention) return Status(ErrorCode::Unsupported, "no fused attention on this GPU");
        const CudnnConvolution::Memory memory{[this](size_t bytes) { return allocate(bytes); },
                                              [this](void* p) { release(p); }};
        return m_attention->run(
            call, [this](size_t bytes) { return workspace(bytes); },
            [this](const DeviceLaunch& l) { return launch(l); }, memory, m_capturing);
    }

    Status synchronize() override {
        FSC_CUDA(cudaStreamSynchronize(m_stream));
        return Status::ok();
    }

    Status beginCapture() override {
        FSC_CUDA(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal));
        m_capturing = true;
        return Status::ok();
    }
    Result<int> endCapture() override {
        cudaGraph_t graph = nullptr;
        m_capturing = false;
        FSC_CUDA(cudaStreamEndCapture(m_stream, &graph));
        cudaGraphExec_t exec = nullptr;
        const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        if (e != cudaSuccess) return cudaFailure("cudaGraphInstantiate", e);
        std::lock_guard lock(m_mutex);
        const int id = m_nextGraph++;
        m_graphs[id] = exec;
        return id;
    }
    Status replay(int graph) override {
        cudaGraphExec_t exec = nullptr;
        {
            std::lock_guard lock(m_mutex);
            auto it = m_graphs.find(graph);
            if (it == m_graphs.end())
                return Status(ErrorCode::Internal, "no CUDA graph " + std::to_string(graph));
            exec = it->second;
        }
        FSC_CUDA(cudaGraphLaunch(exec, m_stream));
        return Status::ok();
    }
    void dropGraph(int graph) override {
        std::lock_guard lock(m_mutex);
        auto it = m_graphs.find(graph);
        if (it == m_graphs.end()) return;
        cudaGraphExecDestroy(it->second);
        m_graphs.erase(it);
    }

private:
    static constexpr size_t kWorkspaceBytes = size_t(32) << 20;
    static constexpr size_t kStagingBytes = size_t(64) << 20;

    Status ensureStaging() {
        if (!m_staging) FSC_CUDA(cudaHostAlloc(&m_staging, kStagingBytes, cudaHostAllocDefault));
        return Status::ok();
    }

    struct Generated {
        cudaLibrary_t library = nullptr;
        cudaKernel_t kernel = nullptr;
    };

    int m_index = 0;
    int m_computeCapability = 0;
    std::string m_name;
    std::map<std::string, Generated> m_generated;  // NVRTC kernels by name, loaded once
    mutable std::mutex m_allocationMutex;
    std::map<void*, size_t> m_allocations;
    uint64_t m_liveBytes = 0, m_peakBytes = 0;
    cudaStream_t m_stream = nullptr;
    cublasLtHandle_t m_lt = nullptr;
    void* m_workspace = nullptr;  // cuBLASLt's
    std::vector<void*>
        m_kernelWorkspaces;  // workspace(): the newest last; older ones stay for captured graphs
    size_t m_kernelWorkspaceBytes = 0;
    void* m_staging = nullptr;
    std::mutex m_mutex;
    std::map<std::string, cublasLtMatmulAlgo_t> m_algorithms;  // heuristics, cached per shape
    std::map<int, cudaGraphExec_t> m_graphs;
    int m_nextGraph = 1;
    bool m_capturing = false;
    std::unique_ptr<CudnnConvolution> m_dnn;  // null without cuDNN 9
    std::unique_ptr<CudnnAttention> m_attention;  // null without cuDNN 9 or before sm_80
    std::string m_dnnMissing;
};

}  // namespace
}  // namespace fsc

extern "C" __attribute__((visibility("default"))) int fscCreateCudaDevice(int index,
                                                                          fsc::CudaDevice** out,
                                                                          char* error,
                                                                          size_t errorBytes) {
    auto device = std::make_unique<fsc::GpuDevice>();
    const fsc::Status s = device->open(index);
    if (!s.isOk()) {
        std::snprintf(error, errorBytes, "%s", s.message().c_str());
        return 1;
    }
    *out = device.release();
    return 0;
}
