// qdq-folding's patterns for the QDQ form's other ops: additions, products, joins and global
// pooling become ONNX Runtime's com.microsoft QLinearAdd, QLinearMul, QLinearConcat and
// QLinearGlobalAveragePool (as its `extended`
// level makes them, so compiled models still run there), and a reshaping op between a
// DequantizeLinear and a QuantizeLinear with the same parameters runs on the bytes, as does a
// MaxPool.
#include <algorithm>
#include <cfloat>
#include <map>

#include "compiler/passes/node_evaluator.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/qdq_match.h"
#include "compiler/runtime/elementwise_program.h"
#include "compiler/runtime/fused_domain.h"
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

// Float element-wise steps between one DequantizeLinear and a QuantizeLinear (both scalar
// parameters) whose every operand is that DequantizeLinear's output, another such step's, or
// a scalar constant: the QuantizeLinear's bytes are a function of the DequantizeLinear's
// byte alone, one of 256 values. They become ai.fusescope.QuantizedLookup of a table the CPU
// kernels compute here, step by step on all 256 bytes, so the table holds what the steps
// would have given (MobileNetV3's hardswish: DequantizeLinear, HardSigmoid, Mul,
// QuantizeLinear; a QDQ SiLU or sigmoid gate likewise). ONNX Runtime runs them in float.
struct QuantizedFunction {
    NodeId quantize;
    Dequantized source;
    std::vector<NodeId> steps;  // in graph order
    Tensor table;
};

bool lookupStep(const Node& n) {
    static const std::set<std::string> ops = [] {
        std::set<std::string> s = elementwiseOpTypes();
        s.insert({"Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu", "Selu", "Softplus", "Mish",
                  "ThresholdedRelu", "Identity"});
        return s;
    }();
    // A Clip of opset 6's attributes would read its bounds otherwise at the opset the table is
    // computed in (13: a QDQ model has 10 or later, where these ops mean the same).
    if (isOp(n, "Clip") && (n.attribute("min") || n.attribute("max"))) return false;
    return n.domain.empty() && ops.count(n.opType) && n.outputs.size() == 1;
}

