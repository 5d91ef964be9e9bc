#include "compiler/runtime/executor.h"

#include <chrono>
#include <cstdlib>
#include <set>

#include "compiler/runtime/device.h"
#include "compiler/runtime/execution_provider.h"
#include "compiler/runtime/half.h"
#include "core/out_of_memory.h"

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
    MemoryPlan memory;        // host intermediates
    MemoryPlan deviceMemory;  // device values, graph outputs included (a CUDA Graph needs fixed addresses)
    std::vector<long> slotOffset;  // by value index; -1 when the value has no slot
    std::vector<size_t> slotBytes;
    std::vector<bool> slotOnDevice;
    std::shared_ptr<void> arena;
    uint8_t* base = nullptr;
    std::shared_ptr<void> deviceArena;
    uint8_t* deviceBase = nullptr;
    // The CUDA Graph of this signature, once captured: feeds are copied into `feedBuffers`,
    // the graph replays, and `outputs` (arena slots) are copied back.
    int graph = 0;
    bool graphFailed = false;
    // The same, captured under a listener that ties replayed work to plan nodes (a profiler),
    // for its graphReplayScope(): the plain graph was made without the listener watching.
    int listenedGraph = 0;
    uint64_t listenedScope = 0;
    bool listenedFailed = false;
    std::vector<RtTensor> feedBuffers;
    std::vector<RtTensor> graphOutputs;
};

namespace {

// A device block of its own for a value the plan did not foresee (and for the first run of
// a signature, which measures the sizes the plan is laid out from).
Result<RtTensor> allocateDeviceTensor(Device& device, DType dtype, std::vector<int64_t> dims) {
    RtTensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.onDevice = true;
    auto p = device.allocate(std::max<size_t>(t.bytes(), 1));
    if (!p) return p.status();
    t.data = *p;
    t.owner = std::shared_ptr<void>(*p, [&device](void* q) { device.release(q); });
    return t;
}

}  // namespace

Result<RtTensor> uploadToDevice(Device& device, const RtTensor& host) {
    if (host.onDevice) return host;
    if (host.dtype == DType::String) return Status(ErrorCode::Unsupported, "a string tensor cannot go to the device");
    auto t = allocateDeviceTensor(device, host.dtype, host.dims);
    if (!t) return t.status();
    FSC_RETURN_IF_ERROR(device.copyToDevice(t->data, host.data, host.bytes()));
    return t;
}

Result<RtTensor> downloadToHost(Device& device, const RtTensor& onDevice) {
    if (!onDevice.onDevice) return onDevice;
    RtTensor host = allocateTensor(onDevice.dtype, onDevice.dims);
    FSC_RETURN_IF_ERROR(device.copyToHost(host.data, onDevice.data, onDevice.bytes()));
    return host;
}

// The values of one run of one graph. On the CUDA backend a value lives where its producer
// ran; `mirror` holds its copy on the other side once a reader there asked for it.
class Executor::Frame : public ValueScope {
public:
    Frame(const Graph& graph, const ValueScope* parent, Device* device)
        : m_graph(graph), m_parent(parent), m_device(device), ptr(graph.valueCount(), nullptr),
          owned(graph.valueCount()), mirror(graph.valueCount()) {}
    const RtTensor* find(const std::string& name) const override {
        const ValueId id = m_graph.findValue(name);
        if (id.valid() && ptr[id.index]) return ptr[id.index]->onDevice ? &mirror[id.index] : ptr[id.index];
        return m_parent ? m_parent->find(name) : nullptr;
    }
    Result<RtTensor*> produce(ValueId v, DType dtype, std::vector<int64_t> dims, const SignaturePlan* sig,
                              bool onDevice) {
        RtTensor& t = owned[v.index];
        t = RtTensor{};
        mirror[v.index] = RtTensor{};
        t.dtype = dtype;
        t.dims = std::move(dims);
        const long offset = sig ? sig->slotOffset[v.index] : -1;
        if (offset >= 0 && dtype != DType::String && t.bytes() <= sig->slotBytes[v.index] &&
            sig->slotOnDevice[v.index] == onDevice) {
            t.data = (onDevice ? sig->deviceBase : sig->base) + offset;
            t.onDevice = onDevice;
        } else if (onDevice) {
            if (dtype == DType::String) return Status(ErrorCode::Unsupported, "strings cannot live on the device");
            auto d = allocateDeviceTensor(*m_device, dtype, std::move(t.dims));
            if (!d) return d.status().withContext("output '" + m_graph.value(v).name + "'");
            t = std::move(*d);
        } else {
            t = allocateOutputTensor(dtype, std::move(t.dims));
        }
        ptr[v.index] = &t;
        return &t;
    }
    void produceSequence(ValueId v, RtTensor sequence) {
        owned[v.index] = std::move(sequence);
        mirror[v.index] = RtTensor{};
        ptr[v.index] = &owned[v.index];
    }
    void releaseValue(ValueId v) {
        owned[v.index] = RtTensor{};
        mirror[v.index] = RtTensor{};
        ptr[v.index] = nullptr;
    }

