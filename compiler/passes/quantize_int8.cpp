// int8-quantization: post-training INT8 in QDQ form. Calibration runs the graph as it is at
// this point on the calibration inputs; then every Conv, MatMul and Gemm with a constant
// weight reads its activation through QuantizeLinear -> DequantizeLinear (one pair per
// tensor, shared by its readers) and its weight as an int8 constant through
// DequantizeLinear (symmetric, per tensor or per output channel). The graph still computes
// in float, so it runs anywhere and shows exactly where precision is lost; `qdq-folding`
// then turns the pairs into integer ops.
#include <cmath>
#include <map>
#include <sstream>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "compiler/quantization/int8_options.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

bool isFloat32(const Graph& g, ValueId v) {
    return v.valid() && g.value(v).type.kind == ValueType::Kind::Tensor && g.value(v).type.elemType == DType::Float32;
}

Tensor integerTensor(DType dtype, std::vector<int64_t> dims, const std::vector<int32_t>& values) {
    std::string bytes(values.size(), '\0');
    for (size_t i = 0; i < values.size(); ++i) bytes[i] = char(values[i]);
    const size_t size = bytes.size();
    return Tensor("q", dtype, std::move(dims), makeBuffer(std::move(bytes)), 0, size);
}

// A Conv/MatMul/Gemm this pass quantizes: the activation input and the weight's channel axis.
struct Target {
    NodeId node;
    ValueId activation;
    ValueId weight;
    int64_t channelAxis = 0;
};