class QuantizedLookupPattern : public TypedPattern<QuantizedFunction> {
public:
    explicit QuantizedLookupPattern(std::string declineAll) : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "quantized-lookup"; }
    std::set<std::string> rootOps() const override { return {"QuantizeLinear"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        constexpr size_t kMostSteps = 16;
        const Graph& g = rw.graph();
        const Node& q = g.node(anchor);
        if (!isOp(q, "QuantizeLinear") || q.inputs.size() < 3 || !q.inputs[2].valid()) return MatchResult::none();
        const NodeId last = rw.producer(q.inputs[0]);
        if (!last.valid() || !lookupStep(g.node(last))) return MatchResult::none();
        // Walk back from the last step: every operand a step, a scalar constant or the one source.
        std::set<uint32_t> steps;
        std::vector<NodeId> pending{last};
        std::optional<Dequantized> source;
        while (!pending.empty()) {
            const NodeId id = pending.back();
            pending.pop_back();
            if (!steps.insert(id.index).second) continue;
            if (steps.size() > kMostSteps) return MatchResult::none();
            for (ValueId in : g.node(id).inputs) {
                if (!in.valid()) continue;
                if (const Tensor* c = rw.constant(in)) {
                    if (c->numElements() != 1) return MatchResult::none();
                    continue;
                }
                const NodeId p = rw.producer(in);
                if (!p.valid()) return MatchResult::none();
                if (isOp(g.node(p), "DequantizeLinear")) {
                    auto d = dequantizedInput(rw, in);
                    if (!d || (source && source->node != d->node)) return MatchResult::none();
                    source = d;
                    continue;
                }
                if (!lookupStep(g.node(p))) return MatchResult::none();
                pending.push_back(p);
            }
        }
        if (!source || !source->zeroPoint.valid() || source->scales.size() != 1) return MatchResult::none();
        // Nothing outside reads a step's output.
        for (uint32_t index : steps) {
            const ValueId out = g.node(NodeId(index)).outputs[0];
            if (rw.isGraphOutput(out) || rw.isCaptured(out)) return MatchResult::none();
            for (NodeId user : rw.users(out))
                if (!steps.count(user.index) && user != anchor) return MatchResult::none();
        }
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        const DType in = dtypeOf(g, source->quantized), out = dtypeOf(g, q.outputs[0]);
        if ((in != DType::UInt8 && in != DType::Int8) || (out != DType::UInt8 && out != DType::Int8))
            return MatchResult::rejected("the DequantizeLinear's input or the QuantizeLinear's output is not 8-bit");
        if (!constantScalar(rw, q.inputs[1]) || !constantScalar(rw, q.inputs[2]))
            return MatchResult::rejected("the QuantizeLinear's scale or zero point is not one constant");
        std::vector<NodeId> ordered;
        for (NodeId id : g.order())
            if (steps.count(id.index)) ordered.push_back(id);
        for (NodeId id : ordered)
            if (dtypeOf(g, g.node(id).outputs[0]) != DType::Float32) return MatchResult::rejected("a step is not float32");
        auto table = tableOf(rw, *source, ordered, anchor);
        if (!table) return MatchResult::rejected("the CPU kernels could not compute the table: " + table.status().message());
        return MatchResult::matched(QuantizedFunction{anchor, *source, std::move(ordered), std::move(*table)});
    }

    std::string rewrite(Rewriter& rw, const QuantizedFunction& m) const override {
        const Node q = rw.graph().node(m.quantize);
        const Node last = rw.graph().node(m.steps.back());
        const ValueId table = rw.addConstant(m.table, last.name + "_table");
        Node lookup = makeNode("QuantizedLookup", kFusescopeDomain, last, {m.source.quantized, table}, {q.outputs[0]});
        lookup.name = last.name;
        std::vector<NodeId> replaced = m.steps;
        replaced.push_back(m.quantize);
        rw.removeNode(m.quantize);
        for (auto it = m.steps.rbegin(); it != m.steps.rend(); ++it) rw.removeNode(*it);
        rw.addNode(std::move(lookup), m.quantize, replaced);
        removeIfUnread(rw, m.source.node);
        return "QuantizedLookup: the " + std::to_string(m.steps.size()) +
               " float step(s) between them depend on one byte alone, so a table of 256 bytes computed by the CPU "
               "kernels replaces them";
    }

private:
    // The QuantizeLinear's output for each of the 256 bytes the DequantizeLinear can read, by
    // the CPU kernels.
    static Result<Tensor> tableOf(const Rewriter& rw, const Dequantized& source, const std::vector<NodeId>& steps,
                                  NodeId quantize) {
        const Graph& g = rw.graph();
        const DType in = dtypeOf(g, source.quantized);
        std::string bytes(256, '\0');
        for (int b = 0; b < 256; ++b) bytes[size_t(b)] = char(in == DType::UInt8 ? b : b - 128);  // the table's order
        std::map<uint32_t, Tensor> values;
        values.emplace(source.quantized.index, Tensor("bytes", in, {256}, makeBuffer(bytes), 0, 256));
        auto run = [&](NodeId id) -> Status {
            const Node& n = g.node(id);
            std::vector<const Tensor*> inputs;
            for (ValueId v : n.inputs) {
                if (!v.valid()) inputs.push_back(nullptr);
                else if (auto it = values.find(v.index); it != values.end()) inputs.push_back(&it->second);
                else inputs.push_back(rw.constant(v));
            }
            auto outputs = evaluateNode(n, inputs, {{"", 13}});
            if (!outputs) return outputs.status();
            values.insert_or_assign(n.outputs[0].index, std::move((*outputs)[0]));
            return Status::ok();
        };
        FSC_RETURN_IF_ERROR(run(source.node));
        for (NodeId id : steps) FSC_RETURN_IF_ERROR(run(id));
        FSC_RETURN_IF_ERROR(run(quantize));
        Tensor table = values.at(g.node(quantize).outputs[0].index);
        if (table.numElements() != 256) return Status(ErrorCode::Internal, "the table has " + std::to_string(table.numElements()) + " entries");
        return table;
    }

    std::string m_declineAll;
};

