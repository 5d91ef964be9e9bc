#pragma once
// What every cuDNN operation graph the device plugin builds shares (the backend descriptor
// API): descriptors that keep their first failure, tensors and pointwise nodes, the engine
// candidates cuDNN's heuristics propose, and the choice among them: each candidate run once and
// its output checked against a reference made another way, the fastest of those that agree
// kept, as ONNX Runtime's exhaustive search and TensorRT's tactics time theirs. Part of the
// CUDA device plugin only.
#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "compiler/backends/cuda/cudnn_api.h"

namespace fsc::cudnn_graph {

using Api = CudnnConvolution::Api;

// Every tensor is described 16-byte aligned; calls whose pointers are not take another route.
inline constexpr int64_t kAlignment = 16;
inline constexpr int kCandidatesTimed = 4;
inline constexpr int64_t kMaxWorkspaceBytes = int64_t(256) << 20;

// One backend descriptor. Setters keep the first failure, which finalize() reports with the
// attribute it happened at.
class Desc {
public:
    Desc(const Api& api, cudnnBackendDescriptorType_t type);
    Desc(const Desc&) = delete;
    Desc(Desc&& o) noexcept;
    ~Desc();
    cudnnBackendDescriptor_t get() const { return m_d; }
    cudnnBackendDescriptor_t release();
    template <typename T>
    Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values, int64_t count = 1) {
        return setRaw(name, type, values, count);
    }
    Desc& set(cudnnBackendAttributeName_t name, const Desc& d);
    Status finalize(const char* what);

private:
    Desc& setRaw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const void* values, int64_t count);
    const Api* m_api;
    cudnnBackendDescriptor_t m_d = nullptr;
    cudnnStatus_t m_status = CUDNN_STATUS_SUCCESS;
    int m_where = -1;
};

cudnnDataType_t dataType(dk::ElemType t);

// A tensor descriptor, finalized. byValue: a scalar passed as a host value in the variant pack.
Result<Desc> tensor(const Api& api, int64_t uid, cudnnDataType_t type, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides, bool isVirtual, bool byValue = false);
// A pointwise operation y = mode(x[, b]), float32 math.
Result<Desc> pointwise(const Api& api, cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc& y);

// An operation graph over `ops`, finalized.
Result<Desc> operationGraph(const Api& api, void* handle, const std::vector<const Desc*>& ops);

struct Candidate {
    Desc plan;
    int64_t workspace = 0;
    int index = 0;  // its place among the heuristics' proposals, from 0
};
struct Candidates {
    std::vector<Candidate> plans;
    int64_t proposed = 0;
};
// The first kCandidatesTimed engine configs cuDNN's heuristics (mode A) propose for `graph`
// that build as execution plans within kMaxWorkspaceBytes: never inputs converted down, and
// with strictFloat32 no tensor cores. An error where none builds.
Result<Candidates> candidatePlans(const Api& api, void* handle, const Desc& graph, bool strictFloat32);

// Runs `plan` with the variant pack's tensors (host pointers for by-value scalars).
Status execute(const Api& api, void* handle, cudnnBackendDescriptor_t plan, const std::vector<int64_t>& uids,
               const std::vector<void*>& pointers, void* workspace);

// A host copy, as floats, of a device buffer's first and last 8 MiB: what a candidate's output
// is compared on (a wrong layout or engine shows everywhere; the ends catch a bad edge tile).
Result<std::vector<float>> sample(const void* data, size_t bytes, dk::ElemType type, cudaStream_t stream);

// The fastest candidate whose output agrees with `expected`: each run once through `run`
// (a runtime-fused engine compiles its kernel then), sampled, compared within `tolerance` of
// the expected output's largest magnitude, then timed once.
struct Choice {
    size_t index = 0;
    float ms = 0.f;
    std::string dropped;  // candidates whose output disagreed, for the log
};
using Workspace = std::function<Result<void*>(size_t bytes)>;
Result<Choice> fastestAgreeing(const std::vector<Candidate>& candidates, cudaStream_t stream,
                               const Workspace& workspace,
                               const std::function<Status(cudnnBackendDescriptor_t plan, void* scratch)>& run,
                               const std::function<Result<std::vector<float>>()>& produced,
                               const std::vector<float>& expected, double tolerance);

// "engine config 3 of 8 proposed, 4 built, fastest in 0.412 ms": what was chosen, for logs.
std::string describeChoice(const Candidates& c, const Choice& choice);

}  // namespace fsc::cudnn_graph
