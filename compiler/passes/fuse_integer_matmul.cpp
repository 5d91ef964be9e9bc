// integer-matmul-fusion: MatMulInteger, Cast to float32, Mul by the scales and an optional
// Add of a per-column bias become one com.microsoft.MatMulIntegerToFloat. Every dynamically
// quantized transformer arrives in this form (ONNX Runtime's quantize_dynamic writes it, with
// the scales' product as Mul(a_scale, b_scale)), and qdq-folding and int8-quantization write
// it with the product already a constant. Unfused, the int32 sums, their float copy and the
// scaled copy each went through memory (BERT-base: 36 such chains, 3.5 ms of 94 at one thread,
// besides the products), where the fused kernel scales each tile as it leaves the registers.
// Where a DynamicQuantizeLinear feeds one such product and nothing else, the two become
// com.microsoft.DynamicQuantizeMatMul, as ONNX Runtime's optimizer writes them: its kernel
// quantizes A as DynamicQuantizeLinear does, so the outputs stay the same to the bit.
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

struct IntegerMatMulChain {
    NodeId matmul, cast, mul, add;  // add: invalid when there is no bias
    ValueId aScale, bScale;  // invalid aScale: the scales are one constant (bScale), a_scale is 1
    ValueId bias;
};

// A value that broadcasts against [..., N] without growing it: one element, or N along the
// last axis with ones before it, of no higher rank.
bool perColumnOrScalar(const Graph& g, ValueId v, int64_t n, size_t outRank) {
    auto dims = staticDims(g, v);
    if (!dims) return false;
    int64_t count = 1;
    for (int64_t d : *dims) count *= d;
    if (count == 1) return dims->size() <= outRank;
    if (dims->empty() || dims->back() != n || count != n) return false;
    return dims->size() <= outRank;
}

int64_t elementCount(const Graph& g, ValueId v) {
    auto dims = staticDims(g, v);
    if (!dims) return -1;
    int64_t count = 1;
    for (int64_t d : *dims) count *= d;
    return count;
}

