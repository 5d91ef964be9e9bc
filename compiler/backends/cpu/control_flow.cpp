// If, Loop and Scan: each subgraph gets its own executor (lowered once, at plan time) and
// runs with the enclosing frame as its outer scope, so nesting works to any depth.
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/runtime/executor.h"

namespace fsc {
namespace {

using cpu::bad;
using cpu::product;

Result<std::unique_ptr<Executor>> lowerBody(const KernelInit& init, const std::string& attr) {
    auto graph = init.getGraph(attr);
    if (!graph) return init.invalid("missing graph attribute '" + attr + "'");
    auto context = std::make_shared<LoweringContext>(*init.lowering());
    context->depth += 1;
    auto e = Executor::createForGraph(graph, context, true);
    if (!e) return e.status().withContext("node '" + init.node().name + "' (" + init.node().opType + ") " + attr);
    return e;
}

Status emit(KernelContext& ctx, size_t i, const RtTensor& value) {
    if (!ctx.outputWanted(i)) return Status::ok();
    if (value.isSequence()) return ctx.outputSequence(i, value.dtype, *value.sequence);
    auto out = ctx.output(i, value.dtype, value.dims);
    if (!out) return out.status();
    if (value.dtype == DType::String) *(*out)->strings = *value.strings;
    else if (value.bytes()) std::memcpy((*out)->data, value.data, value.bytes());
    return Status::ok();
}

class IfKernel : public Kernel {
public:
    IfKernel(const KernelInit& init, Status& status) {
        auto t = lowerBody(init, "then_branch");
        auto e = lowerBody(init, "else_branch");
        if (!t) { status = t.status(); return; }
        if (!e) { status = e.status(); return; }
        m_then = std::move(*t);
        m_else = std::move(*e);
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* cond = ctx.input(0);
        if (!cond || cond->numel() != 1) return bad(ctx, "cond must hold one element");
        Executor& branch = elementAsDouble(*cond, 0) != 0 ? *m_then : *m_else;
        auto outs = branch.run({}, {}, ctx.scope());
        if (!outs) return outs.status().withContext(ctx.where());
        if (outs->size() != ctx.outputCount()) return bad(ctx, "branch output count differs from the node's");
        for (size_t i = 0; i < outs->size(); ++i) FSC_RETURN_IF_ERROR(emit(ctx, i, (*outs)[i]));
        return Status::ok();
    }

private:
    std::unique_ptr<Executor> m_then, m_else;
};

// Stacks per-iteration tensors along a new axis.
Result<RtTensor> stack(const KernelContext& ctx, const std::vector<RtTensor>& parts, int64_t axis, bool reverse) {
    if (parts.empty()) return bad(ctx, "no iterations to stack");
    const RtTensor& first = parts[0];
    for (const RtTensor& p : parts)
        if (p.dims != first.dims || p.dtype != first.dtype) return bad(ctx, "scan outputs differ in shape between iterations");
    std::vector<int64_t> dims = first.dims;
    if (axis < 0) axis += int64_t(dims.size()) + 1;
    dims.insert(dims.begin() + axis, int64_t(parts.size()));
    RtTensor out = allocateTensor(first.dtype, dims);
    const int64_t outer = product(first.dims, 0, size_t(axis));
    const int64_t inner = product(first.dims, size_t(axis));
    const size_t es = size_t(dtypeBits(first.dtype) / 8);
    for (size_t k = 0; k < parts.size(); ++k) {
        const size_t slot = reverse ? parts.size() - 1 - k : k;
        for (int64_t o = 0; o < outer; ++o)
            std::memcpy(out.as<uint8_t>() + size_t((o * int64_t(parts.size()) + int64_t(slot)) * inner) * es,
                        parts[k].as<uint8_t>() + size_t(o * inner) * es, size_t(inner) * es);
    }
    return out;
}

class LoopKernel : public Kernel {
public:
    LoopKernel(const KernelInit& init, Status& status) {
        auto b = lowerBody(init, "body");
        if (!b) { status = b.status(); return; }
        m_body = std::move(*b);
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* maxTrip = ctx.input(0);
        const RtTensor* condIn = ctx.input(1);
        const int64_t limit = maxTrip && maxTrip->numel() ? elementAsInt(*maxTrip, 0) : INT64_MAX;
        bool cond = condIn && condIn->numel() ? elementAsDouble(*condIn, 0) != 0 : true;
        const size_t carriedCount = ctx.inputCount() >= 2 ? ctx.inputCount() - 2 : 0;
        std::vector<RtTensor> carried;
        for (size_t i = 0; i < carriedCount; ++i) {
            if (!ctx.input(i + 2)) return bad(ctx, "loop-carried input " + std::to_string(i) + " is missing");
            carried.push_back(cloneTensor(*ctx.input(i + 2)));
        }
        const size_t scanCount = ctx.outputCount() - carriedCount;
        std::vector<std::vector<RtTensor>> scans(scanCount);
        for (int64_t it = 0; it < limit && cond; ++it) {
            std::vector<RtTensor> feeds;
            RtTensor iter = allocateTensor(DType::Int64, scalarDims(0));
            iter.as<int64_t>()[0] = it;
            RtTensor c = allocateTensor(DType::Bool, scalarDims(1));
            c.as<bool>()[0] = cond;
            feeds.push_back(iter);
            feeds.push_back(c);
            for (const RtTensor& v : carried) feeds.push_back(v);  // shares storage, no copy
            auto outs = m_body->run(std::move(feeds), {}, ctx.scope());
            if (!outs) return outs.status().withContext(ctx.where() + " iteration " + std::to_string(it));
            if (outs->size() != 1 + carriedCount + scanCount) return bad(ctx, "body output count does not match the node");
            cond = elementAsDouble((*outs)[0], 0) != 0;
            for (size_t i = 0; i < carriedCount; ++i) carried[i] = std::move((*outs)[1 + i]);
            for (size_t i = 0; i < scanCount; ++i) scans[i].push_back(std::move((*outs)[1 + carriedCount + i]));
        }
        for (size_t i = 0; i < carriedCount; ++i) FSC_RETURN_IF_ERROR(emit(ctx, i, carried[i]));
        for (size_t i = 0; i < scanCount; ++i) {
            if (scans[i].empty()) {
                // No iteration ran: an empty stack of the body's declared element shape.
                const ValueType& t = m_body->graph().value(m_body->graph().outputs[1 + carriedCount + i]).type;
                std::vector<int64_t> dims{0};
                for (const Dim& d : t.shape.dims()) dims.push_back(d.isKnown() ? d.size() : 0);
                auto out = ctx.output(carriedCount + i, t.elemType == DType::Undefined ? DType::Float32 : t.elemType, dims);
                if (!out) return out.status();
                continue;
            }
            auto stacked = stack(ctx, scans[i], 0, false);
            if (!stacked) return stacked.status();
            FSC_RETURN_IF_ERROR(emit(ctx, carriedCount + i, *stacked));
        }
        return Status::ok();
    }

private:
    // The iteration number and condition are scalars, but PyTorch's exporter declares the
    // body's iteration number as [1] (MViT's pooling loops): fed as declared.
    std::vector<int64_t> scalarDims(size_t bodyInput) const {
        const Graph& body = m_body->graph();
        if (bodyInput >= body.inputs.size()) return {};
        const Shape& declared = body.value(body.inputs[bodyInput]).type.shape;
        if (declared.rankKnown() && declared.rank() == 1 && declared[0].isKnown() && declared[0].size() == 1) return {1};
        return {};
    }