class QuantizeInt8Pass : public Pass {
public:
    explicit QuantizeInt8Pass(Int8Options options) : m_options(std::move(options)) {
        if (!m_options.ranges) m_options.ranges = std::make_shared<ActivationRanges>();
    }
    std::string name() const override { return "int8-quantization"; }
    std::string description() const override {
        std::string d = "INT8 in QDQ form: Conv/MatMul/Gemm read activations (" +
                        std::string(m_options.symmetricActivations ? "symmetric int8" : "asymmetric uint8") + ", " +
                        calibrationMethodName(m_options.method) + ") and weights (symmetric int8, " +
                        (m_options.reduceRange ? "7-bit, " : "") + (m_options.perChannel ? "per channel" : "per tensor") + ") through Quantize/DequantizeLinear";
        if (m_options.calibration) d += "; calibrated on " + m_options.calibration->source;
        return d;
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        const int64_t opset = context.model.opsetVersion("");
        if (opset < 10) return Status::ok();  // QuantizeLinear starts at opset 10
        std::vector<Target> targets = findTargets(context);
        if (targets.empty()) {
            rw.finish();
            return Status::ok();
        }
        FSC_RETURN_IF_ERROR(calibrate(context, targets));
        std::map<uint32_t, ValueId> dequantized;  // activation -> its Q -> DQ output
        std::vector<NodeId> movedPools;            // float MaxPools now run on the quantized input
        for (const Target& t : targets) {
            if (context.cancelled()) return {ErrorCode::Cancelled, "cancelled"};
            const std::string& name = rw.graph().value(t.activation).name;
            auto range = m_options.ranges->find(name);
            if (range == m_options.ranges->end()) {
                context.reject("int8", t.node, "no calibration range for '" + name + "' (it was not float32 in every run)");
                continue;
            }
            ++context.counters.matched;
            auto [it, first] = dequantized.try_emplace(t.activation.index);
            const QuantParams q = activationParams(range->second, m_options.symmetricActivations);
            const NodeId pool = first ? movableMaxPool(rw, t.activation, targets, opset) : NodeId();
            if (first) it->second = quantizeActivation(rw, t, q, pool);
            rw.setInput(t.node, 0, it->second);
            if (pool.valid()) movedPools.push_back(pool);
            const int64_t slot = std::find(rw.graph().node(t.node).inputs.begin(), rw.graph().node(t.node).inputs.end(), t.weight) -
                                 rw.graph().node(t.node).inputs.begin();
            rw.setInput(t.node, size_t(slot), quantizeWeight(rw, t, opset));
            std::ostringstream why;
            why << "int8: activation range [" << range->second.min << ", " << range->second.max << "] ("
                << calibrationMethodName(m_options.method) << ") -> scale " << q.scale << ", zero point " << q.zeroPoint
                << "; weight " << (m_options.reduceRange ? "7-bit " : "")
                << (m_options.perChannel && opset >= 13 ? "per channel" : "per tensor");
            if (rw.commit("qdq", why.str())) ++context.counters.applied;
        }
        for (NodeId pool : movedPools) {
            removeIfUnread(rw, pool);
            rw.commit("qdq", "the MaxPool runs on the quantized values: QuantizeLinear moved in front of it");
        }
        context.counters.figures["calibration samples"] =
            m_options.calibration ? double(m_options.calibration->samples.size()) : 0.0;
        rw.finish();
        return Status::ok();
    }

private:
    std::vector<Target> findTargets(PassContext& context) const {
        const Rewriter& rw = context.rewriter;
        const Graph& g = rw.graph();
        std::vector<Target> targets;
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            const bool conv = isOp(n, "Conv"), matmul = isOp(n, "MatMul"), gemm = isOp(n, "Gemm");
            if (!conv && !matmul && !gemm) continue;
            if (m_options.only && !m_options.only->count(n.name)) continue;
            if (n.inputs.size() < 2 || !isFloat32(g, n.inputs[0]) || !isFloat32(g, n.inputs[1])) {
                context.reject("int8", id, "not float32");
                continue;
            }
            if (std::string p = exclusionMatch(n, m_options.exclude); !p.empty()) {
                context.reject("int8", id, "excluded by '" + p + "'");
                continue;
            }
            const Tensor* w = rw.constant(n.inputs[1]);
            if (!w || rw.constant(n.inputs[0])) {
                context.reject("int8", id, "the second input is not a constant weight (activation x activation stays float)");
                continue;
            }
            Target t{id, n.inputs[0], n.inputs[1], 0};
            if (conv && w->dims().size() < 3) continue;
            if (matmul) {
                if (w->dims().size() != 2) {
                    context.reject("int8", id, "the weight is not 2-D");
                    continue;
                }
                t.channelAxis = 1;
            }
            if (gemm) {
                if (intAttr(n, "transA", 0) != 0 || floatAttr(n, "alpha", 1.0f) != 1.0f) {
                    context.reject("int8", id, "transA or alpha != 1");
                    continue;
                }
                t.channelAxis = intAttr(n, "transB", 0) ? 0 : 1;
            }
            targets.push_back(t);
        }
        return targets;
    }

    Status calibrate(PassContext& context, const std::vector<Target>& targets) {
        const Graph& g = context.rewriter.graph();
        std::vector<ValueId> missing;
        for (const Target& t : targets)
            if (!m_options.ranges->count(g.value(t.activation).name) &&
                std::find(missing.begin(), missing.end(), t.activation) == missing.end())
                missing.push_back(t.activation);
        if (missing.empty()) return Status::ok();
        if (!m_options.calibration)
            m_options.calibration = std::make_shared<CalibrationData>(generateCalibrationData(g, 8, 1));
        auto ranges = calibrateRanges(g, context.model.opsetImports, missing, *m_options.calibration, m_options.method,
                                      m_options.percentile, context.cancel, m_options.threads);
        if (!ranges) return ranges.status();
        for (auto& [name, range] : *ranges) (*m_options.ranges)[name] = range;
        return Status::ok();
    }

    // A MaxPool whose output only quantization targets read (as their activation), in an
    // opset whose MaxPool takes 8-bit integers: its QuantizeLinear can go before it. Rounding
    // and saturation never reorder values, so the max of the quantized window is the
    // quantized max, and the pool then reads and writes a quarter of the bytes; the Conv in
    // front of it (ResNet's stem: Conv, Relu, MaxPool) then ends in a QuantizeLinear and
    // becomes a QLinearConv.
    NodeId movableMaxPool(const Rewriter& rw, ValueId activation, const std::vector<Target>& targets,
                          int64_t opset) const {
        const NodeId id = rw.producer(activation);
        if (opset < 12 || !id.valid() || rw.isGraphOutput(activation)) return {};
        const Node& pool = rw.graph().node(id);
        if (!isOp(pool, "MaxPool") || pool.inputs.empty() || !isFloat32(rw.graph(), pool.inputs[0])) return {};
        if (pool.outputs.size() > 1 && pool.outputs[1].valid()) return {};  // Indices
        for (NodeId reader : rw.users(activation)) {
            const bool target = std::any_of(targets.begin(), targets.end(), [&](const Target& t) {
                return t.node == reader && t.activation == activation;
            });
            if (!target || rw.graph().node(reader).inputs[0] != activation) return {};
        }
        return id;
    }

    ValueId quantizeActivation(Rewriter& rw, const Target& t, const QuantParams& q, NodeId movedPool) {
        const ValueType type = rw.graph().value(t.activation).type;  // copied: adding values moves them
        const std::string base = rw.graph().value(t.activation).name;
        const DType qtype = q.isSigned ? DType::Int8 : DType::UInt8;
        const ValueId scale = rw.addConstant(makeFloatTensor({}, {q.scale}), base + "_scale");
        const ValueId zero = rw.addConstant(integerTensor(qtype, {}, {q.zeroPoint}), base + "_zero_point");
        ValueType qt = type;
        qt.elemType = qtype;
        const ValueId quantized = rw.addIntermediate(qt, base + "_quantized");
        const ValueId dequantized = rw.addIntermediate(type, base + "_dequantized");
        const Node& reader = rw.graph().node(t.node);
        if (movedPool.valid()) {
            const Node pool = rw.graph().node(movedPool);  // copied: adding nodes moves them
            ValueType poolIn = rw.graph().value(pool.inputs[0]).type;
            poolIn.elemType = qtype;
            const ValueId before = rw.addIntermediate(poolIn, rw.graph().value(pool.inputs[0]).name + "_quantized");
            Node quant = makeNode("QuantizeLinear", "", pool, {pool.inputs[0], scale, zero}, {before});
            quant.name = rw.uniqueName(base + "/QuantizeLinear");
            rw.addNode(std::move(quant), movedPool, {movedPool});
            Node integerPool = makeNode("MaxPool", "", pool, {before}, {quantized}, pool.attributes);
            integerPool.name = pool.name;
            rw.addNode(std::move(integerPool), movedPool, {movedPool});
        } else {
            Node quant = makeNode("QuantizeLinear", "", reader, {t.activation, scale, zero}, {quantized});
            quant.name = rw.uniqueName(base + "/QuantizeLinear");
            rw.addNode(std::move(quant), t.node, {t.node});
        }
        Node dequant = makeNode("DequantizeLinear", "", rw.graph().node(t.node), {quantized, scale, zero}, {dequantized});
        dequant.name = rw.uniqueName(base + "/DequantizeLinear");
        rw.addNode(std::move(dequant), t.node, {t.node});
        return dequantized;
    }

    // Symmetric int8 in [-127, 127], or [-64, 64] with reduceRange: one scale, or one per
    // slice of the channel axis. A weight several layers share is quantized once.
    ValueId quantizeWeight(Rewriter& rw, const Target& t, int64_t opset) {
        const auto key = std::make_pair(t.weight.index, t.channelAxis);
        if (auto it = m_weights.find(key); it != m_weights.end()) return it->second;
        const Tensor& w = *rw.constant(t.weight);
        const bool perChannel = m_options.perChannel && opset >= 13;  // DequantizeLinear's axis
        const std::vector<int64_t>& dims = w.dims();
        const int64_t channels = perChannel ? dims[size_t(t.channelAxis)] : 1;
        int64_t inner = 1;
        for (size_t d = size_t(t.channelAxis) + 1; d < dims.size(); ++d) inner *= dims[d];
        const float* p = w.dataAs<float>();
        const int64_t n = w.numElements();
        auto channelOf = [&](int64_t i) { return perChannel ? (i / inner) % channels : 0; };
        std::vector<float> scales(size_t(channels), 0.0f);
        for (int64_t i = 0; i < n; ++i) scales[size_t(channelOf(i))] = std::max(scales[size_t(channelOf(i))], std::abs(p[i]));
        const int32_t levels = m_options.reduceRange ? 64 : 127;
        for (float& s : scales) s = s > 0 ? s / float(levels) : 1.0f;
        std::vector<int32_t> q(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
            q[size_t(i)] = std::clamp(int32_t(std::nearbyint(p[i] / scales[size_t(channelOf(i))])), -levels, levels);
        const std::string base = rw.graph().value(t.weight).name;
        const std::vector<int64_t> paramDims = perChannel ? std::vector<int64_t>{channels} : std::vector<int64_t>{};
        const ValueId wq = rw.addConstant(integerTensor(DType::Int8, dims, q), base + "_quantized");
        const ValueId scale = rw.addConstant(makeFloatTensor(paramDims, scales), base + "_scale");
        const ValueId zero = rw.addConstant(integerTensor(DType::Int8, paramDims, std::vector<int32_t>(size_t(channels), 0)),
                                            base + "_zero_point");
        ValueType type = rw.graph().value(t.weight).type;
        const ValueId out = rw.addIntermediate(type, base + "_dequantized");
        std::vector<Attribute> attrs;
        if (perChannel) attrs.push_back(fsc::intAttr("axis", t.channelAxis));
        Node dequant = makeNode("DequantizeLinear", "", rw.graph().node(t.node), {wq, scale, zero}, {out}, std::move(attrs));
        dequant.name = rw.uniqueName(base + "/DequantizeLinear");
        rw.addNode(std::move(dequant), t.node, {t.node});
        m_weights[key] = out;
        return out;
    }

    Int8Options m_options;
    std::map<std::pair<uint32_t, int64_t>, ValueId> m_weights;  // (float weight, axis) -> its DequantizeLinear
};

}  // namespace

std::unique_ptr<Pass> quantizeInt8(Int8Options options) {
    return std::make_unique<QuantizeInt8Pass>(std::move(options));
}
std::unique_ptr<Pass> quantizeInt8() {
    return quantizeInt8(Int8Options{});
}

}  // namespace fsc::passes