class IntegerMatMulPattern : public TypedPattern<IntegerMatMulChain> {
public:
    explicit IntegerMatMulPattern(std::string declineAll) : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "integer-matmul"; }
    std::set<std::string> rootOps() const override { return {"MatMulInteger"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& mm = g.node(anchor);
        if (!isOp(mm, "MatMulInteger")) return MatchResult::none();
        const NodeId castId = rw.soleUser(mm.outputs[0]);
        if (!castId.valid() || !isOp(g.node(castId), "Cast") ||
            intAttr(g.node(castId), "to", 0) != int64_t(DType::Float32))
            return MatchResult::none();  // not the dequantizing chain
        const Node& cast = g.node(castId);
        const NodeId mulId = rw.soleUser(cast.outputs[0]);
        if (!mulId.valid() || !isOp(g.node(mulId), "Mul")) return MatchResult::none();
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        const Node& mul = g.node(mulId);

        auto bDims = staticDims(g, mm.inputs[1]);
        if (!bDims || bDims->size() != 2)
            return MatchResult::rejected("B is not a matrix of known shape");
        const int64_t n = (*bDims)[1];
        const auto& outShape = g.value(cast.outputs[0]).type.shape;
        if (!outShape.rankKnown()) return MatchResult::rejected("the product's rank is unknown");
        const size_t rank = outShape.rank();
        const DType aType = dtypeOf(g, mm.inputs[0]), bType = dtypeOf(g, mm.inputs[1]);
        auto eightBit = [](DType t) { return t == DType::UInt8 || t == DType::Int8; };
        if (!eightBit(aType) || !eightBit(bType))
            return MatchResult::rejected("A or B is not 8-bit");
        if (mm.inputs.size() > 2 && mm.inputs[2].valid() && elementCount(g, mm.inputs[2]) != 1)
            return MatchResult::rejected("A's zero point is not one value");
        if (mm.inputs.size() > 3 && mm.inputs[3].valid()) {
            const int64_t count = elementCount(g, mm.inputs[3]);
            if (count != 1 && !(count == n && staticDims(g, mm.inputs[3])->size() == 1))
                return MatchResult::rejected("B's zero point is not one value or one per column");
        }

        IntegerMatMulChain m{anchor, castId, mulId, NodeId(), ValueId(), ValueId(), ValueId()};
        const ValueId scales = otherInput(mul, cast.outputs[0]);
        if (!perColumnOrScalar(g, scales, n, rank))
            return MatchResult::rejected("the scale does not fit the product's columns");
        const NodeId scalesMul = rw.producer(scales);
        if (rw.constant(scales)) {
            m.bScale = scales;
        } else if (scalesMul.valid() && isOp(g.node(scalesMul), "Mul")) {
            // quantize_dynamic's Mul(a_scale, b_scale): a_scale is the one-element side.
            const Node& sm = g.node(scalesMul);
            const int64_t first = elementCount(g, sm.inputs[0]),
                          second = elementCount(g, sm.inputs[1]);
            const int side = first == 1 && (second != 1 || !rw.constant(sm.inputs[0])) ? 0
                             : second == 1                                             ? 1
                                                                                       : -1;
            if (side < 0) return MatchResult::rejected("neither scale is one value");
            m.aScale = sm.inputs[size_t(side)];
            m.bScale = sm.inputs[size_t(1 - side)];
            if (dtypeOf(g, m.aScale) != DType::Float32 || dtypeOf(g, m.bScale) != DType::Float32)
                return MatchResult::rejected("the scales are not float32");
            if (!perColumnOrScalar(g, m.bScale, n, 1))
                return MatchResult::rejected("b_scale is not one value or one per column");
        } else if (elementCount(g, scales) == 1) {
            m.aScale = scales;  // one computed scale, b_scale 1
        } else {
            return MatchResult::rejected("the per-column scale is computed at run time");
        }
        if (dtypeOf(g, scales) != DType::Float32)
            return MatchResult::rejected("the scale is not float32");

        const NodeId addId = rw.soleUser(mul.outputs[0]);
        if (addId.valid() && isOp(g.node(addId), "Add")) {
            const ValueId bias = otherInput(g.node(addId), mul.outputs[0]);
            auto biasDims = staticDims(g, bias);
            if (rw.constant(bias) && biasDims && biasDims->size() == 1 && (*biasDims)[0] == n &&
                dtypeOf(g, bias) == DType::Float32) {
                m.add = addId;
                m.bias = bias;
            }
        }
        return MatchResult::matched(m);
    }

    std::string rewrite(Rewriter& rw, const IntegerMatMulChain& m) const override {
        const Node mm = rw.graph().node(m.matmul);
        const Node mul = rw.graph().node(m.mul);
        const NodeId scalesMul = rw.producer(otherInput(mul, rw.graph().node(m.cast).outputs[0]));
        ValueId aScale = m.aScale, bScale = m.bScale;
        if (!aScale.valid())
            aScale = rw.addConstant(makeFloatTensor({}, {1.0f}), mm.name + "/a_scale");
        if (!bScale.valid())
            bScale = rw.addConstant(makeFloatTensor({}, {1.0f}), mm.name + "/b_scale");
        if (rw.constant(bScale) && rw.constant(bScale)->dims().size() > 1) {  // [1, N] as [N]
            auto values = *constantValues(rw, bScale);
            std::vector<float> floats(values.begin(), values.end());
            const int64_t count = int64_t(floats.size());
            bScale = rw.addConstant(
                makeFloatTensor(count == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{count},
                                std::move(floats)),
                mm.name + "/b_scale");
        }
        auto input = [&](size_t i) { return mm.inputs.size() > i ? mm.inputs[i] : ValueId(); };
        const ValueId out = m.add.valid() ? rw.graph().node(m.add).outputs[0] : mul.outputs[0];
        std::vector<ValueId> inputs{input(0), input(1), aScale, bScale, input(2), input(3), m.bias};
        while (!inputs.back().valid()) inputs.pop_back();  // optional inputs left out at the end
        Node fused =
            makeNode("MatMulIntegerToFloat", "com.microsoft", mm, std::move(inputs), {out});
        fused.name = mm.name;
        std::vector<NodeId> replaced{m.matmul, m.cast, m.mul};
        if (m.add.valid()) replaced.push_back(m.add);
        for (NodeId id : replaced) rw.removeNode(id);
        // Where the scales' Mul was: every input it reads exists there (a computed scale may
        // come after the MatMulInteger).
        rw.addNode(std::move(fused), m.mul, replaced);
        if (scalesMul.valid()) removeIfUnread(rw, scalesMul);
        return std::string("MatMulInteger, Cast and the scales' Mul") +
               (m.add.valid() ? " and the bias Add" : "") +
               " in one kernel: each tile of int32 sums is scaled in registers instead of passing "
               "through memory "
               "three times";
    }

private:
    std::string m_declineAll;
};