    const Graph& m_graph;
    const ValueScope* m_parent;
    Device* m_device;
    std::vector<const RtTensor*> ptr;
    std::vector<RtTensor> owned;
    mutable std::vector<RtTensor> mirror;
};

class Executor::StepContext : public KernelContext {
public:
    StepContext(Executor& executor, Frame& frame, const PlanStep& step, const SignaturePlan* sig, ThreadPool& pool,
                const std::vector<RtTensor>& constants, TransferStats& transfers, const RunOptions* options)
        : m_executor(executor), m_frame(frame), m_step(step), m_sig(sig), m_pool(pool), m_constants(constants),
          m_transfers(transfers), m_options(options), m_scratch(step.outputs.size()), m_wide(step.outputs.size()) {}

    Status bindInputs() {
        const bool stepOnDevice = m_step.onDevice;
        m_inputs.resize(m_step.inputs.size(), nullptr);
        for (size_t i = 0; i < m_step.inputs.size(); ++i) {
            const ValueId id = m_step.inputs[i];
            if (!id.valid()) continue;
            m_inputs[i] = m_frame.ptr[id.index];
            if (!m_inputs[i])
                return Status(ErrorCode::Internal, "input '" + m_frame.m_graph.value(id).name +
                                                       "' has no value at run time");
            const bool wantDevice = stepOnDevice && !isHostInput(int(i));
            if (m_inputs[i]->onDevice != wantDevice) {
                auto moved = wantDevice ? toDevice(id) : toHost(id);
                if (!moved) return moved.status();
                m_inputs[i] = *moved;
            }
            if (m_step.def->halfViaFloat && isHalf(m_inputs[i]->dtype)) m_narrowTo = m_inputs[i]->dtype;
        }
        // A host node's subgraphs read enclosing values through the frame, on the host.
        if (!stepOnDevice && m_frame.m_device)
            for (const std::string& name : m_frame.m_graph.node(m_step.node).capturedNames())
                if (ValueId id = m_frame.m_graph.findValue(name); id.valid() && m_frame.ptr[id.index] &&
                                                                  m_frame.ptr[id.index]->onDevice) {
                    auto moved = toHost(id);
                    if (!moved) return moved.status();
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
    Status finish() {
        for (size_t i = 0; i < m_wide.size(); ++i) {
            if (!m_wide[i].defined() || !m_step.outputs[i].valid()) continue;
            auto out = m_frame.produce(m_step.outputs[i], m_narrowTo, m_wide[i].dims, m_sig, false);
            if (!out) return out.status();
            narrow(m_wide[i], **out);
        }
        return Status::ok();
    }

    size_t inputCount() const override { return m_inputs.size(); }
    const RtTensor* input(size_t i) const override {
        return i < m_inputs.size() ? m_inputs[i] : nullptr;
    }
    bool inputConstant(size_t i) const override {
        if (i >= m_inputs.size() || !m_step.inputs[i].valid()) return false;
        const uint32_t v = m_step.inputs[i].index;
        return m_inputs[i] == &m_constants[v] ||
               (v < m_executor.m_deviceConstants.size() && m_inputs[i] == &m_executor.m_deviceConstants[v]);
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
        const bool onDevice = m_step.onDevice;
        if (m_narrowTo != DType::Undefined && dtype == DType::Float32) {
            m_wide[i] = allocateTensor(dtype, std::move(dims));
            return &m_wide[i];
        }
        if (!m_step.outputs[i].valid()) {
            if (onDevice) {
                auto t = allocateDeviceTensor(*m_frame.m_device, dtype, std::move(dims));
                if (!t) return t.status().withContext(where());
                m_scratch[i] = std::move(*t);
            } else {
                m_scratch[i] = allocateTensor(dtype, std::move(dims));
            }
            return &m_scratch[i];
        }
        auto out = m_frame.produce(m_step.outputs[i], dtype, std::move(dims), m_sig, onDevice);
        if (!out) return out.status().withContext(where());
        return out;
    }
    Status outputSequence(size_t i, DType elemType, std::vector<RtTensor> elements) override {
        if (i >= m_step.outputs.size())
            return Status(ErrorCode::InvalidModel, where() + ": output " + std::to_string(i) + " is not declared by the node");
        if (m_step.outputs[i].valid()) m_frame.produceSequence(m_step.outputs[i], makeSequence(elemType, std::move(elements)));
        return Status::ok();
    }
    ThreadPool& pool() override { return m_pool; }
    const ValueScope* scope() const override { return &m_frame; }
    Device* device() override { return m_frame.m_device; }
    bool tf32() const override { return m_executor.m_context->tf32; }
    std::string where() const override {
        return "node '" + m_step.nodeName + "' (" + m_step.opType + ")";
    }

private:
    bool isHostInput(int i) const {
        for (int h : m_step.def->hostInputs)
            if (h == i) return true;
        return false;
    }
    // Emits a copy as a launch of its own, so timelines show what a graph break costs.
    template <typename Copy>
    Status timedCopy(const char* kernelId, int64_t bytes, Copy copy) {
        static const std::string op = "Memcpy";
        static const std::string h2d = "memcpy.HtoD", d2h = "memcpy.DtoH";
        LaunchEvent event;
        ExecutionListener* listener = m_options ? m_options->listener : nullptr;
        if (listener) {
            event.node = m_step.node;
            event.nodeName = &m_step.nodeName;
            event.opType = &op;
            event.kernelId = std::string(kernelId) == h2d ? &h2d : &d2h;
            event.backend = m_executor.m_context->provider->backend();  // the device provider's
            event.startNs = nowNs();
            listener->onBegin(event);
        }
        Status status = copy();
        if (listener) {
            event.endNs = nowNs();
            listener->onLaunch(event);
        }
        ++m_transfers.copies;
        (std::string(kernelId) == h2d ? m_transfers.hostToDeviceBytes : m_transfers.deviceToHostBytes) += bytes;
        return status;
    }
    Result<const RtTensor*> toDevice(ValueId id) {
        const RtTensor& host = *m_frame.ptr[id.index];
        if (&host == &m_constants[id.index]) return m_executor.deviceConstant(id);
        RtTensor& copy = m_frame.mirror[id.index];
        if (!copy.defined()) {
            if (host.dtype == DType::String || host.isSequence())
                return Status(ErrorCode::Unsupported, "value '" + m_frame.m_graph.value(id).name + "' holds " +
                                                          (host.isSequence() ? "a sequence" : "strings") + ", which cannot go to the device");
            auto t = allocateDeviceTensor(*m_frame.m_device, host.dtype, host.dims);
            if (!t) return t.status().withContext("copy of '" + m_frame.m_graph.value(id).name + "' to the device");
            FSC_RETURN_IF_ERROR(timedCopy("memcpy.HtoD", int64_t(host.bytes()), [&] {
                return m_frame.m_device->copyToDevice(t->data, host.data, host.bytes());
            }));
            copy = std::move(*t);
        }
        return &copy;
    }
    Result<const RtTensor*> toHost(ValueId id) {
        const RtTensor& dev = *m_frame.ptr[id.index];
        RtTensor& copy = m_frame.mirror[id.index];
        if (!copy.defined()) {
            RtTensor t = allocateTensor(dev.dtype, dev.dims);
            FSC_RETURN_IF_ERROR(timedCopy("memcpy.DtoH", int64_t(dev.bytes()), [&] {
                return m_frame.m_device->copyToHost(t.data, dev.data, dev.bytes());
            }));
            copy = std::move(t);
        }
        return &copy;
    }

    Executor& m_executor;
    Frame& m_frame;
    const PlanStep& m_step;
    const SignaturePlan* m_sig;
    ThreadPool& m_pool;
    const std::vector<RtTensor>& m_constants;
    TransferStats& m_transfers;
    const RunOptions* m_options;
    std::vector<const RtTensor*> m_inputs;
    std::vector<RtTensor> m_widened;
    std::vector<RtTensor> m_scratch;
    std::vector<RtTensor> m_wide;
    DType m_narrowTo = DType::Undefined;
};

Executor::~Executor() {
    // Captured graphs belong to the device; the arenas release themselves.
    if (m_context && m_context->device)
        for (auto& [signature, sig] : m_signatures)
            for (int graph : {sig->graph, sig->listenedGraph})
                if (graph) m_context->device->dropGraph(graph);
}

Device* Executor::device() const { return m_context ? m_context->device.get() : nullptr; }
int Executor::threadsInUse() const { return m_context && m_context->pool ? m_context->pool->size() : 1; }
int Executor::libraryThreadsInUse() const { return m_context && m_context->pool ? m_context->pool->teamSize() : 1; }

Result<std::unique_ptr<Executor>> Executor::create(const Model& model,
                                                   const ExecutorOptions& options) {
    auto executor = create(model.graph, model.opsetImports, options);
    if (!executor) return executor.status().withContext(model.path);
    return executor;
}

Result<std::unique_ptr<Executor>> Executor::create(
    std::shared_ptr<const Graph> graph, const std::vector<std::pair<std::string, int64_t>>& opsetImports,
    const ExecutorOptions& options) {
    if (!options.host || options.host->device())
        return Status(ErrorCode::Internal, "an executor needs a host execution provider (executorOptions(target) gives one)");
    auto context = std::make_shared<LoweringContext>();
    context->opsets = opsetImports;
    context->provider = options.host;
    context->pool = std::make_shared<ThreadPool>(options.threads);
    // oneDNN's primitives, some made as the kernels are, keep the team size OpenMP gives
    // them then: an automatic pool that found one core free must say so before.
    context->pool->applyToCallingThread();
    context->tf32 = options.tf32;
    if (options.device) {
        std::shared_ptr<Device> device = options.device->device();
        if (!device)
            return Status(ErrorCode::Unsupported, std::string("the ") + backendName(options.device->backend()) +
                                                      " execution provider has no device");
        auto host = std::make_shared<LoweringContext>(*context);
        context->host = host;
        context->provider = options.device;
        context->device = std::move(device);
    }
    auto executor = createForGraph(std::move(graph), std::move(context), false);
    if (executor) (*executor)->m_options = options;
    return executor;
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
    e->m_deviceConstants.resize(graph->valueCount());
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
    // One CUDA Graph per run needs every step on the device, host reads only of constants,
    // and every graph output computed there.
    e->m_allOnDevice = e->m_context->device && !e->m_plan.steps.empty();
    for (const PlanStep& step : e->m_plan.steps) {
        e->m_allOnDevice = e->m_allOnDevice && step.onDevice;
        if (step.onDevice)
            for (int h : step.def->hostInputs)
                if (size_t(h) < step.inputs.size() && step.inputs[size_t(h)].valid() &&
                    !e->m_constants[step.inputs[size_t(h)].index].defined())
                    e->m_allOnDevice = false;
    }
    std::vector<bool> produced(graph->valueCount(), false);
    for (const PlanStep& step : e->m_plan.steps)
        for (ValueId out : step.outputs)
            if (out.valid()) produced[out.index] = true;
    for (ValueId id : graph->outputs) e->m_allOnDevice = e->m_allOnDevice && produced[id.index];
    return e;
}

Result<const RtTensor*> Executor::deviceConstant(ValueId id) {
    RtTensor& copy = m_deviceConstants[id.index];
    if (!copy.defined()) {
        const RtTensor& host = m_constants[id.index];
        if (host.dtype == DType::String)
            return Status(ErrorCode::Unsupported, "constant '" + graph().value(id).name + "' holds strings, which cannot go to the device");
        auto t = allocateDeviceTensor(*m_context->device, host.dtype, host.dims);
        if (!t) return t.status().withContext("weights '" + graph().value(id).name + "'");
        FSC_RETURN_IF_ERROR(m_context->device->copyToDevice(t->data, host.data, host.bytes()));
        m_transfers.hostToDeviceBytes += int64_t(host.bytes());
        ++m_transfers.copies;
        copy = std::move(*t);
    }
    return &copy;
}

namespace {
// Ops whose result is not a function of their inputs, and ops with subgraphs.
bool foldable(const PlanStep& step, const Graph& graph) {
    static const std::set<std::string> never{"RandomNormal", "RandomUniform", "RandomNormalLike",
                                             "RandomUniformLike", "Multinomial", "Bernoulli",
                                             "Dropout", "If", "Loop", "Scan"};
    const Node& node = graph.node(step.node);
    return !step.onDevice && node.domain.empty() && !never.count(node.opType) &&
           node.capturedNames().empty();
}
}  // namespace

// Steps reading only constants (weights shared through Identity, shape arithmetic on
// constant shapes, Constant nodes) run once here instead of on every run.
Status Executor::foldConstantSteps() {
    const Graph& g = graph();
    Frame frame(g, nullptr, m_context->device.get());
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
            StepContext ctx(*this, frame, step, nullptr, pool, m_constants, m_transfers, nullptr);
            FSC_RETURN_IF_ERROR(ctx.bindInputs().withContext(ctx.where()));
            Status status = step.kernel->compute(ctx);
            if (!status.isOk())
                return status.message().rfind("node '", 0) == 0 ? status : status.withContext(ctx.where());
            FSC_RETURN_IF_ERROR(ctx.finish().withContext(ctx.where()));
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
        if (declared.kind == ValueType::Kind::Sequence && t.isSequence()) continue;  // a loop's carried sequence
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
        if (t.onDevice && !(m_context && m_context->device))
            return Status(ErrorCode::InvalidArgument, "input '" + v.name + "' is on a device, and this run has none");
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
    try {
        return runUnguarded(std::move(feeds), options, outer);
    } catch (const std::bad_alloc& e) {  // outside any step: the arena, the outputs' copies
        return outOfMemoryStatus(e);
    }
}

Result<std::vector<RtTensor>> Executor::runUnguarded(std::vector<RtTensor> feeds, const RunOptions& options,
                                                     const ValueScope* outer) {
    FSC_RETURN_IF_ERROR(checkFeeds(feeds));
    const Graph& g = graph();
    m_transfers = TransferStats{};

    std::vector<int64_t> signature;
    for (const RtTensor& t : feeds) {
        signature.push_back(int64_t(t.dtype));
        signature.push_back(int64_t(t.rank()));
        signature.insert(signature.end(), t.dims.begin(), t.dims.end());
    }
    auto cached = m_signatures.find(signature);
    SignaturePlan* sig = cached == m_signatures.end() ? nullptr : cached->second.get();
    const bool listenerReplays = !options.listener || options.listener->graphReplayScope() != 0;
    if (sig && m_allOnDevice && m_options.cudaGraphs && listenerReplays && !options.tap && !sig->graphFailed &&
        m_context->depth == 0) {
        if (options.cancel && options.cancel->load()) return Status(ErrorCode::Cancelled, "run cancelled");
        if (auto result = runAsGraph(*sig, feeds, options.listener, options.outputsOnDevice)) {
            m_last = sig;
            return std::move(*result);
        }
    }
    std::vector<size_t> recorded;  // sizes seen by a run with no plan yet
    std::vector<bool> recordedOnDevice;
    if (!sig) {
        recorded.assign(g.valueCount(), 0);
        recordedOnDevice.assign(g.valueCount(), false);
    }

    Frame frame(g, outer, m_context->device.get());
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
    FSC_RETURN_IF_ERROR(runSteps(frame, sig, options, sig ? nullptr : &recorded, sig ? nullptr : &recordedOnDevice));
    auto outputs = collectOutputs(frame, options.outputsOnDevice);
    if (!outputs) return outputs.status();
    if (!sig) {
        FSC_RETURN_IF_ERROR(layOutSignature(signature, recorded, recordedOnDevice));
    } else {
        m_last = sig;
    }
    return outputs;
}

Status Executor::runSteps(Frame& frame, const SignaturePlan* sig, const RunOptions& options,
                          std::vector<size_t>* recorded, std::vector<bool>* recordedOnDevice) {
    const Graph& g = graph();
    ThreadPool& pool = *m_context->pool;
    if (m_context->depth == 0) pool.applyToCallingThread();
    size_t s = 0;
    try {
    for (; s < m_plan.steps.size(); ++s) {
        if (options.cancel && options.cancel->load())
            return Status(ErrorCode::Cancelled, "run cancelled");
        const PlanStep& step = m_plan.steps[s];
        StepContext ctx(*this, frame, step, sig, pool, m_constants, m_transfers, &options);
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
        // A listener that times each node from the host needs a device node's work finished.
        if (options.listener && options.listener->timesDeviceWorkOnHost() && step.onDevice && status.isOk())
            status = m_context->device->synchronize();
        if (options.listener) {  // closes what onBegin opened, even when the kernel failed
            event.endNs = nowNs();
            options.listener->onLaunch(event);
        }
        if (!status.isOk())
            return status.message().rfind("node '", 0) == 0 ? status
                                                            : status.withContext(ctx.where());
        FSC_RETURN_IF_ERROR(ctx.finish().withContext(ctx.where()));
        for (ValueId out : step.outputs) {
            if (!out.valid()) continue;
            if (!frame.ptr[out.index])
                return Status(ErrorCode::Internal, ctx.where() + ": did not produce output '" +
                                                       g.value(out).name + "'");
            if (options.tap && m_context->depth == 0 && options.tap->wants(out))
                FSC_RETURN_IF_ERROR(tapValue(*options.tap, out, *frame.ptr[out.index]).withContext(ctx.where()));
            if (recorded) {
                (*recorded)[out.index] = std::max((*recorded)[out.index], alignedBytes(*frame.ptr[out.index]));
                (*recordedOnDevice)[out.index] = frame.ptr[out.index]->onDevice;
            }
        }
        // Release what no later step reads (graph outputs are kept).
        for (ValueId in : step.inputs)
            if (in.valid() && m_plan.lastUse[in.index] == long(s) && !m_isGraphOutput[in.index] &&
                frame.owned[in.index].defined())
                frame.releaseValue(in);
    }
    } catch (const std::bad_alloc& e) {
        const PlanStep& step = m_plan.steps[std::min(s, m_plan.steps.size() - 1)];
        return outOfMemoryStatus(e).withContext("node '" + step.nodeName + "' (" + step.opType + ")");
    }
    return Status::ok();
}

Status Executor::tapValue(ValueTap& tap, ValueId id, const RtTensor& value) {
    if (!value.onDevice) {
        tap.onValue(id, cloneTensor(value));
        return Status::ok();
    }
    auto host = downloadToHost(*m_context->device, value);
    if (!host) return host.status().withContext("reading '" + graph().value(id).name + "' back for the tap");
    tap.onValue(id, std::move(*host));
    return Status::ok();
}

Result<std::vector<RtTensor>> Executor::collectOutputs(Frame& frame, bool outputsOnDevice) {
    const Graph& g = graph();
    std::vector<RtTensor> outputs;
    for (ValueId id : g.outputs) {
        const RtTensor* t = frame.ptr[id.index];
        if (!t)
            return Status(ErrorCode::InvalidModel,
                          "graph output '" + g.value(id).name + "' was never computed");
        RtTensor& owned = frame.owned[id.index];
        if (t->onDevice && outputsOnDevice) {
            outputs.push_back(*t);  // an arena slot, or its own block kept alive by `owner`
        } else if (t->onDevice) {
            auto host = downloadToHost(*m_context->device, *t);
            if (!host) return host.status().withContext("graph output '" + g.value(id).name + "'");
            m_transfers.deviceToHostBytes += int64_t(t->bytes());
            ++m_transfers.copies;
            outputs.push_back(std::move(*host));
        } else if (t == &owned && owned.owner) {
            outputs.push_back(owned);  // shares storage; the frame goes away
        } else {
            outputs.push_back(cloneTensor(*t));
        }
    }
    return outputs;
}

// Lays out the arenas for a signature from the sizes its first run saw: one for host
// intermediates, one device allocation for everything the device produced (graph outputs
// included there, so a CUDA Graph finds them at fixed addresses).
Executor::ArenaLayout Executor::layOutArena(const std::vector<size_t>& recorded, const std::vector<bool>& onDevice) const {
    const Graph& g = graph();
    ArenaLayout layout;
    std::vector<BufferLifetime> host, device;
    // A host value whose buffer an in-place step's output takes over shares its lifetime
    // (extended to the output's last reader) and its slot: sharedWith[output] = that value.
    // The same on the device (a Reshape there is then no copy at all).
    std::vector<long> hostLifetime(g.valueCount(), -1), deviceLifetime(g.valueCount(), -1);
    std::vector<std::pair<ValueId, ValueId>>& sharedWith = layout.sharedWith;
    auto takeOver = [&](std::vector<BufferLifetime>& buffers, std::vector<long>& lifetime, ValueId out, ValueId taken,
                        size_t last) {
        const long at = lifetime[taken.index];
        buffers[size_t(at)].lastStep = std::max(buffers[size_t(at)].lastStep, last);
        lifetime[out.index] = at;
        sharedWith.emplace_back(out, taken);
    };
    for (size_t s = 0; s < m_plan.steps.size(); ++s) {
        const PlanStep& step = m_plan.steps[s];
        const ValueId taken = inPlaceTakeover(step, s, recorded, onDevice);
        for (ValueId out : step.outputs) {
            if (!out.valid() || !recorded[out.index]) continue;
            const size_t last = size_t(std::max(m_plan.lastUse[out.index], long(s)));
            const bool takes = taken.valid() && out == step.outputs[0];
            if (onDevice[out.index]) {
                if (takes && deviceLifetime[taken.index] >= 0) {
                    takeOver(device, deviceLifetime, out, taken, last);
                    continue;
                }
                deviceLifetime[out.index] = long(device.size());
                device.push_back({out, recorded[out.index], s, m_isGraphOutput[out.index] ? m_plan.steps.size() : last});
            } else if (!m_isGraphOutput[out.index]) {
                if (takes && hostLifetime[taken.index] >= 0) {
                    takeOver(host, hostLifetime, out, taken, last);
                    continue;
                }
                hostLifetime[out.index] = long(host.size());
                host.push_back({out, recorded[out.index], s, last});
            }
        }
    }
    layout.host = planMemory(std::move(host));
    layout.device = planMemory(std::move(device));
    layout.anyOnDevice = !layout.device.assignments.empty();
    return layout;
}

Result<MemoryPlan> Executor::plannedMemory(const std::vector<std::vector<int64_t>>& feedDims) const {
    const Graph& g = graph();
    if (feedDims.size() != m_feeds.size())
        return Status(ErrorCode::InvalidArgument, "expected the sizes of " + std::to_string(m_feeds.size()) + " inputs");
    // The feeds' sizes name the symbols; every intermediate's size follows from its shape.
    DimBindings bindings;
    for (size_t i = 0; i < m_feeds.size(); ++i) {
        const Shape& shape = g.value(m_feeds[i]).type.shape;
        if (!shape.rankKnown() || shape.rank() != feedDims[i].size()) continue;
        for (size_t d = 0; d < shape.rank(); ++d)
            if (shape[d].isSymbolic()) bindings[shape[d].symbol()] = feedDims[i][d];
    }
    std::vector<size_t> sizes(g.valueCount(), 0);
    std::vector<bool> onDevice(g.valueCount(), false);
    for (const PlanStep& step : m_plan.steps)
        for (ValueId out : step.outputs) {
            if (!out.valid()) continue;
            auto bytes = valueBytes(g.value(out), bindings, 64);
            if (!bytes)
                return Status(ErrorCode::Unsupported, "the size of '" + g.value(out).name +
                                                          "' is known only when the model runs (" + bytes.status().message() + ")");
            sizes[out.index] = *bytes;
            onDevice[out.index] = step.onDevice;
        }
    ArenaLayout layout = layOutArena(sizes, onDevice);
    return m_context && m_context->device ? layout.device : layout.host;
}

Status Executor::layOutSignature(const std::vector<int64_t>& signature, const std::vector<size_t>& recorded,
                                 const std::vector<bool>& onDevice) {
    const Graph& g = graph();
    ArenaLayout layout = layOutArena(recorded, onDevice);
    const auto& sharedWith = layout.sharedWith;
    auto plan = std::make_unique<SignaturePlan>();
    plan->memory = std::move(layout.host);
    plan->deviceMemory = std::move(layout.device);
    plan->slotOffset.assign(g.valueCount(), -1);
    plan->slotBytes.assign(g.valueCount(), 0);
    plan->slotOnDevice.assign(g.valueCount(), false);
    for (const auto& a : plan->memory.assignments) {
        plan->slotOffset[a.buffer.value.index] = long(a.offset);
        plan->slotBytes[a.buffer.value.index] = a.buffer.bytes;
    }
    for (const auto& a : plan->deviceMemory.assignments) {
        plan->slotOffset[a.buffer.value.index] = long(a.offset);
        plan->slotBytes[a.buffer.value.index] = a.buffer.bytes;
        plan->slotOnDevice[a.buffer.value.index] = true;
    }
    for (const auto& [out, taken] : sharedWith) {  // in step order: a chain resolves front to back
        plan->slotOffset[out.index] = plan->slotOffset[taken.index];
        plan->slotBytes[out.index] = plan->slotBytes[taken.index];
        plan->slotOnDevice[out.index] = plan->slotOnDevice[taken.index];
    }
    const size_t arenaBytes = std::max<size_t>(plan->memory.arenaBytes, 64);
    void* arena = std::aligned_alloc(64, (arenaBytes + 63) / 64 * 64);
    if (!arena)
        return Status(ErrorCode::OutOfMemory, "out of memory: " + bytesText(double(arenaBytes)) +
                                                  " for the arena the memory plan laid out for these input sizes");
    plan->arena = std::shared_ptr<void>(arena, [](void* p) { std::free(p); });
    plan->base = static_cast<uint8_t*>(arena);
    if (layout.anyOnDevice) {
        Device& dev = *m_context->device;
        auto p = dev.allocate(plan->deviceMemory.arenaBytes);
        if (!p) return p.status().withContext("the device arena of " + std::to_string(plan->deviceMemory.arenaBytes) + " bytes");
        plan->deviceArena = std::shared_ptr<void>(*p, [d = m_context->device](void* q) { d->release(q); });
        plan->deviceBase = static_cast<uint8_t*>(*p);
    }
    if (m_signatures.size() >= 16) {  // unbounded shape churn
        for (auto& [key, old] : m_signatures)
            if (old->graph) m_context->device->dropGraph(old->graph);
        m_signatures.clear();
    }
    m_last = plan.get();
    m_signatures[signature] = std::move(plan);
    return Status::ok();
}

// The input whose buffer step s's output 0 may take (Kernel::inPlaceInput): an intermediate
// of the output's size, where the step runs (host or device), that nothing reads after step
// s; invalid otherwise.
ValueId Executor::inPlaceTakeover(const PlanStep& step, size_t s, const std::vector<size_t>& recorded,
                                  const std::vector<bool>& onDevice) const {
    const int k = step.kernel ? step.kernel->inPlaceInput() : -1;
    if (k < 0 || size_t(k) >= step.inputs.size() || step.outputs.empty()) return {};
    const ValueId in = step.inputs[size_t(k)], out = step.outputs[0];
    if (!in.valid() || !out.valid() || m_isGraphOutput[in.index] || m_isGraphOutput[out.index]) return {};
    if (!recorded[in.index]) return {};  // feeds and constants: no slot
    if (onDevice[in.index] != step.onDevice || onDevice[out.index] != step.onDevice) return {};  // one side of a copy
    if (recorded[in.index] != recorded[out.index] || m_plan.lastUse[in.index] != long(s)) return {};
    for (size_t i = 0; i < step.inputs.size(); ++i)  // read once, as that input only
        if (i != size_t(k) && step.inputs[i] == in) return {};
    return in;
}

// A run as one CUDA Graph. The first time, feeds go into buffers of their own, the steps
// run under capture (their launches are recorded, not run), and the graph replays; then
// every run copies its feeds in, replays, and copies the outputs out. A capture that fails
// (a shape the plan did not foresee needs an allocation) marks the signature and the run
// goes step by step. A listener that ties replays to plan nodes gets a graph of its own,
// captured while it listens.
std::optional<Result<std::vector<RtTensor>>> Executor::runAsGraph(SignaturePlan& sig, const std::vector<RtTensor>& feeds,
                                                                  ExecutionListener* listener, bool outputsOnDevice) {
    Device& device = *m_context->device;
    const Graph& g = graph();
    int& graphId = listener ? sig.listenedGraph : sig.graph;
    if (listener && sig.listenedScope != listener->graphReplayScope()) {
        if (sig.listenedGraph) device.dropGraph(sig.listenedGraph);
        sig.listenedGraph = 0;
        sig.listenedScope = listener->graphReplayScope();
        sig.listenedFailed = false;
    }
    if (listener && sig.listenedFailed) return std::nullopt;
    if (sig.feedBuffers.size() != feeds.size()) {
        sig.feedBuffers.clear();
        for (const RtTensor& feed : feeds) {
            auto buffer = allocateDeviceTensor(device, feed.dtype, feed.dims);
            if (!buffer) return Result<std::vector<RtTensor>>(buffer.status().withContext("input buffer"));
            sig.feedBuffers.push_back(std::move(*buffer));
        }
    }
    for (size_t i = 0; i < feeds.size(); ++i) {
        // The graph reads its inputs from fixed buffers: a device feed elsewhere is copied there
        // on the device, a host feed crosses over.
        if (feeds[i].onDevice && feeds[i].data == sig.feedBuffers[i].data) continue;
        Status copied = feeds[i].onDevice
                            ? device.copyOnDevice(sig.feedBuffers[i].data, feeds[i].data, feeds[i].bytes())
                            : device.copyToDevice(sig.feedBuffers[i].data, feeds[i].data, feeds[i].bytes());
        if (!copied.isOk()) return Result<std::vector<RtTensor>>(copied.withContext("input '" + g.value(m_feeds[i]).name + "'"));
        if (feeds[i].onDevice) continue;
        m_transfers.hostToDeviceBytes += int64_t(feeds[i].bytes());
        ++m_transfers.copies;
    }
    if (!graphId) {
        Frame frame(g, nullptr, &device);
        for (uint32_t i = 0; i < g.valueCount(); ++i)
            if (m_constants[i].defined()) frame.ptr[i] = &m_constants[i];
        for (size_t i = 0; i < feeds.size(); ++i) {
            frame.owned[m_feeds[i].index] = sig.feedBuffers[i];
            frame.ptr[m_feeds[i].index] = &frame.owned[m_feeds[i].index];
        }
        // Weights must be on the device before capture: copies from the host cannot be recorded.
        for (const PlanStep& step : m_plan.steps)
            for (size_t k = 0; k < step.inputs.size(); ++k) {
                const ValueId in = step.inputs[k];
                bool hostInput = false;
                for (int h : step.def->hostInputs) hostInput = hostInput || size_t(h) == k;
                if (in.valid() && !hostInput && m_constants[in.index].defined()) {
                    auto uploaded = deviceConstant(in);
                    if (!uploaded) return Result<std::vector<RtTensor>>(uploaded.status());
                }
            }
        Status began = device.beginCapture();
        if (!began.isOk()) return Result<std::vector<RtTensor>>(began);
        RunOptions capturing;
        capturing.listener = listener;  // its node ids are pushed around the launches recorded
        Status ran = runSteps(frame, &sig, capturing, nullptr, nullptr);
        auto captured = device.endCapture();
        bool fixed = ran.isOk() && captured.isOk();
        std::vector<RtTensor> outputs;
        for (ValueId id : g.outputs) {
            const RtTensor* t = frame.ptr[id.index];
            // An output outside the arena was allocated during capture: its address is not fixed.
            fixed = fixed && t && t->onDevice && !t->owner;
            if (fixed) outputs.push_back(*t);
        }
        if (!fixed) {
            if (captured) device.dropGraph(*captured);
            (listener ? sig.listenedFailed : sig.graphFailed) = true;
            return std::nullopt;
        }
        graphId = *captured;
        sig.graphOutputs = std::move(outputs);
    }
    Status replayed = device.replay(graphId);
    if (!replayed.isOk()) return Result<std::vector<RtTensor>>(replayed.withContext("CUDA Graph replay"));
    m_transfers.graphReplayed = true;
    if (outputsOnDevice) return Result<std::vector<RtTensor>>(sig.graphOutputs);
    std::vector<RtTensor> outputs;
    for (size_t i = 0; i < sig.graphOutputs.size(); ++i) {
        const RtTensor& t = sig.graphOutputs[i];
        auto host = downloadToHost(device, t);
        if (!host) return Result<std::vector<RtTensor>>(host.status().withContext("graph output '" + g.value(g.outputs[i]).name + "'"));
        m_transfers.deviceToHostBytes += int64_t(t.bytes());
        ++m_transfers.copies;
        outputs.push_back(std::move(*host));
    }
    return Result<std::vector<RtTensor>>(std::move(outputs));
}

const MemoryPlan* Executor::lastMemoryPlan() const {
    if (!m_last) return nullptr;
    return m_context && m_context->device ? &m_last->deviceMemory : &m_last->memory;
}

}  // namespace fsc
