// qdq-folding's patterns for the QDQ form's other ops: additions, products, joins and global
// pooling become ONNX Runtime's com.microsoft QLinearAdd, QLinearMul, QLinearConcat and
// QLinearGlobalAveragePool (as its `extended`
// level makes them, so compiled models still run there), and a reshaping op between a
// DequantizeLinear and a QuantizeLinear with the same parameters runs on the bytes, as does a
// MaxPool.
#include <cfloat>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/qdq_match.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

// The QuantizeLinear `q` (scalar constant scale and zero point of 8 bits) and the one node
// between it and a DequantizeLinear `dq` with scalar parameters, when that node is `op` and
// reads `dq`'s output alone, and the Q reads its output alone.
struct Sandwich {
    NodeId dq, op, q;
    Dequantized in;
};

std::optional<Sandwich> sandwich(const Rewriter& rw, NodeId qId, const char* opType) {
    const Graph& g = rw.graph();
    const Node& q = g.node(qId);
    if (!isOp(q, "QuantizeLinear") || q.inputs.size() < 3 || !q.inputs[2].valid()) return std::nullopt;
    const NodeId opId = rw.producer(q.inputs[0]);
    if (!opId.valid() || !isOp(g.node(opId), opType)) return std::nullopt;
    const Node& op = g.node(opId);
    const ValueId mid = op.outputs[0];
    if (rw.soleUser(mid) != qId || rw.isGraphOutput(mid) || rw.isCaptured(mid)) return std::nullopt;
    // The DequantizeLinear may have other readers (a squeeze-and-excitation block pools the
    // values it also scales): it stays for them.
    auto in = dequantizedInput(rw, op.inputs[0]);
    if (!in || !in->zeroPoint.valid() || in->scales.size() != 1) return std::nullopt;
    const DType type = dtypeOf(g, in->quantized);
    if ((type != DType::UInt8 && type != DType::Int8) || dtypeOf(g, q.outputs[0]) != type) return std::nullopt;
    if (!constantScalar(rw, q.inputs[1]) || !constantScalar(rw, q.inputs[2])) return std::nullopt;
    return Sandwich{in->node, opId, qId, *in};
}

// Whether a QuantizeLinear's zero point is its type's lowest value, where quantizing already
// does a Relu's work: PyTorch's quantized add_relu and conv_relu write their outputs so.
bool zeroPointIsLowest(const Rewriter& rw, const Node& q) {
    const auto zero = constantScalar(rw, q.inputs[2]);
    if (!zero) return false;
    const DType t = dtypeOf(rw.graph(), q.outputs[0]);
    return (t == DType::UInt8 && *zero == 0) || (t == DType::Int8 && *zero == -128);
}

// DequantizeLinear, DequantizeLinear, Add or Mul, [Relu,] QuantizeLinear with 8-bit data of one
// type and scalar parameters (the QDQ form's residual addition, a squeeze-and-excitation
// block's scaling): one com.microsoft.QLinearAdd or QLinearMul, which computes the same float32
// steps in registers (backends/cpu/qlinear_binary.cpp). A Relu only where the output's zero
// point is its lowest value (the clamp then does it).
struct QuantizedBinary {
    NodeId binary, relu, quantize;
    Dequantized a, b;
};