struct QuantizedOperand {
    NodeId quantize, product;
};

class DynamicQuantizeMatMulPattern : public TypedPattern<QuantizedOperand> {
public:
    explicit DynamicQuantizeMatMulPattern(std::string declineAll)
        : m_declineAll(std::move(declineAll)) {}
    std::string name() const override { return "dynamic-quantize-matmul"; }
    std::set<std::string> rootOps() const override { return {"MatMulIntegerToFloat"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& mm = g.node(anchor);
        if (mm.domain != "com.microsoft" || mm.opType != "MatMulIntegerToFloat" ||
            mm.inputs.size() < 5)
            return MatchResult::none();
        const NodeId qId = rw.producer(mm.inputs[0]);
        if (!qId.valid() || !isOp(g.node(qId), "DynamicQuantizeLinear")) return MatchResult::none();
        const Node& q = g.node(qId);
        if (q.outputs.size() != 3 || mm.inputs[2] != q.outputs[1] || mm.inputs[4] != q.outputs[2])
            return MatchResult::none();  // the scale or zero point is another's
        if (!m_declineAll.empty()) return MatchResult::rejected(m_declineAll);
        for (ValueId out : q.outputs)
            if (rw.soleUser(out) != anchor)
                return MatchResult::rejected(
                    "the quantized activation is read by other nodes too, which share its "
                    "quantization");
        if (dtypeOf(g, q.inputs[0]) != DType::Float32)
            return MatchResult::rejected("the activation is not float32");
        return MatchResult::matched(QuantizedOperand{qId, anchor});
    }

    std::string rewrite(Rewriter& rw, const QuantizedOperand& m) const override {
        const Node q = rw.graph().node(m.quantize), mm = rw.graph().node(m.product);
        auto input = [&](size_t i) { return mm.inputs.size() > i ? mm.inputs[i] : ValueId(); };
        std::vector<ValueId> inputs{q.inputs[0], input(1), input(3), input(5), input(6)};
        while (!inputs.back().valid()) inputs.pop_back();
        Node fused =
            makeNode("DynamicQuantizeMatMul", "com.microsoft", mm, std::move(inputs), mm.outputs);
        fused.name = mm.name;
        rw.removeNode(m.product);
        rw.removeNode(m.quantize);
        rw.addNode(std::move(fused), m.product, {m.quantize, m.product});
        return "the activation's DynamicQuantizeLinear moves into the product it alone feeds (one "
               "node instead of two, "
               "the same quantization)";
    }

private:
    std::string m_declineAll;
};

}  // namespace

std::unique_ptr<Pass> fuseIntegerMatMul(std::string declineAll) {
    std::vector<std::unique_ptr<RewritePattern>> patterns;
    patterns.push_back(std::make_unique<IntegerMatMulPattern>(declineAll));
    patterns.push_back(std::make_unique<DynamicQuantizeMatMulPattern>(declineAll));
    return std::make_unique<PatternPass>(
        "integer-matmul-fusion",
        "MatMulInteger, Cast to float, Mul by the scales and a bias Add become "
        "com.microsoft.MatMulIntegerToFloat; "
        "with the DynamicQuantizeLinear that alone feeds it, DynamicQuantizeMatMul",
        std::move(patterns));
}

}  // namespace fsc::passes
