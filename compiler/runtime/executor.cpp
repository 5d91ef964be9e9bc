#include "compiler/runtime/executor.h"

#include <chrono>
#include <cstdlib>
#include <set>

#include "compiler/runtime/half.h"

namespace fsc {

namespace {

int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

size_t alignedBytes(const RtTensor& t) { return (t.bytes() + 63) / 64 * 64; }

bool isHalf(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

RtTensor widen(const RtTensor& t) {
    RtTensor out = allocateTensor(DType::Float32, t.dims);
    const uint16_t* src = t.as<uint16_t>();
    float* dst = out.as<float>();
    const int64_t n = t.numel();
    if (t.dtype == DType::Float16)
        for (int64_t i = 0; i < n; ++i) dst[i] = halfToFloat(src[i]);
    else
        for (int64_t i = 0; i < n; ++i) dst[i] = bfloat16ToFloat(src[i]);
    return out;
}

void narrow(const RtTensor& wide, RtTensor& out) {
    const float* src = wide.as<float>();
    uint16_t* dst = out.as<uint16_t>();
    const int64_t n = wide.numel();
    if (out.dtype == DType::Float16)
        for (int64_t i = 0; i < n; ++i) dst[i] = floatToHalf(src[i]);
    else
        for (int64_t i = 0; i < n; ++i) dst[i] = floatToBfloat16(src[i]);
}

}  // namespace

struct Executor::SignaturePlan {
    MemoryPlan memory;
    std::vector<long> slotOffset;  // by value index; -1 when the value has no slot
    std::vector<size_t> slotBytes;
    std::shared_ptr<void> arena;
    uint8_t* base = nullptr;
};

// The values of one run of one graph.
class Executor::Frame : public ValueScope {
public:
    Frame(const Graph& graph, const ValueScope* parent)
        : m_graph(graph), m_parent(parent), ptr(graph.valueCount(), nullptr),
          owned(graph.valueCount()) {}
    const RtTensor* find(const std::string& name) const override {
        const ValueId id = m_graph.findValue(name);
        if (id.valid() && ptr[id.index]) return ptr[id.index];
        return m_parent ? m_parent->find(name) : nullptr;
    }
    RtTensor* produce(ValueId v, DType dtype, std::vector<int64_t> dims, const SignaturePlan* sig) {
        RtTensor& t = owned[v.index];
        t = RtTensor{};
        t.dtype = dtype;
        t.dims = std::move(dims);
        const long offset = sig ? sig->slotOffset[v.index] : -1;
        if (offset >= 0 && dtype != DType::String && t.bytes() <= sig->slotBytes[v.index]) {
            t.data = sig->base + offset;
        } else {
            t = allocateTensor(dtype, std::move(t.dims));
        }
        ptr[v.index] = &t;
        return &t;
    }

    const Graph& m_graph;
    const ValueScope* m_parent;
    std::vector<const RtTensor*> ptr;
    std::vector<RtTensor> owned;
};

class Executor::StepContext : public KernelContext {
public:
    StepContext(Frame& frame, const PlanStep& step, const SignaturePlan* sig, ThreadPool& pool,
                const std::vector<RtTensor>& constants)
        : m_frame(frame), m_step(step), m_sig(sig), m_pool(pool), m_constants(constants),
          m_scratch(step.outputs.size()), m_wide(step.outputs.size()) {}

    Status bindInputs() {
        m_inputs.resize(m_step.inputs.size(), nullptr);
        for (size_t i = 0; i < m_step.inputs.size(); ++i) {
            const ValueId id = m_step.inputs[i];
            if (!id.valid()) continue;
            m_inputs[i] = m_frame.ptr[id.index];
            if (!m_inputs[i])
                return Status(ErrorCode::Internal, "input '" + m_frame.m_graph.value(id).name +
                                                       "' has no value at run time");
            if (m_step.def->halfViaFloat && isHalf(m_inputs[i]->dtype)) m_narrowTo = m_inputs[i]->dtype;
        }
        if (m_narrowTo != DType::Undefined) {
            m_widened.reserve(m_inputs.size());
            for (auto& in : m_inputs)
                if (in && isHalf(in->dtype)) {
                    m_widened.push_back(widen(*in));
                    in = &m_widened.back();
                }
        }
        return Status::ok();
    }

    // Narrows float32 results back to the half type the inputs had.
    void finish() {
        for (size_t i = 0; i < m_wide.size(); ++i) {
            if (!m_wide[i].defined() || !m_step.outputs[i].valid()) continue;
            RtTensor* out = m_frame.produce(m_step.outputs[i], m_narrowTo, m_wide[i].dims, m_sig);
            narrow(m_wide[i], *out);
        }
    }

