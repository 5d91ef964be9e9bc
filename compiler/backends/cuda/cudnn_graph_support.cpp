#include "compiler/backends/cuda/cudnn_graph_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fsc::cudnn_graph {

Desc::Desc(const Api& api, cudnnBackendDescriptorType_t type) : m_api(&api) {
    m_status = api.cudnnBackendCreateDescriptor(type, &m_d);
}

Desc::Desc(Desc&& o) noexcept : m_api(o.m_api), m_d(o.m_d), m_status(o.m_status), m_where(o.m_where) { o.m_d = nullptr; }

Desc::~Desc() {
    if (m_d) m_api->cudnnBackendDestroyDescriptor(m_d);
}

cudnnBackendDescriptor_t Desc::release() {
    cudnnBackendDescriptor_t d = m_d;
    m_d = nullptr;
    return d;
}

Desc& Desc::setRaw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const void* values, int64_t count) {
    if (m_status == CUDNN_STATUS_SUCCESS) {
        m_status = m_api->cudnnBackendSetAttribute(m_d, name, type, count, values);
        if (m_status != CUDNN_STATUS_SUCCESS) m_where = int(name);
    }
    return *this;
}

Desc& Desc::set(cudnnBackendAttributeName_t name, const Desc& d) {
    cudnnBackendDescriptor_t raw = d.get();
    return setRaw(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw, 1);
}

Status Desc::finalize(const char* what) {
    if (m_status == CUDNN_STATUS_SUCCESS) m_status = m_api->cudnnBackendFinalize(m_d);
    if (m_status == CUDNN_STATUS_SUCCESS) return Status::ok();
    return Status(ErrorCode::Unsupported, std::string(what) + (m_where >= 0 ? " (attribute " + std::to_string(m_where) + ")" : "") +
                                              ": " + m_api->cudnnGetErrorString(m_status));
}

cudnnDataType_t dataType(dk::ElemType t) {
    return t == dk::ElemType::F16 ? CUDNN_DATA_HALF : t == dk::ElemType::BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

Result<Desc> tensor(const Api& api, int64_t uid, cudnnDataType_t type, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides, bool isVirtual, bool byValue) {
    Desc t(api, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const bool virt = isVirtual, value = byValue;
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), int64_t(dims.size()))
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), int64_t(strides.size()))
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &kAlignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &virt);
    if (value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &value);
    FSC_RETURN_IF_ERROR(t.finalize(isVirtual ? "virtual tensor" : "tensor descriptor"));
    return t;
}

Result<Desc> pointwise(const Api& api, cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc& y) {
    Desc op(api, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    op.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision);
    FSC_RETURN_IF_ERROR(op.finalize("pointwise descriptor"));
    Desc node(api, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    node.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, op).set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) node.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    node.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    FSC_RETURN_IF_ERROR(node.finalize("pointwise operation"));
    return node;
}

Result<Desc> operationGraph(const Api& api, void* handle, const std::vector<const Desc*>& ops) {
    cudnnHandle_t h = static_cast<cudnnHandle_t>(handle);
    Desc graph(api, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> raw;
    for (const Desc* op : ops) raw.push_back(op->get());
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw.data(), int64_t(raw.size()))
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h);
    FSC_RETURN_IF_ERROR(graph.finalize("operation graph"));
    return graph;
}

namespace {

// Whether an engine config's numerical notes allow it: never inputs converted down (float32
// to float16), and for strict float32 no tensor cores (TF32), as PyTorch filters its engines.
bool allowed(const Api& api, cudnnBackendDescriptor_t config, bool strictFloat32) {
    Desc engine(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t raw = engine.get();
    int64_t count = 0;
    if (api.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                     &raw) != CUDNN_STATUS_SUCCESS)
        return false;
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    count = 0;
    if (api.cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                     CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS)
        return false;
    for (int64_t i = 0; i < count; ++i) {
        if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
        if (strictFloat32 && notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) return false;
    }
    return true;
}

// Whether a candidate's sample agrees with the reference's: the largest difference within
// `tolerance` of the reference's largest magnitude (NaN only where the reference has one).
bool agrees(const std::vector<float>& candidate, const std::vector<float>& reference, double tolerance, double* worst) {
    double scale = 0.0, diff = 0.0;
    for (float r : reference)
        if (std::isfinite(r)) scale = std::max(scale, double(std::fabs(r)));
    for (size_t i = 0; i < reference.size(); ++i) {
        const float r = reference[i], x = candidate[i];
        if (std::isnan(r) || std::isnan(x)) {
            if (std::isnan(r) != std::isnan(x)) diff = INFINITY;
            continue;
        }
        diff = std::max(diff, double(std::fabs(x - r)));
    }
    *worst = diff / std::max(scale, 1e-30);
    return *worst <= tolerance;
}

}  // namespace