    std::unique_ptr<Executor> m_body;
};

// Element `index` of `t` along `axis`, as a tensor one rank lower.
RtTensor sliceAt(const RtTensor& t, size_t axis, int64_t index) {
    std::vector<int64_t> dims = t.dims;
    const int64_t length = dims[axis];
    dims.erase(dims.begin() + long(axis));
    RtTensor slice = allocateTensor(t.dtype, dims);
    const int64_t outer = product(t.dims, 0, axis);
    const int64_t inner = product(t.dims, axis + 1);
    const size_t es = size_t(dtypeBits(t.dtype) / 8);
    for (int64_t o = 0; o < outer; ++o)
        std::memcpy(slice.as<uint8_t>() + size_t(o * inner) * es,
                    t.as<uint8_t>() + size_t((o * length + index) * inner) * es, size_t(inner) * es);
    return slice;
}

// Opset 8 Scan: every input and output has a batch axis first; scan inputs are
// [batch, sequence, ...] and an optional first input gives each batch entry's length.
// Each batch entry runs the body over its own sequence; scan outputs past an entry's
// length stay zero.
class Scan8Kernel : public Kernel {
public:
    Scan8Kernel(const KernelInit& init, Status& status) {
        auto b = lowerBody(init, "body");
        if (!b) { status = b.status(); return; }
        m_body = std::move(*b);
        m_numScanInputs = init.getInt("num_scan_inputs", 0);
        m_dirs = init.getInts("directions");
    }
    Status compute(KernelContext& ctx) override {
        const size_t inputs = ctx.inputCount(), scanIn = size_t(m_numScanInputs);
        if (inputs < 1 + scanIn) return bad(ctx, "num_scan_inputs exceeds the inputs");
        const size_t stateCount = inputs - 1 - scanIn;
        const size_t scanOut = ctx.outputCount() - stateCount;
        int64_t batch = -1, maxLength = 0;
        for (size_t i = 1; i < inputs; ++i) {
            const RtTensor* in = ctx.input(i);
            const bool isScan = i > stateCount;
            if (!in || in->rank() < (isScan ? 2u : 1u)) return bad(ctx, "inputs need a batch axis (and scan inputs a sequence axis)");
            if (batch >= 0 && in->dims[0] != batch) return bad(ctx, "inputs differ in batch size");
            batch = in->dims[0];
            if (isScan) maxLength = in->dims[1];
        }
        const RtTensor* lens = ctx.input(0);
        if (lens && lens->numel() != batch) return bad(ctx, "sequence_lens must have one entry per batch element");
        std::vector<std::vector<RtTensor>> finalStates(stateCount), scans(scanOut);
        for (int64_t b = 0; b < batch; ++b) {
            const int64_t length = lens ? elementAsInt(*lens, b) : maxLength;
            if (length < 0 || length > maxLength) return bad(ctx, "sequence_lens entry out of range");
            std::vector<RtTensor> states;
            for (size_t i = 0; i < stateCount; ++i) states.push_back(sliceAt(*ctx.input(1 + i), 0, b));
            std::vector<RtTensor> sequences;  // [sequence, ...] of this batch entry
            for (size_t k = 0; k < scanIn; ++k) sequences.push_back(sliceAt(*ctx.input(1 + stateCount + k), 0, b));
            std::vector<std::vector<RtTensor>> steps(scanOut);
            for (int64_t it = 0; it < length; ++it) {
                std::vector<RtTensor> feeds = states;
                for (size_t k = 0; k < scanIn; ++k) {
                    const bool reverse = k < m_dirs.size() && m_dirs[k];
                    feeds.push_back(sliceAt(sequences[k], 0, reverse ? length - 1 - it : it));
                }
                auto res = m_body->run(std::move(feeds), {}, ctx.scope());
                if (!res) return res.status().withContext(ctx.where() + " batch " + std::to_string(b) + " iteration " + std::to_string(it));
                if (res->size() != stateCount + scanOut) return bad(ctx, "body output count does not match the node");
                for (size_t i = 0; i < stateCount; ++i) states[i] = std::move((*res)[i]);
                for (size_t i = 0; i < scanOut; ++i) steps[i].push_back(std::move((*res)[stateCount + i]));
            }
            for (size_t i = 0; i < stateCount; ++i) finalStates[i].push_back(std::move(states[i]));
            for (size_t i = 0; i < scanOut; ++i) {
                if (steps[i].empty()) return bad(ctx, "a batch entry has an empty sequence; its scan output shape is unknown");
                RtTensor padded = allocateTensor(steps[i][0].dtype, [&] {
                    std::vector<int64_t> d{maxLength};
                    d.insert(d.end(), steps[i][0].dims.begin(), steps[i][0].dims.end());
                    return d;
                }());
                const size_t bytes = steps[i][0].bytes();
                for (size_t t = 0; t < steps[i].size(); ++t) {
                    if (steps[i][t].bytes() != bytes) return bad(ctx, "scan output shape changes between iterations");
                    std::memcpy(padded.as<uint8_t>() + t * bytes, steps[i][t].data, bytes);
                }
                scans[i].push_back(std::move(padded));
            }
        }
        for (size_t i = 0; i < stateCount; ++i) {
            auto stacked = stack(ctx, finalStates[i], 0, false);
            if (!stacked) return stacked.status();
            FSC_RETURN_IF_ERROR(emit(ctx, i, *stacked));
        }
        for (size_t i = 0; i < scanOut; ++i) {
            auto stacked = stack(ctx, scans[i], 0, false);
            if (!stacked) return stacked.status();
            FSC_RETURN_IF_ERROR(emit(ctx, stateCount + i, *stacked));
        }
        return Status::ok();
    }

private:
    std::unique_ptr<Executor> m_body;
    int64_t m_numScanInputs = 0;
    std::vector<int64_t> m_dirs;
};

class ScanKernel : public Kernel {
public:
    ScanKernel(const KernelInit& init, Status& status) {
        auto b = lowerBody(init, "body");
        if (!b) { status = b.status(); return; }
        m_body = std::move(*b);
        m_numScanInputs = init.getInt("num_scan_inputs", 0);
        m_inAxes = init.getInts("scan_input_axes");
        m_inDirs = init.getInts("scan_input_directions");
        m_outAxes = init.getInts("scan_output_axes");
        m_outDirs = init.getInts("scan_output_directions");
    }
    Status compute(KernelContext& ctx) override {
        const size_t inputs = ctx.inputCount();
        const size_t scanIn = size_t(m_numScanInputs);
        if (scanIn > inputs) return bad(ctx, "num_scan_inputs exceeds the inputs");
        const size_t stateCount = inputs - scanIn;
        std::vector<RtTensor> states;
        for (size_t i = 0; i < stateCount; ++i) states.push_back(cloneTensor(*ctx.input(i)));
        // Slice each scan input along its axis.
        int64_t iterations = -1;
        std::vector<int64_t> axes(scanIn, 0);
        for (size_t k = 0; k < scanIn; ++k) {
            const RtTensor* in = ctx.input(stateCount + k);
            int64_t a = k < m_inAxes.size() ? m_inAxes[k] : 0;
            auto na = cpu::normAxis(ctx, a, int64_t(in->rank()));
            if (!na) return na.status();
            axes[k] = *na;
            const int64_t len = in->dims[size_t(*na)];
            if (iterations >= 0 && len != iterations) return bad(ctx, "scan inputs differ in length");
            iterations = len;
        }
        if (iterations < 0) iterations = 0;
        const size_t scanOut = ctx.outputCount() - stateCount;
        std::vector<std::vector<RtTensor>> outs(scanOut);
        for (int64_t it = 0; it < iterations; ++it) {
            std::vector<RtTensor> feeds;
            for (const RtTensor& s : states) feeds.push_back(s);
            for (size_t k = 0; k < scanIn; ++k) {
                const RtTensor* in = ctx.input(stateCount + k);
                const bool reverse = k < m_inDirs.size() && m_inDirs[k];
                feeds.push_back(sliceAt(*in, size_t(axes[k]), reverse ? iterations - 1 - it : it));
            }
            auto res = m_body->run(std::move(feeds), {}, ctx.scope());
            if (!res) return res.status().withContext(ctx.where() + " iteration " + std::to_string(it));
            if (res->size() != stateCount + scanOut) return bad(ctx, "body output count does not match the node");
            for (size_t i = 0; i < stateCount; ++i) states[i] = std::move((*res)[i]);
            for (size_t i = 0; i < scanOut; ++i) outs[i].push_back(std::move((*res)[stateCount + i]));
        }
        for (size_t i = 0; i < stateCount; ++i) FSC_RETURN_IF_ERROR(emit(ctx, i, states[i]));
        for (size_t i = 0; i < scanOut; ++i) {
            const int64_t axis = i < m_outAxes.size() ? m_outAxes[i] : 0;
            const bool reverse = i < m_outDirs.size() && m_outDirs[i];
            auto stacked = stack(ctx, outs[i], axis, reverse);
            if (!stacked) return stacked.status();
            FSC_RETURN_IF_ERROR(emit(ctx, stateCount + i, *stacked));
        }
        return Status::ok();
    }

private:
    std::unique_ptr<Executor> m_body;
    int64_t m_numScanInputs = 0;
    std::vector<int64_t> m_inAxes, m_inDirs, m_outAxes, m_outDirs;
};

}  // namespace

void registerControlFlowKernels(KernelRegistry& r) {
    const KernelDefOptions kHost{.variant = "host", .halfViaFloat = false};
    r.add("If", factoryOf<IfKernel>(), kHost);
    r.add("Loop", factoryOf<LoopKernel>(), kHost);
    r.add("Scan", factoryOf<ScanKernel>(), {.variant = kHost.variant, .halfViaFloat = kHost.halfViaFloat, .minOpset = 9});
    r.add("Scan", factoryOf<Scan8Kernel>(), kHost);
}

}  // namespace fsc