    size_t inputCount() const override { return m_inputs.size(); }
    const RtTensor* input(size_t i) const override {
        return i < m_inputs.size() ? m_inputs[i] : nullptr;
    }
    bool inputConstant(size_t i) const override {
        if (i >= m_inputs.size() || !m_step.inputs[i].valid()) return false;
        return m_inputs[i] == &m_constants[m_step.inputs[i].index];
    }
    size_t outputCount() const override { return m_step.outputs.size(); }
    bool outputWanted(size_t i) const override {
        return i < m_step.outputs.size() && m_step.outputs[i].valid();
    }
    Result<RtTensor*> output(size_t i, DType dtype, std::vector<int64_t> dims) override {
        if (i >= m_step.outputs.size())
            return Status(ErrorCode::InvalidModel, where() + ": output " + std::to_string(i) +
                                                       " is not declared by the node");
        for (int64_t d : dims)
            if (d < 0)
                return Status(ErrorCode::InvalidModel,
                              where() + ": computed a negative output dim for output " +
                                  std::to_string(i));
        if (m_narrowTo != DType::Undefined && dtype == DType::Float32) {
            m_wide[i] = allocateTensor(dtype, std::move(dims));
            return &m_wide[i];
        }
        if (!m_step.outputs[i].valid()) {
            m_scratch[i] = allocateTensor(dtype, std::move(dims));
            return &m_scratch[i];
        }
        return m_frame.produce(m_step.outputs[i], dtype, std::move(dims), m_sig);
    }
    ThreadPool& pool() override { return m_pool; }
    const ValueScope* scope() const override { return &m_frame; }
    std::string where() const override {
        return "node '" + m_step.nodeName + "' (" + m_step.opType + ")";
    }

private:
    Frame& m_frame;
    const PlanStep& m_step;
    const SignaturePlan* m_sig;
    ThreadPool& m_pool;
    const std::vector<RtTensor>& m_constants;
    std::vector<const RtTensor*> m_inputs;
    std::vector<RtTensor> m_widened;
    std::vector<RtTensor> m_scratch;
    std::vector<RtTensor> m_wide;
    DType m_narrowTo = DType::Undefined;
};

Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::create(const Model& model,
                                                   const ExecutorOptions& options) {
    auto executor = create(model.graph, model.opsetImports, options);
    if (!executor) return executor.status().withContext(model.path);
    return executor;
}

Result<std::unique_ptr<Executor>> Executor::create(
    std::shared_ptr<const Graph> graph, const std::vector<std::pair<std::string, int64_t>>& opsetImports,
    const ExecutorOptions& options) {
    auto context = std::make_shared<LoweringContext>();
    context->opsets = opsetImports;
    context->registry = &KernelRegistry::cpu();
    context->backend = options.backend;
    context->pool = std::make_shared<ThreadPool>(options.threads);
    if (options.backend != Backend::Cpu)
        return Status(ErrorCode::Unsupported, "the CUDA backend is not built yet; use --backend cpu");
    return createForGraph(std::move(graph), std::move(context), false);
}

Result<std::unique_ptr<Executor>> Executor::createForGraph(
    std::shared_ptr<const Graph> graph, std::shared_ptr<const LoweringContext> context,
    bool feedEveryInput) {
    auto plan = lowerGraph(graph, context);
    if (!plan) return plan.status();
    std::unique_ptr<Executor> e(new Executor());
    e->m_plan = std::move(*plan);
    e->m_context = std::move(context);
    e->m_constants.resize(graph->valueCount());
    e->m_isGraphOutput.assign(graph->valueCount(), false);
    for (ValueId id : graph->outputs) e->m_isGraphOutput[id.index] = true;
    for (uint32_t i = 0; i < graph->valueCount(); ++i) {
        const Value& v = graph->value(ValueId(i));
        // IR < 4 lists initializers as graph inputs too: they are defaults, not fed.
        if (v.initializer) {
            auto t = tensorFromConstant(*v.initializer);
            if (!t) return t.status().withContext("initializer '" + v.name + "'");
            e->m_constants[i] = std::move(*t);
        } else if (v.kind == Value::Kind::Initializer) {
            return Status(ErrorCode::Unsupported,
                          "initializer '" + v.name + "' is sparse; densify it first");
        } else if (v.kind == Value::Kind::OuterScope) {
            e->m_outerValues.push_back(ValueId(i));
        }
    }
    for (ValueId id : graph->inputs)
        if (feedEveryInput || !e->m_constants[id.index].defined()) e->m_feeds.push_back(id);
    FSC_RETURN_IF_ERROR(e->foldConstantSteps());
    return e;
}

namespace {
// Ops whose result is not a function of their inputs, and ops with subgraphs.
bool foldable(const PlanStep& step, const Graph& graph) {
    static const std::set<std::string> never{"RandomNormal", "RandomUniform", "RandomNormalLike",
                                             "RandomUniformLike", "Multinomial", "Bernoulli",
                                             "Dropout", "If", "Loop", "Scan"};
    const Node& node = graph.node(step.node);
    return step.backend == Backend::Cpu && node.domain.empty() && !never.count(node.opType) &&
           node.capturedNames().empty();
}
}  // namespace

// Steps reading only constants (weights shared through Identity, shape arithmetic on
// constant shapes, Constant nodes) run once here instead of on every run.
Status Executor::foldConstantSteps() {
    const Graph& g = graph();
    Frame frame(g, nullptr);
    for (uint32_t i = 0; i < g.valueCount(); ++i)
        if (m_constants[i].defined()) frame.ptr[i] = &m_constants[i];
    ThreadPool& pool = *m_context->pool;
    pool.applyToCallingThread();
    std::vector<PlanStep> kept;
    for (PlanStep& step : m_plan.steps) {
        bool constant = foldable(step, g);
        for (ValueId in : step.inputs) constant = constant && (!in.valid() || m_constants[in.index].defined());
        for (ValueId out : step.outputs) constant = constant && out.valid();
        if (constant) {
            StepContext ctx(frame, step, nullptr, pool, m_constants);
            FSC_RETURN_IF_ERROR(ctx.bindInputs().withContext(ctx.where()));
            Status status = step.kernel->compute(ctx);
            if (!status.isOk())
                return status.message().rfind("node '", 0) == 0 ? status : status.withContext(ctx.where());
            ctx.finish();
            for (ValueId out : step.outputs) {
                if (!frame.ptr[out.index])
                    return Status(ErrorCode::Internal, ctx.where() + ": did not produce '" + g.value(out).name + "'");
                RtTensor& owned = frame.owned[out.index];
                m_constants[out.index] = &owned == frame.ptr[out.index] && owned.owner ? owned : cloneTensor(*frame.ptr[out.index]);
                frame.ptr[out.index] = &m_constants[out.index];
            }
            m_plan.foldedAtLoad.push_back(step.nodeName);
        } else {
            kept.push_back(std::move(step));
        }
    }
    m_plan.steps = std::move(kept);
    m_plan.computeLastUse();
    return Status::ok();
}

Status Executor::checkFeeds(const std::vector<RtTensor>& feeds) const {
    if (feeds.size() != m_feeds.size())
        return Status(ErrorCode::InvalidArgument,
                      "expected " + std::to_string(m_feeds.size()) + " inputs, got " +
                          std::to_string(feeds.size()));
    for (size_t i = 0; i < feeds.size(); ++i) {
        const Value& v = graph().value(m_feeds[i]);
        const RtTensor& t = feeds[i];
        const ValueType& declared = v.type;
        if (declared.kind != ValueType::Kind::Tensor && declared.kind != ValueType::Kind::Unknown)
            return Status(ErrorCode::Unsupported, "input '" + v.name + "' is a " +
                                                      declared.toString() +
                                                      ", which the runtime does not handle");
        auto mismatch = [&](const std::string& what) {
            return Status(ErrorCode::InvalidArgument, "input '" + v.name + "': expected " +
                                                          declared.toString() + ", got " +
                                                          t.typeString() + " (" + what + ")");
        };
        if (declared.elemType != DType::Undefined && t.dtype != declared.elemType)
            return mismatch("wrong dtype");
        if (!declared.shape.rankKnown()) continue;
        if (declared.shape.rank() != t.rank()) return mismatch("wrong rank");
        for (size_t d = 0; d < t.rank(); ++d)
            if (declared.shape[d].isKnown() && declared.shape[d].size() != t.dims[d])
                return mismatch("dim " + std::to_string(d) + " differs");
    }
    return Status::ok();
}

Result<std::vector<RtTensor>> Executor::run(std::vector<RtTensor> feeds, const RunOptions& options,
                                            const ValueScope* outer) {
    FSC_RETURN_IF_ERROR(checkFeeds(feeds));
    const Graph& g = graph();

    std::vector<int64_t> signature;
    for (const RtTensor& t : feeds) {
        signature.push_back(int64_t(t.dtype));
        signature.push_back(int64_t(t.rank()));
        signature.insert(signature.end(), t.dims.begin(), t.dims.end());
    }
    auto cached = m_signatures.find(signature);
    const SignaturePlan* sig = cached == m_signatures.end() ? nullptr : cached->second.get();
    std::vector<size_t> recorded;  // sizes seen by a run with no plan yet
    if (!sig) recorded.assign(g.valueCount(), 0);

    Frame frame(g, outer);
    for (uint32_t i = 0; i < g.valueCount(); ++i)
        if (m_constants[i].defined()) frame.ptr[i] = &m_constants[i];
    for (size_t i = 0; i < feeds.size(); ++i) {
        frame.owned[m_feeds[i].index] = std::move(feeds[i]);
        frame.ptr[m_feeds[i].index] = &frame.owned[m_feeds[i].index];
    }
    for (ValueId id : m_outerValues) {
        const std::string& name = g.value(id).name;
        const RtTensor* t = outer ? outer->find(name) : nullptr;
        if (!t)
            return Status(ErrorCode::InvalidModel,
                          "graph '" + g.name + "' reads '" + name + "' from an enclosing graph, "
                          "which has no such value");
        frame.ptr[id.index] = t;
    }

    ThreadPool& pool = *m_context->pool;
    if (m_context->depth == 0) pool.applyToCallingThread();
    for (size_t s = 0; s < m_plan.steps.size(); ++s) {
        if (options.cancel && options.cancel->load())
            return Status(ErrorCode::InvalidArgument, "run cancelled");
        const PlanStep& step = m_plan.steps[s];
        StepContext ctx(frame, step, sig, pool, m_constants);
        FSC_RETURN_IF_ERROR(ctx.bindInputs().withContext(ctx.where()));
        LaunchEvent event;
        if (options.listener) {
            event.node = step.node;
            event.nodeName = &step.nodeName;
            event.opType = &step.opType;
            event.kernelId = &step.kernelId;
            event.backend = step.backend;
            event.depth = m_context->depth;
            event.startNs = nowNs();
            options.listener->onBegin(event);
        }
        Status status = step.kernel->compute(ctx);
        if (options.listener) {  // closes what onBegin opened, even when the kernel failed
            event.endNs = nowNs();
            options.listener->onLaunch(event);
        }
        if (!status.isOk())
            return status.message().rfind("node '", 0) == 0 ? status
                                                            : status.withContext(ctx.where());
        ctx.finish();
        for (ValueId out : step.outputs) {
            if (!out.valid()) continue;
            if (!frame.ptr[out.index])
                return Status(ErrorCode::Internal, ctx.where() + ": did not produce output '" +
                                                       g.value(out).name + "'");
            if (!sig) recorded[out.index] = std::max(recorded[out.index], alignedBytes(*frame.ptr[out.index]));
        }
        // Release what no later step reads (graph outputs are kept).
        for (ValueId in : step.inputs)
            if (in.valid() && m_plan.lastUse[in.index] == long(s) && !m_isGraphOutput[in.index] &&
                frame.owned[in.index].defined()) {
                frame.owned[in.index] = RtTensor{};
                frame.ptr[in.index] = nullptr;
            }
    }

    std::vector<RtTensor> outputs;
    for (ValueId id : g.outputs) {
        const RtTensor* t = frame.ptr[id.index];
        if (!t)
            return Status(ErrorCode::InvalidModel,
                          "graph output '" + g.value(id).name + "' was never computed");
        RtTensor& owned = frame.owned[id.index];
        if (t == &owned && owned.owner)
            outputs.push_back(owned);  // shares storage; the frame goes away
        else
            outputs.push_back(cloneTensor(*t));
    }

    if (!sig) {
        // Lay out the arena for this signature from the sizes just seen.
        std::vector<BufferLifetime> lifetimes;
        for (size_t s = 0; s < m_plan.steps.size(); ++s)
            for (ValueId out : m_plan.steps[s].outputs) {
                if (!out.valid() || m_isGraphOutput[out.index] || !recorded[out.index]) continue;
                const long last = std::max(m_plan.lastUse[out.index], long(s));
                lifetimes.push_back({out, recorded[out.index], s, size_t(last)});
            }
        auto plan = std::make_unique<SignaturePlan>();
        plan->memory = planMemory(lifetimes);
        plan->slotOffset.assign(g.valueCount(), -1);
        plan->slotBytes.assign(g.valueCount(), 0);
        for (const auto& a : plan->memory.assignments) {
            plan->slotOffset[a.buffer.value.index] = long(a.offset);
            plan->slotBytes[a.buffer.value.index] = a.buffer.bytes;
        }
        const size_t arenaBytes = std::max<size_t>(plan->memory.arenaBytes, 64);
        void* arena = std::aligned_alloc(64, (arenaBytes + 63) / 64 * 64);
        if (!arena) return Status(ErrorCode::Internal, "out of memory for a " +
                                                           std::to_string(arenaBytes) + "-byte arena");
        plan->arena = std::shared_ptr<void>(arena, [](void* p) { std::free(p); });
        plan->base = static_cast<uint8_t*>(arena);
        if (m_signatures.size() >= 16) m_signatures.clear();  // unbounded shape churn
        m_last = plan.get();
        m_signatures[signature] = std::move(plan);
    } else {
        m_last = sig;
    }
    return outputs;
}

const MemoryPlan* Executor::lastMemoryPlan() const { return m_last ? &m_last->memory : nullptr; }

}  // namespace fsc