// DequantizeLinear, GlobalAveragePool or AveragePool, QuantizeLinear:
// com.microsoft.QLinearGlobalAveragePool or QLinearAveragePool, which sum the bytes in
// integers (backends/cpu/qlinear_pool.cpp, average_pool_nhwc.cpp): Inception's pool
// branches average so.
class QLinearPoolPattern : public TypedPattern<Sandwich> {
public:
    QLinearPoolPattern(std::string op, std::string declineAll) : m_op(std::move(op)), m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return m_op == "AveragePool" ? "qlinear-average-pool" : "qlinear-global-average-pool"; }
    std::set<std::string> rootOps() const override { return {"QuantizeLinear"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        auto s = sandwich(rw, anchor, m_op.c_str());
        if (!s) return MatchResult::none();
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        if (m_op == "AveragePool") {
            const Graph& g = rw.graph();
            const ValueType& in = g.value(g.node(s->op).inputs[0]).type;
            const Attribute* kernel = g.node(s->op).attribute("kernel_shape");
            if (!in.shape.rankKnown() || in.shape.rank() != 4 || !kernel || kernel->ints.size() != 2)
                return MatchResult::rejected("only 2-D pooling of a 4-D tensor has a quantized kernel");
        }
        return MatchResult::matched(*s);
    }

    std::string rewrite(Rewriter& rw, const Sandwich& m) const override {
        const Node op = rw.graph().node(m.op);
        const Node q = rw.graph().node(m.q);
        std::vector<Attribute> attrs = m_op == "AveragePool" ? op.attributes : std::vector<Attribute>{};
        attrs.push_back(fsc::intAttr("channels_last", 0));
        Node fused = makeNode("QLinear" + m_op, "com.microsoft", op,
                              {m.in.quantized, m.in.scale, m.in.zeroPoint, q.inputs[1], q.inputs[2]}, {q.outputs[0]},
                              attrs);
        fused.name = op.name;
        rw.removeNode(m.q);
        rw.removeNode(m.op);
        rw.addNode(std::move(fused), m.q, {m.op, m.q});
        removeIfUnread(rw, m.dq);
        return m_op == "AveragePool" ? "QLinearAveragePool: each window's bytes summed in integers, quantized again"
                                     : "QLinearGlobalAveragePool: the mean of each channel's bytes, quantized again";
    }

private:
    std::string m_op, m_declineAll;
};

}  // namespace

std::vector<std::unique_ptr<RewritePattern>> qdqOperatorPatterns(const std::string& declineAll) {
    std::vector<std::unique_ptr<RewritePattern>> patterns;
    patterns.push_back(std::make_unique<QLinearBinaryPattern>("Add", declineAll));
    patterns.push_back(std::make_unique<QLinearBinaryPattern>("Mul", declineAll));
    patterns.push_back(std::make_unique<QLinearPoolPattern>("GlobalAveragePool", declineAll));
    patterns.push_back(std::make_unique<QLinearPoolPattern>("AveragePool", declineAll));
    patterns.push_back(std::make_unique<QLinearConcatPattern>(declineAll));
    patterns.push_back(std::make_unique<QuantizedLookupPattern>(declineAll));
    for (const char* op : {"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "MaxPool"})
        patterns.push_back(std::make_unique<ReshapeBytesPattern>(op, declineAll));
    return patterns;
}

}  // namespace fsc::passes