Result<Candidates> candidatePlans(const Api& api, void* handle, const Desc& graph, bool strictFloat32) {
    cudnnHandle_t h = static_cast<cudnnHandle_t>(handle);
    Desc heuristics(api, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t heurMode = CUDNN_HEUR_MODE_A;
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph).set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &heurMode);
    FSC_RETURN_IF_ERROR(heuristics.finalize("engine heuristics"));
    int64_t proposed = 0;
    if (api.cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                     &proposed, nullptr) != CUDNN_STATUS_SUCCESS ||
        proposed <= 0)
        return Status(ErrorCode::Unsupported, "cuDNN's heuristics propose no engine");
    std::vector<Desc> configs;
    std::vector<cudnnBackendDescriptor_t> rawConfigs;
    configs.reserve(size_t(proposed));
    for (int64_t i = 0; i < proposed; ++i) {
        configs.emplace_back(api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        rawConfigs.push_back(configs.back().get());
    }
    int64_t returned = 0;
    if (api.cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     proposed, &returned, rawConfigs.data()) != CUDNN_STATUS_SUCCESS)
        return Status(ErrorCode::Unsupported, "cuDNN's heuristics results could not be read");
    Candidates out;
    out.proposed = returned;
    for (int64_t i = 0; i < returned && int(out.plans.size()) < kCandidatesTimed; ++i) {
        if (!allowed(api, rawConfigs[size_t(i)], strictFloat32)) continue;
        Desc plan(api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h)
            .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, &rawConfigs[size_t(i)]);
        if (!plan.finalize("execution plan")) continue;
        int64_t bytes = 0, count = 0;
        if (api.cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                         &bytes) != CUDNN_STATUS_SUCCESS ||
            bytes > kMaxWorkspaceBytes)
            continue;
        out.plans.push_back({std::move(plan), bytes, int(i)});
    }
    if (out.plans.empty())
        return Status(ErrorCode::Unsupported, std::to_string(returned) + " engines proposed, none builds for this graph");
    return out;
}

Status execute(const Api& api, void* handle, cudnnBackendDescriptor_t plan, const std::vector<int64_t>& uids,
               const std::vector<void*>& pointers, void* workspace) {
    Desc pack(api, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(), int64_t(uids.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(), int64_t(pointers.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace);
    FSC_RETURN_IF_ERROR(pack.finalize("variant pack"));
    if (cudnnStatus_t s = api.cudnnBackendExecute(static_cast<cudnnHandle_t>(handle), plan, pack.get());
        s != CUDNN_STATUS_SUCCESS)
        return Status(ErrorCode::Internal, std::string("cudnnBackendExecute: ") + api.cudnnGetErrorString(s));
    return Status::ok();
}

Result<std::vector<float>> sample(const void* data, size_t bytes, dk::ElemType type, cudaStream_t stream) {
    constexpr size_t kSampleBytes = size_t(8) << 20;
    const size_t head = std::min(bytes, kSampleBytes), tail = std::min(bytes - head, kSampleBytes);
    std::vector<uint8_t> raw(head + tail);
    const uint8_t* base = static_cast<const uint8_t*>(data);
    if (cudaMemcpyAsync(raw.data(), base, head, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
        (tail && cudaMemcpyAsync(raw.data() + head, base + bytes - tail, tail, cudaMemcpyDeviceToHost, stream) != cudaSuccess) ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
        cudaGetLastError();
        return Status(ErrorCode::Internal, "reading an output back failed");
    }
    const size_t width = size_t(dk::elemBytes(type)), count = raw.size() / width;
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = dk::loadFloat(raw.data(), type, int64_t(i));
    return values;
}

Result<Choice> fastestAgreeing(const std::vector<Candidate>& candidates, cudaStream_t stream, const Workspace& workspace,
                               const std::function<Status(cudnnBackendDescriptor_t, void*)>& run,
                               const std::function<Result<std::vector<float>>()>& produced,
                               const std::vector<float>& expected, double tolerance) {
    Choice choice;
    float bestMs = -1.f;
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (size_t i = 0; i < candidates.size(); ++i) {
        void* scratch = nullptr;
        if (candidates[i].workspace) {
            auto got = workspace(size_t(candidates[i].workspace));
            if (!got) continue;
            scratch = *got;
        }
        if (!run(candidates[i].plan.get(), scratch)) continue;
        auto out = produced();
        double worst = 0.0;
        if (!out || out->size() != expected.size() || !agrees(*out, expected, tolerance, &worst)) {
            char note[96];
            std::snprintf(note, sizeof note, "%sengine config %d off by %.3g", choice.dropped.empty() ? "" : ", ",
                          candidates[i].index + 1, out ? worst : double(INFINITY));
            choice.dropped += note;
            continue;
        }
        cudaEventRecord(start, stream);
        const bool ran = run(candidates[i].plan.get(), scratch).isOk();
        cudaEventRecord(stop, stream);
        float ms = 0.f;
        if (ran && cudaEventSynchronize(stop) == cudaSuccess && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess &&
            (bestMs < 0.f || ms < bestMs)) {
            bestMs = ms;
            choice.index = i;
        }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaGetLastError();  // a failed candidate's error is not the next call's
    if (bestMs < 0.f)
        return Status(ErrorCode::Unsupported, "no candidate engine ran and agreed with the reference" +
                                                  (choice.dropped.empty() ? "" : " (" + choice.dropped + ")"));
    choice.ms = bestMs;
    return choice;
}

std::string describeChoice(const Candidates& c, const Choice& choice) {
    char text[160];
    std::snprintf(text, sizeof text, "engine config %d of %lld proposed, %zu built, fastest in %.3f ms",
                  c.plans[choice.index].index + 1, static_cast<long long>(c.proposed), c.plans.size(), double(choice.ms));
    std::string s = text;
    if (!choice.dropped.empty()) s += "; dropped for disagreeing with the reference: " + choice.dropped;
    return s;
}

}  // namespace fsc::cudnn_graph
