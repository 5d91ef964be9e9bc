// qdq-folding: the QDQ form's float Conv/MatMul/Gemm between DequantizeLinear inputs become
// integer ops. Where the result goes straight (or through a Relu whose work the output
// zero point already does) into one QuantizeLinear, Conv and MatMul become QLinearConv /
// QLinearMatMul, which produce the next layer's int8 input themselves. Otherwise the op
// becomes ConvInteger / MatMulInteger accumulating in int32, followed by one multiply by
// the float scale (activation scale x weight scale) and the float bias.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/qdq_match.h"
#include "core/graph_builder.h"

namespace fsc::passes {

// A DequantizeLinear feeding the op, read back: its integer input, scale and zero point.
std::optional<Dequantized> dequantizedInput(const Rewriter& rw, ValueId v) {
    const NodeId id = rw.producer(v);
    if (!id.valid() || !isOp(rw.graph().node(id), "DequantizeLinear")) return std::nullopt;
    const Node& dq = rw.graph().node(id);
    Dequantized d{id, dq.inputs[0], dq.inputs[1], dq.inputs.size() > 2 ? dq.inputs[2] : ValueId(), {}, 0};
    auto scales = constantValues(rw, d.scale);
    if (!scales || scales->empty()) return std::nullopt;
    d.scales = *scales;
    if (d.zeroPoint.valid()) {
        auto zeros = constantValues(rw, d.zeroPoint);
        if (!zeros) return std::nullopt;
        for (double z : *zeros)
            if (z != (*zeros)[0]) return std::nullopt;  // per-channel zero points that differ
        d.zero = zeros->empty() ? 0 : (*zeros)[0];
    }
    return d;
}

namespace {

// What an integer rewrite of op `id` needs, or why it cannot be done.
struct IntegerOp {
    Dequantized x, w;
    std::string reason;  // non-empty: rejected
};

// A convolution with one input and one output channel a group, 2-D: QLinearConv's depthwise
// path takes it (backends/cpu/qlinear_depthwise.h).
bool isDepthwise2d(const Rewriter& rw, const Node& conv, ValueId weight) {
    const Tensor* w = rw.constant(weight);
    const int64_t group = intAttr(conv, "group", 1);
    return w && w->dims().size() == 4 && w->dims()[1] == 1 && w->dims()[0] == group;
}

// `requantized`: the op ends in a QuantizeLinear (QLinearConv), which takes depthwise layers.
IntegerOp readIntegerOp(const Rewriter& rw, NodeId id, bool requantized = false) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    IntegerOp op;
    auto x = dequantizedInput(rw, n.inputs[0]);
    auto w = n.inputs.size() > 1 ? dequantizedInput(rw, n.inputs[1]) : std::nullopt;
    if (!x || !w) return op;  // not QDQ: nothing to say
    if (x->scales.size() != 1) op.reason = "the activation has more than one scale";
    else if (!rw.constant(w->quantized)) op.reason = "the weight is not a constant";
    else if (w->zero != 0) op.reason = "the weight's zero point is not 0";
    else if (dtypeOf(g, n.outputs[0]) != DType::Float32) op.reason = "the output is not float32";
    else if (isOp(n, "Conv") && intAttr(n, "group", 1) > 1 && !(requantized && isDepthwise2d(rw, n, w->quantized)))
        // MobileNetV2's QDQ export ran 11.0 ms with the int32 depthwise path, 7.8 in float
        op.reason = requantized ? "a grouped convolution that is not 2-D depthwise"
                                : "a grouped convolution without a QuantizeLinear after it: the float kernel is faster";
    else if (isOp(n, "Gemm") && (intAttr(n, "transA", 0) != 0 || floatAttr(n, "alpha", 1.0f) != 1.0f))
        op.reason = "transA or alpha != 1";
    op.x = *x;
    op.w = *w;
    return op;
}

bool isQuantizedOp(const Node& n) {
    return isOp(n, "Conv") || isOp(n, "MatMul") || isOp(n, "Gemm");
}

// The op's output goes, possibly through a Relu, only into one QuantizeLinear with scalar
// parameters: the nodes (op, [relu], quantize) an QLinear op replaces.
std::optional<std::vector<NodeId>> requantizedChain(const Rewriter& rw, NodeId opId) {
    const Graph& g = rw.graph();
    const Node& op = g.node(opId);
    if (!isOp(op, "Conv") && !isOp(op, "MatMul") && !isOp(op, "Gemm")) return std::nullopt;
    std::vector<NodeId> chain{opId};
    ValueId out = op.outputs[0];
    for (int step = 0; step < 2; ++step) {
        const NodeId next = rw.soleUser(out);
        if (!next.valid() || rw.isGraphOutput(out) || rw.isCaptured(out)) return std::nullopt;
        const Node& n = g.node(next);
        if (isOp(n, "QuantizeLinear")) {
            if (n.inputs.size() < 3 || !constantScalar(rw, n.inputs[1]) || !constantScalar(rw, n.inputs[2])) return std::nullopt;
            if (chain.size() == 2) {  // a Relu: exact only when the zero point is the type's lowest value
                const DType t = rw.constant(n.inputs[2])->dtype();
                const double lowest = t == DType::UInt8 ? 0 : t == DType::Int8 ? -128 : 1;
                if (*constantScalar(rw, n.inputs[2]) != lowest) return std::nullopt;
            }
            chain.push_back(next);
            return chain;
        }
        if (step == 0 && isOp(n, "Relu")) {
            chain.push_back(next);
            out = n.outputs[0];
            continue;
        }
        return std::nullopt;
    }
    return std::nullopt;
}

Tensor int32Tensor(std::vector<int64_t> dims, const std::vector<int32_t>& values) {
    std::string bytes(values.size() * 4, '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    const size_t size = bytes.size();
    return Tensor("bias", DType::Int32, std::move(dims), makeBuffer(std::move(bytes)), 0, size);
}

std::vector<Attribute> convAttributes(const Node& conv) {
    std::vector<Attribute> attrs;
    for (const Attribute& a : conv.attributes)
        if (a.name == "auto_pad" || a.name == "dilations" || a.name == "group" || a.name == "kernel_shape" ||
            a.name == "pads" || a.name == "strides")
            attrs.push_back(a);
    return attrs;
}

// Conv/MatMul, [Relu,] QuantizeLinear: the nodes one QLinear op replaces.
struct RequantizedOp {
    std::vector<NodeId> chain;  // op, [relu], quantize
    bool conv = false;
    NodeId op() const { return chain.front(); }
    NodeId quantize() const { return chain.back(); }
};

// A bias in the int32 accumulator's units: activation scale x weight scale per channel.
ValueId accumulatorBias(Rewriter& rw, const IntegerOp& io, const std::vector<double>& bias, const std::string& name) {
    std::vector<int32_t> q32(bias.size());
    for (size_t c = 0; c < bias.size(); ++c) {
        const double s = io.x.scales[0] * io.w.scales[io.w.scales.size() == 1 ? 0 : c];
        q32[c] = int32_t(std::clamp(std::nearbyint(bias[c] / s), -2147483648.0, 2147483647.0));
    }
    return rw.addConstant(int32Tensor({int64_t(bias.size())}, q32), name + "/bias_int32");
}

// A Gemm's beta x C as one value per output column (empty without C), when C is a constant
// of one element or one per column; `weight` is B's constant (before its DequantizeLinear).
std::optional<std::vector<double>> gemmBiasPerColumn(const Rewriter& rw, const Node& gemm, ValueId weight) {
    if (gemm.inputs.size() < 3 || !gemm.inputs[2].valid()) return std::vector<double>{};
    const Tensor* b = rw.constant(weight);
    auto c = constantValues(rw, gemm.inputs[2]);
    if (!b || b->dims().size() != 2 || !c) return std::nullopt;
    const int64_t n = b->dims()[intAttr(gemm, "transB", 0) ? 0 : 1];
    const Tensor& ct = *rw.constant(gemm.inputs[2]);
    const bool row = ct.dims().size() <= 1 || (ct.dims().size() == 2 && ct.dims()[0] == 1);
    if (!row || (int64_t(c->size()) != n && c->size() != 1)) return std::nullopt;
    const double beta = floatAttr(gemm, "beta", 1.0f);
    std::vector<double> bias(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) bias[size_t(j)] = beta * (*c)[c->size() == 1 ? 0 : size_t(j)];
    return bias;
}

class QLinearPattern : public TypedPattern<RequantizedOp> {
public:
    explicit QLinearPattern(std::string declineAll) : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "qlinear"; }
    std::set<std::string> rootOps() const override { return {"QuantizeLinear"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Node& q = rw.graph().node(anchor);
        if (!isOp(q, "QuantizeLinear")) return MatchResult::none();
        NodeId opId = rw.producer(q.inputs[0]);
        if (opId.valid() && isOp(rw.graph().node(opId), "Relu")) opId = rw.producer(rw.graph().node(opId).inputs[0]);
        if (!opId.valid() || !isQuantizedOp(rw.graph().node(opId))) return MatchResult::none();
        auto chain = requantizedChain(rw, opId);
        if (!chain || chain->back() != anchor) return MatchResult::none();
        IntegerOp op = readIntegerOp(rw, opId, true);
        if (!op.x.node.valid()) return MatchResult::none();
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        if (!op.reason.empty()) return MatchResult::rejected(op.reason);
        const Node& n = rw.graph().node(opId);
        if (isOp(n, "Conv") && n.inputs.size() > 2 && n.inputs[2].valid() && !rw.constant(n.inputs[2]))
            return MatchResult::rejected("the bias is not a constant");
        if (isOp(n, "Gemm") && !gemmBiasPerColumn(rw, n, op.w.quantized)) return MatchResult::rejected("C is not a constant of one value or one per column");
        return MatchResult::matched(RequantizedOp{*chain, isOp(n, "Conv")});
    }

    std::string rewrite(Rewriter& rw, const RequantizedOp& m) const override {
        const Node op = rw.graph().node(m.op());
        const Node q = rw.graph().node(m.quantize());
        const IntegerOp io = readIntegerOp(rw, m.op(), true);
        const bool conv = m.conv, gemm = isOp(op, "Gemm");
        const std::string opType = conv ? "QLinearConv" : gemm ? "QGemm" : "QLinearMatMul";
        std::vector<ValueId> inputs{io.x.quantized, io.x.scale, io.x.zeroPoint, io.w.quantized, io.w.scale,
                                    io.w.zeroPoint, q.inputs[1], q.inputs[2]};
        std::vector<Attribute> attrs;
        if (gemm) {  // QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point
            const std::vector<double> c = gemmBiasPerColumn(rw, op, io.w.quantized).value_or(std::vector<double>{});
            inputs.insert(inputs.begin() + 6, c.empty() ? ValueId() : accumulatorBias(rw, io, c, op.name));
            attrs = {fsc::intAttr("transB", intAttr(op, "transB", 0))};
        } else if (conv) {
            attrs = convAttributes(op);
            if (op.inputs.size() > 2 && op.inputs[2].valid())
                inputs.push_back(accumulatorBias(rw, io, *constantValues(rw, op.inputs[2]), op.name));
        }
        Node fused = makeNode(opType, gemm ? "com.microsoft" : "", op, inputs, {q.outputs[0]}, std::move(attrs));
        fused.name = op.name;
        for (auto it = m.chain.rbegin(); it != m.chain.rend(); ++it) rw.removeNode(*it);
        rw.addNode(std::move(fused), m.quantize(), m.chain);
        removeIfUnread(rw, io.x.node);
        removeIfUnread(rw, io.w.node);
        if (gemm) return "QGemm: int8 in, int8 out; C joins the int32 accumulator, the output scale requantizes it";
        return opType + ": int8 in, int8 out; the output scale requantizes the int32 accumulator" +
               (m.chain.size() == 3 ? ", and its zero point at the lowest value does the Relu" : "");
    }

private:
    std::string m_declineAll;
};

// A Conv/MatMul/Gemm between DequantizeLinear inputs, without a QuantizeLinear after it.
struct DequantizedOp {
    NodeId op;
    bool conv = false;
};

class IntegerOpPattern : public TypedPattern<DequantizedOp> {
public:
    explicit IntegerOpPattern(std::string declineAll) : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "integer-op"; }
    std::set<std::string> rootOps() const override { return {"Conv", "MatMul", "Gemm"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Node& n = rw.graph().node(anchor);
        if (!isQuantizedOp(n)) return MatchResult::none();
        IntegerOp op = readIntegerOp(rw, anchor);
        if (!op.x.node.valid()) return MatchResult::none();
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        if (requantizedChain(rw, anchor)) return MatchResult::none();  // QLinearPattern's, at the QuantizeLinear
        if (!op.reason.empty()) return MatchResult::rejected(op.reason);
        if (isOp(n, "Gemm") && n.inputs.size() > 2 && n.inputs[2].valid() && floatAttr(n, "beta", 1.0f) != 1.0f &&
            !rw.constant(n.inputs[2]))
            return MatchResult::rejected("beta != 1 on a C that is not a constant");
        return MatchResult::matched(DequantizedOp{anchor, isOp(n, "Conv")});
    }

    std::string rewrite(Rewriter& rw, const DequantizedOp& m) const override {
        const NodeId id = m.op;
        const std::string opType = m.conv ? "ConvInteger" : "MatMulInteger";
        const Node op = rw.graph().node(id);
        const IntegerOp io = readIntegerOp(rw, id);
        const bool conv = isOp(op, "Conv"), gemm = isOp(op, "Gemm");
        const ValueType outType = rw.graph().value(op.outputs[0]).type;
        const std::string base = op.name;

        ValueId weight = io.w.quantized;
        if (gemm && intAttr(op, "transB", 0)) {
            auto [it, fresh] = m_transposed.try_emplace(io.w.quantized.index);
            if (fresh) it->second = transposedWeight(rw, io.w.quantized);
            weight = it->second;
        }
        // Per-channel scales along the output channel: [M, 1, ...] for Conv, [N] for MatMul.
        std::vector<float> scales;
        for (double s : io.w.scales) scales.push_back(float(io.x.scales[0] * s));
        std::vector<int64_t> scaleDims;
        if (scales.size() > 1) {
            scaleDims = {int64_t(scales.size())};
            if (conv && outType.shape.rankKnown())
                for (size_t d = 2; d < outType.shape.rank(); ++d) scaleDims.push_back(1);
        }
        const ValueId scale = rw.addConstant(makeFloatTensor(scaleDims, scales), base + "/scale");

        ValueType i32 = outType;
        i32.elemType = DType::Int32;
        const ValueId acc = rw.addIntermediate(i32, base + "/int32");
        const ValueId wide = rw.addIntermediate(outType, base + "/float");
        ValueId bias;
        if (conv && op.inputs.size() > 2 && op.inputs[2].valid()) bias = channelBias(rw, op.inputs[2], outType, base);
        if (gemm && op.inputs.size() > 2 && op.inputs[2].valid()) bias = gemmBias(rw, op);
        const ValueId scaled = bias.valid() ? rw.addIntermediate(outType, base + "/scaled") : op.outputs[0];

        std::vector<ValueId> intInputs{io.x.quantized, weight, io.x.zeroPoint};
        Node integer = makeNode(opType, "", op, intInputs, {acc}, conv ? convAttributes(op) : std::vector<Attribute>{});
        integer.name = base;
        Node cast = makeNode("Cast", "", op, {acc}, {wide}, {fsc::intAttr("to", int64_t(DType::Float32))});
        Node mul = makeNode("Mul", "", op, {wide, scale}, {scaled});
        rw.removeNode(id);
        rw.addNode(std::move(integer), id, {id});
        rw.addNode(std::move(cast), id, {id});
        rw.addNode(std::move(mul), id, {id});
        if (bias.valid()) rw.addNode(makeNode("Add", "", op, {scaled, bias}, {op.outputs[0]}), id, {id});
        removeIfUnread(rw, io.x.node);
        removeIfUnread(rw, io.w.node);
        return opType + " accumulates int8 x int8 in int32; one multiply by activation scale x weight scale" +
               (bias.valid() ? " and the float bias" : "") + " give the float result";
    }

private:
    static ValueId transposedWeight(Rewriter& rw, ValueId w) {
        const Tensor& t = *rw.constant(w);
        const int64_t n = t.dims()[0], k = t.dims()[1];
        std::string bytes(size_t(n * k), '\0');
        const auto* p = t.dataAs<int8_t>();
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < k; ++j) bytes[size_t(j * n + i)] = char(p[i * k + j]);
        const size_t size = bytes.size();
        return rw.addConstant(Tensor("wt", t.dtype(), {k, n}, makeBuffer(std::move(bytes)), 0, size),
                              rw.graph().value(w).name + "_transposed");
    }

    static ValueId channelBias(Rewriter& rw, ValueId b, const ValueType& outType, const std::string& base) {
        const std::vector<double> values = *constantValues(rw, b);
        std::vector<int64_t> dims{int64_t(values.size())};
        if (outType.shape.rankKnown())
            for (size_t d = 2; d < outType.shape.rank(); ++d) dims.push_back(1);
        return rw.addConstant(makeFloatTensor(dims, std::vector<float>(values.begin(), values.end())), base + "/bias");
    }

    static ValueId gemmBias(Rewriter& rw, const Node& gemm) {
        const float beta = floatAttr(gemm, "beta", 1.0f);
        if (beta == 1.0f) return gemm.inputs[2];
        const Tensor& c = *rw.constant(gemm.inputs[2]);
        const std::vector<double> values = *constantValues(rw, gemm.inputs[2]);
        std::vector<float> scaled;
        for (double v : values) scaled.push_back(float(v * beta));
        return rw.addConstant(makeFloatTensor(c.dims(), scaled), gemm.name + "/bias");
    }

    mutable std::map<uint32_t, ValueId> m_transposed;  // a shared int8 weight is transposed once
    std::string m_declineAll;
};

}  // namespace

std::unique_ptr<Pass> foldQdq(std::string declineAll) {
    std::vector<std::unique_ptr<RewritePattern>> patterns;
    patterns.push_back(std::make_unique<QLinearPattern>(declineAll));
    patterns.push_back(std::make_unique<IntegerOpPattern>(declineAll));
    for (auto& pattern : qdqOperatorPatterns(declineAll)) patterns.push_back(std::move(pattern));
    return std::make_unique<PatternPass>(
        "qdq-folding", "Conv/MatMul/Gemm between DequantizeLinear inputs become QLinearConv/QLinearMatMul, or ConvInteger/MatMulInteger with a float scale; QDQ Add, Mul, GlobalAveragePool and Gemm become QLinearAdd, QLinearMul, QLinearGlobalAveragePool and QGemm; DequantizeLinear, a reshaping op or MaxPool and the same QuantizeLinear become the op on the bytes",
        std::move(patterns));
}

}  // namespace fsc::passes