class QLinearBinaryPattern : public TypedPattern<QuantizedBinary> {
public:
    QLinearBinaryPattern(std::string op, std::string declineAll) : m_op(std::move(op)), m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return m_op == "Add" ? "qlinear-add" : "qlinear-mul"; }
    std::set<std::string> rootOps() const override { return {"QuantizeLinear"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& q = g.node(anchor);
        if (!isOp(q, "QuantizeLinear") || q.inputs.size() < 3 || !q.inputs[2].valid()) return MatchResult::none();
        NodeId addId = rw.producer(q.inputs[0]), reluId;
        if (addId.valid() && isOp(g.node(addId), "Relu")) {
            reluId = addId;
            const ValueId relued = g.node(reluId).outputs[0];
            if (rw.soleUser(relued) != anchor || rw.isGraphOutput(relued) || rw.isCaptured(relued)) return MatchResult::none();
            addId = rw.producer(g.node(reluId).inputs[0]);
        }
        if (!addId.valid() || !isOp(g.node(addId), m_op.c_str())) return MatchResult::none();
        const Node& add = g.node(addId);
        const NodeId reader = reluId.valid() ? reluId : anchor;
        if (rw.soleUser(add.outputs[0]) != reader || rw.isGraphOutput(add.outputs[0]) || rw.isCaptured(add.outputs[0]))
            return MatchResult::none();
        auto a = dequantizedInput(rw, add.inputs[0]);
        auto b = add.inputs.size() > 1 ? dequantizedInput(rw, add.inputs[1]) : std::nullopt;
        if (!a || !b || !a->zeroPoint.valid() || !b->zeroPoint.valid()) return MatchResult::none();
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        const DType type = dtypeOf(g, a->quantized);
        if ((type != DType::UInt8 && type != DType::Int8) || dtypeOf(g, b->quantized) != type ||
            dtypeOf(g, q.outputs[0]) != type)
            return MatchResult::rejected("the inputs and the output are not all uint8 or all int8");
        if (a->scales.size() != 1 || b->scales.size() != 1 || !constantScalar(rw, q.inputs[1]) ||
            !constantScalar(rw, q.inputs[2]))
            return MatchResult::rejected("a scale or zero point is not one constant");
        if (dtypeOf(g, add.outputs[0]) != DType::Float32) return MatchResult::rejected("the result is not float32");
        if (reluId.valid() && !zeroPointIsLowest(rw, q))
            return MatchResult::rejected("a Relu before a QuantizeLinear whose zero point is not its lowest value");
        return MatchResult::matched(QuantizedBinary{addId, reluId, anchor, *a, *b});
    }

    std::string rewrite(Rewriter& rw, const QuantizedBinary& m) const override {
        const Node add = rw.graph().node(m.binary);
        const Node q = rw.graph().node(m.quantize);
        Node fused = makeNode("QLinear" + m_op, "com.microsoft", add,
                              {m.a.quantized, m.a.scale, m.a.zeroPoint, m.b.quantized, m.b.scale, m.b.zeroPoint,
                               q.inputs[1], q.inputs[2]},
                              {q.outputs[0]});
        fused.name = add.name;
        rw.removeNode(m.quantize);
        if (m.relu.valid()) rw.removeNode(m.relu);
        rw.removeNode(m.binary);
        std::vector<NodeId> replaced{m.binary, m.quantize};
        if (m.relu.valid()) replaced.insert(replaced.begin() + 1, m.relu);
        rw.addNode(std::move(fused), m.quantize, replaced);
        removeIfUnread(rw, m.a.node);
        removeIfUnread(rw, m.b.node);
        return "QLinear" + m_op + ": the two dequantized inputs " + (m_op == "Add" ? "added" : "multiplied") +
               " and quantized again in one pass over the bytes" +
               (m.relu.valid() ? ", and its zero point at the lowest value does the Relu" : "");
    }

private:
    std::string m_op, m_declineAll;
};

// DequantizeLinear, a reshaping op, QuantizeLinear with the same scale and zero point: the op
// on the bytes. Quantizing (x - z) s again with s and z gives x back exactly: (x - z) s / s
// is within 2^-23 of x - z, which is at most 255, and a normal scale keeps it so.
// MaxPool likewise, where the scale is positive (dequantizing then keeps the bytes' order)
// and nothing reads its indices.
class ReshapeBytesPattern : public TypedPattern<Sandwich> {
public:
    ReshapeBytesPattern(std::string op, std::string declineAll) : m_op(std::move(op)), m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "qdq-" + m_op; }
    std::set<std::string> rootOps() const override { return {"QuantizeLinear"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        auto s = sandwich(rw, anchor, m_op.c_str());
        if (!s) return MatchResult::none();
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        const Node& q = rw.graph().node(anchor);
        const double scale = s->in.scales[0];
        if (*constantScalar(rw, q.inputs[1]) != scale || *constantScalar(rw, q.inputs[2]) != s->in.zero)
            return MatchResult::rejected("the QuantizeLinear's scale or zero point differs from the DequantizeLinear's");
        if (!(std::fabs(scale) >= double(FLT_MIN) && std::fabs(scale) <= 1e30))
            return MatchResult::rejected("the scale is not a normal float");
        if (m_op == "MaxPool") {
            const Node& pool = rw.graph().node(s->op);
            if (scale < 0) return MatchResult::rejected("a negative scale reverses the bytes' order");
            if (pool.outputs.size() > 1 && pool.outputs[1].valid()) return MatchResult::rejected("its indices are read");
        }
        return MatchResult::matched(*s);
    }

    std::string rewrite(Rewriter& rw, const Sandwich& m) const override {
        const Node op = rw.graph().node(m.op);
        const Node q = rw.graph().node(m.q);
        Node moved = op;
        moved.inputs[0] = m.in.quantized;
        moved.outputs = {q.outputs[0]};
        rw.removeNode(m.q);
        rw.removeNode(m.op);
        rw.addNode(std::move(moved), m.q, {m.op, m.q});
        removeIfUnread(rw, m.dq);
        if (m_op == "MaxPool")
            return "MaxPool on the 8-bit values: with a positive scale the largest byte dequantizes to the largest value, "
                   "and quantizing it with the same scale and zero point gives it back";
        return m_op + " on the 8-bit values: quantizing their dequantized values with the same scale and zero point gives them back";
    }

private:
    std::string m_op, m_declineAll;
};

// DequantizeLinears (each its own scalar scale and zero point), Concat, QuantizeLinear:
// com.microsoft.QLinearConcat, which maps each input's bytes to the output's through a table
// of what the float steps give (backends/cpu/qlinear_concat.cpp): PyTorch's quantized
// Inception blocks join their branches so.
struct QuantizedConcat {
    NodeId concat, quantize;
    std::vector<Dequantized> parts;
};

