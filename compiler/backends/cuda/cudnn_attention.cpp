#include "compiler/backends/cuda/cudnn_attention.h"

#include <cstdio>
#include <deque>
#include <cstdlib>

#include "compiler/backends/cuda/cudnn_graph_support.h"

namespace fsc {
namespace {

using namespace cudnn_graph;

enum Uid : int64_t { kQ = 1, kK, kV, kO, kBias, kScale, kS = 10, kScaled, kBiased, kMax, kCentred, kExp, kSum, kP };

// Probabilities rounded to float16 before the second product, against the warp kernel's float32
// ones: about 1e-3 of the output's magnitude; a wrong engine is off by the magnitude itself.
constexpr double kAgreement = 2e-2;

std::string shapeKey(const FusedAttentionCall& c) {
    std::string key = std::to_string(int(c.type));
    for (int64_t v : {c.batch, c.heads, c.sq, c.skv, c.d, c.dv}) key += "," + std::to_string(v);
    for (const int64_t* s : {c.qStrides, c.kStrides, c.vStrides, c.oStrides})
        for (int i = 0; i < 4; ++i) key += (i ? "." : "/") + std::to_string(s[i]);
    if (c.bias)
        for (int i = 0; i < 4; ++i) key += (i ? "." : "/bias") + std::to_string(c.biasStrides[i]);
    return key;
}

size_t outputBytes(const FusedAttentionCall& c) { return size_t(c.batch * c.heads * c.sq * c.dv) * size_t(dk::elemBytes(c.type)); }

// O is written whole (a permutation of a packed tensor): the samples compared cover no gaps.
bool outputPacked(const FusedAttentionCall& c) {
    int64_t last = 0;
    const int64_t dims[4] = {c.batch, c.heads, c.sq, c.dv};
    for (int i = 0; i < 4; ++i) last += (dims[i] - 1) * c.oStrides[i];
    return last + 1 == c.batch * c.heads * c.sq * c.dv;
}

struct Variant {
    std::vector<int64_t> uids;
    std::vector<void*> pointers;
};
// `scale` is passed by value: the pack holds its host address.
Variant variantOf(const FusedAttentionCall& c, float* scale) {
    Variant v;
    v.uids = {kQ, kK, kV, kO, kScale};
    v.pointers = {const_cast<void*>(c.q), const_cast<void*>(c.k), const_cast<void*>(c.v), c.o, scale};
    if (c.bias) {
        v.uids.push_back(kBias);
        v.pointers.push_back(const_cast<void*>(c.bias));
    }
    return v;
}

Status executePlan(const Api& api, void* handle, cudnnBackendDescriptor_t plan, const FusedAttentionCall& c,
                   void* workspace) {
    float scale = c.scale;
    const Variant v = variantOf(c, &scale);
    return execute(api, handle, plan, v.uids, v.pointers, workspace);
}

// The operation graph's nodes and the tensors they name, alive until the graph is built.
struct GraphParts {
    std::deque<Desc> tensors, ops;  // a deque: pointers to its elements stay valid
    const Desc* add(Result<Desc>&& d, std::deque<Desc>& into, Status* failed) {
        if (!d) {
            if (failed->isOk()) *failed = d.status();
            return nullptr;
        }
        into.push_back(std::move(*d));
        return &into.back();
    }
};

Result<Desc> matmul(const Api& api, const Desc& a, const Desc& b, const Desc& c) {
    Desc desc(api, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    desc.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute);
    FSC_RETURN_IF_ERROR(desc.finalize("matmul descriptor"));
    Desc op(api, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, desc);
    FSC_RETURN_IF_ERROR(op.finalize("matmul operation"));
    return op;
}

Result<Desc> reduction(const Api& api, cudnnReduceTensorOp_t mode, const Desc& x, const Desc& y) {
    Desc desc(api, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    desc.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute);
    FSC_RETURN_IF_ERROR(desc.finalize("reduction descriptor"));
    Desc op(api, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc);
    FSC_RETURN_IF_ERROR(op.finalize("reduction operation"));
    return op;
}

// The graph of the header's comment for the call's shape.
Result<Desc> attentionGraph(const Api& api, void* handle, const FusedAttentionCall& c, GraphParts& parts) {
    const cudnnDataType_t io = dataType(c.type), f32 = CUDNN_DATA_FLOAT;
    const int64_t b = c.batch, h = c.heads;
    const std::vector<int64_t> scores{b, h, c.sq, c.skv}, scoreStrides{h * c.sq * c.skv, c.sq * c.skv, c.skv, 1};
    const std::vector<int64_t> rows{b, h, c.sq, 1}, rowStrides{h * c.sq, c.sq, 1, 1};
    Status failed = Status::ok();
    auto t = [&](int64_t uid, cudnnDataType_t type, std::vector<int64_t> dims, std::vector<int64_t> strides,
                 bool isVirtual = false, bool byValue = false) {
        return parts.add(tensor(api, uid, type, dims, strides, isVirtual, byValue), parts.tensors, &failed);
    };
    auto s4 = [](const int64_t* s) { return std::vector<int64_t>{s[0], s[1], s[2], s[3]}; };
    const Desc* q = t(kQ, io, {b, h, c.sq, c.d}, s4(c.qStrides));
    // K^T [d, skv]: K's dims and strides with the last two swapped, as cuDNN's frontend does.
    const Desc* kt = t(kK, io, {b, h, c.d, c.skv}, {c.kStrides[0], c.kStrides[1], c.kStrides[3], c.kStrides[2]});
    const Desc* v = t(kV, io, {b, h, c.skv, c.dv}, s4(c.vStrides));
    const Desc* o = t(kO, io, {b, h, c.sq, c.dv}, s4(c.oStrides));
    const Desc* scale = t(kScale, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    const Desc* bias = nullptr;
    if (c.bias) {  // a zero stride broadcasts: cuDNN's pointwise nodes broadcast dims of 1
        std::vector<int64_t> dims = scores, strides = s4(c.biasStrides);
        for (int i = 0; i < 4; ++i)
            if (strides[size_t(i)] == 0) dims[size_t(i)] = 1;
        bias = t(kBias, io, dims, strides);
    }
    const Desc* s = t(kS, f32, scores, scoreStrides, true);
    const Desc* scaled = t(kScaled, f32, scores, scoreStrides, true);
    const Desc* biased = c.bias ? t(kBiased, f32, scores, scoreStrides, true) : scaled;
    const Desc* max = t(kMax, f32, rows, rowStrides, true);
    const Desc* centred = t(kCentred, f32, scores, scoreStrides, true);
    const Desc* exp = t(kExp, f32, scores, scoreStrides, true);
    const Desc* sum = t(kSum, f32, rows, rowStrides, true);
    // The second product takes P in the operands' type (cuDNN's rule for its A operand).
    const Desc* p = t(kP, io, scores, scoreStrides, true);
    FSC_RETURN_IF_ERROR(failed);

    auto op = [&](Result<Desc>&& d) { parts.add(std::move(d), parts.ops, &failed); };
    op(matmul(api, *q, *kt, *s));
    op(pointwise(api, CUDNN_POINTWISE_MUL, *s, scale, *scaled));
    if (bias) op(pointwise(api, CUDNN_POINTWISE_ADD, *scaled, bias, *biased));
    op(reduction(api, CUDNN_REDUCE_TENSOR_MAX, *biased, *max));
    op(pointwise(api, CUDNN_POINTWISE_SUB, *biased, max, *centred));
    op(pointwise(api, CUDNN_POINTWISE_EXP, *centred, nullptr, *exp));
    op(reduction(api, CUDNN_REDUCE_TENSOR_ADD, *exp, *sum));
    op(pointwise(api, CUDNN_POINTWISE_DIV, *exp, sum, *p));
    op(matmul(api, *p, *v, *o));
    FSC_RETURN_IF_ERROR(failed);
    std::vector<const Desc*> ops;
    for (const Desc& d : parts.ops) ops.push_back(&d);
    return operationGraph(api, handle, ops);
}

}  // namespace

class CudnnAttention::Plan {
public:
    Plan(const Api& api, void* handle, Candidate&& chosen, std::string choice)
        : m_api(api), m_handle(handle), m_workspaceBytes(chosen.workspace), m_plan(chosen.plan.release()),
          m_choice(std::move(choice)) {}
    ~Plan() { m_api.cudnnBackendDestroyDescriptor(m_plan); }
    Status execute(const FusedAttentionCall& c, const CudnnConvolution::Workspace& workspace) const {
        void* scratch = nullptr;
        if (m_workspaceBytes) {
            auto got = workspace(size_t(m_workspaceBytes));
            if (!got) return got.status().withContext("cuDNN's workspace of " + std::to_string(m_workspaceBytes) + " bytes");
            scratch = *got;
        }
        return executePlan(m_api, m_handle, m_plan, c, scratch);
    }
    const std::string& choice() const { return m_choice; }

private:
    const Api& m_api;
    void* m_handle;
    int64_t m_workspaceBytes;
    cudnnBackendDescriptor_t m_plan;
    std::string m_choice;
};

namespace {

// A plan for the call's shape, its engine checked against the warp-per-row kernel's output.
Result<std::unique_ptr<CudnnAttention::Plan>> buildPlan(const CudnnConvolution& dnn, const FusedAttentionCall& c,
                                                        const CudnnConvolution::Workspace& workspace,
                                                        const CudnnConvolution::Launcher& launch,
                                                        const CudnnConvolution::Memory& memory) {
    if (!outputPacked(c)) return Status(ErrorCode::Unsupported, "the output is not a packed tensor");
    if (c.skv > dk::kAttentionMaxKeys)
        return Status(ErrorCode::Unsupported, "more keys than the reference kernel takes");
    const Api& api = dnn.api();
    GraphParts parts;
    auto graph = attentionGraph(api, dnn.handle(), c, parts);
    if (!graph) return graph.status();
    auto candidates = candidatePlans(api, dnn.handle(), *graph, false);
    if (!candidates) return candidates.status();

    const size_t bytes = outputBytes(c);
    auto reference = memory.allocate(bytes);
    if (!reference) return reference.status().withContext("the reference output the engines are checked against");
    std::vector<float> expected;
    {
        Status made = launch(attentionRowsLaunch(c, *reference));
        auto sampled = made ? sample(*reference, bytes, c.type, dnn.stream()) : Result<std::vector<float>>(made);
        cudaStreamSynchronize(dnn.stream());
        memory.release(*reference);
        if (!sampled) return sampled.status().withContext("the reference kernel the engines are checked against");
        expected = std::move(*sampled);
    }
    auto choice = fastestAgreeing(
        candidates->plans, dnn.stream(), workspace,
        [&](cudnnBackendDescriptor_t plan, void* scratch) { return executePlan(api, dnn.handle(), plan, c, scratch); },
        [&]() { return sample(c.o, bytes, c.type, dnn.stream()); }, expected, kAgreement);
    if (!choice) return choice.status();
    std::string text = describeChoice(*candidates, *choice);
    return std::make_unique<CudnnAttention::Plan>(api, dnn.handle(), std::move(candidates->plans[choice->index]),
                                                  std::move(text));
}

}  // namespace

CudnnAttention::CudnnAttention(const CudnnConvolution& dnn) : m_dnn(dnn) {}

CudnnAttention::~CudnnAttention() = default;

Status CudnnAttention::run(const FusedAttentionCall& c, const CudnnConvolution::Workspace& workspace,
                           const CudnnConvolution::Launcher& launch, const CudnnConvolution::Memory& memory,
                           bool capturing) {
    FSC_RETURN_IF_ERROR(checkFusedAttentionCall(c));
    const std::string key = shapeKey(c);
    const Plan* plan = nullptr;
    bool planned = false;
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_plans.find(key); it != m_plans.end()) {
            planned = true;
            plan = it->second.get();
        }
    }
    if (!planned) {
        // Planning runs candidates and synchronizes: never inside a capture.
        if (capturing) return Status(ErrorCode::Unsupported, "fused attention: shape first seen while capturing");
        auto built = buildPlan(m_dnn, c, workspace, launch, memory);
        // FUSESCOPE_CUDNN_LOG=1: each shape's route on stderr, for the device kit's logs.
        if (std::getenv("FUSESCOPE_CUDNN_LOG"))
            std::fprintf(stderr, "cuDNN attention %s: %s\n", key.c_str(),
                         built ? ("fused, " + (*built)->choice()).c_str() : ("GEMMs: " + built.status().message()).c_str());
        std::lock_guard lock(m_mutex);
        plan = m_plans.emplace(key, built ? std::move(*built) : nullptr).first->second.get();
    }
    if (!plan) return Status(ErrorCode::Unsupported, "fused attention: cuDNN has no engine for this shape");
    return plan->execute(c, workspace);
}

}  // namespace fsc