class QLinearConcatPattern : public TypedPattern<QuantizedConcat> {
public:
    explicit QLinearConcatPattern(std::string declineAll) : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "qlinear-concat"; }
    std::set<std::string> rootOps() const override { return {"QuantizeLinear"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& q = g.node(anchor);
        if (!isOp(q, "QuantizeLinear") || q.inputs.size() < 3 || !q.inputs[2].valid()) return MatchResult::none();
        const NodeId concatId = rw.producer(q.inputs[0]);
        if (!concatId.valid() || !isOp(g.node(concatId), "Concat")) return MatchResult::none();
        const Node& concat = g.node(concatId);
        if (rw.soleUser(concat.outputs[0]) != anchor || rw.isGraphOutput(concat.outputs[0]) ||
            rw.isCaptured(concat.outputs[0]) || concat.inputs.empty())
            return MatchResult::none();
        std::vector<Dequantized> parts;
        for (ValueId in : concat.inputs) {
            auto d = in.valid() ? dequantizedInput(rw, in) : std::nullopt;
            if (!d || !d->zeroPoint.valid()) return MatchResult::none();
            parts.push_back(*d);
        }
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        const DType type = dtypeOf(g, q.outputs[0]);
        if (type != DType::UInt8 && type != DType::Int8) return MatchResult::rejected("the output is not 8-bit");
        for (const Dequantized& d : parts) {
            if (dtypeOf(g, d.quantized) != type) return MatchResult::rejected("the inputs and the output are not all one 8-bit type");
            if (d.scales.size() != 1) return MatchResult::rejected("an input's scale is not one constant");
        }
        if (!constantScalar(rw, q.inputs[1]) || !constantScalar(rw, q.inputs[2]))
            return MatchResult::rejected("the output's scale or zero point is not one constant");
        if (dtypeOf(g, concat.outputs[0]) != DType::Float32) return MatchResult::rejected("the Concat is not of float32");
        return MatchResult::matched(QuantizedConcat{concatId, anchor, std::move(parts)});
    }

    std::string rewrite(Rewriter& rw, const QuantizedConcat& m) const override {
        const Node concat = rw.graph().node(m.concat);
        const Node q = rw.graph().node(m.quantize);
        std::vector<ValueId> inputs{q.inputs[1], q.inputs[2]};
        for (const Dequantized& d : m.parts) inputs.insert(inputs.end(), {d.quantized, d.scale, d.zeroPoint});
        Node fused = makeNode("QLinearConcat", "com.microsoft", concat, inputs, {q.outputs[0]},
                              {fsc::intAttr("axis", intAttr(concat, "axis", 0))});
        fused.name = concat.name;
        rw.removeNode(m.quantize);
        rw.removeNode(m.concat);
        rw.addNode(std::move(fused), m.quantize, {m.concat, m.quantize});
        for (const Dequantized& d : m.parts) removeIfUnread(rw, d.node);
        return "QLinearConcat: each input's bytes mapped to the output's scale and zero point, joined in one pass";
    }

private:
    std::string m_declineAll;
};

// DequantizeLinear, GlobalAveragePool, QuantizeLinear: com.microsoft.QLinearGlobalAveragePool,
// which sums the bytes in integers (backends/cpu/qlinear_pool.cpp).
class QLinearPoolPattern : public TypedPattern<Sandwich> {
public:
    explicit QLinearPoolPattern(std::string declineAll) : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "qlinear-global-average-pool"; }
    std::set<std::string> rootOps() const override { return {"QuantizeLinear"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        auto s = sandwich(rw, anchor, "GlobalAveragePool");
        if (!s) return MatchResult::none();
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        return MatchResult::matched(*s);
    }

    std::string rewrite(Rewriter& rw, const Sandwich& m) const override {
        const Node op = rw.graph().node(m.op);
        const Node q = rw.graph().node(m.q);
        Node fused = makeNode("QLinearGlobalAveragePool", "com.microsoft", op,
                              {m.in.quantized, m.in.scale, m.in.zeroPoint, q.inputs[1], q.inputs[2]}, {q.outputs[0]},
                              {fsc::intAttr("channels_last", 0)});
        fused.name = op.name;
        rw.removeNode(m.q);
        rw.removeNode(m.op);
        rw.addNode(std::move(fused), m.q, {m.op, m.q});
        removeIfUnread(rw, m.dq);
        return "QLinearGlobalAveragePool: the mean of each channel's bytes, quantized again";
    }

private:
    std::string m_declineAll;
};

}  // namespace

std::vector<std::unique_ptr<RewritePattern>> qdqOperatorPatterns(const std::string& declineAll) {
    std::vector<std::unique_ptr<RewritePattern>> patterns;
    patterns.push_back(std::make_unique<QLinearBinaryPattern>("Add", declineAll));
    patterns.push_back(std::make_unique<QLinearBinaryPattern>("Mul", declineAll));
    patterns.push_back(std::make_unique<QLinearPoolPattern>(declineAll));
    patterns.push_back(std::make_unique<QLinearConcatPattern>(declineAll));
    for (const char* op : {"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "MaxPool"})
        patterns.push_back(std::make_unique<ReshapeBytesPattern>(op, declineAll));
    return patterns;
}

}  // namespace fsc::passes
