// Normalizations written out by exporters become one op each:
//   layer-norm-fusion: (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* gamma] [+ beta]
//                      -> LayerNormalization (ONNX's from opset 17, ai.fusescope's before)
//   rms-norm-fusion:   x / sqrt(mean(x^2) + eps) [* gamma]  (or x * 1/sqrt(...), either way
//                      of writing 1/sqrt) -> RmsNorm
//   skip-layer-norm-fusion: LayerNormalization(a + b) -> SkipLayerNorm(a, b), whose second
//                      output is the sum when the residual stream reads it too.
// Means must be over the last axis, with keepdims.
#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

// A ReduceMean over the last axis only (axes as attribute, or as a constant input from
// opset 18), keeping dims. Returns its data input.
std::optional<ValueId> meanOverLastAxis(const Rewriter& rw, NodeId id) {
    if (!id.valid()) return std::nullopt;
    const Node& n = rw.graph().node(id);
    if (!isOp(n, "ReduceMean") || intAttr(n, "keepdims", 1) != 1) return std::nullopt;
    std::vector<int64_t> axes = intsAttr(n, "axes");
    if (n.inputs.size() > 1 && n.inputs[1].valid()) {
        auto c = constantInts(rw, n.inputs[1]);
        if (!c) return std::nullopt;
        axes = *c;
    }
    const auto& shape = rw.graph().value(n.inputs[0]).type.shape;
    if (axes.size() != 1 || !shape.rankKnown()) return std::nullopt;
    if (axes[0] != -1 && axes[0] != int64_t(shape.rank()) - 1) return std::nullopt;
    return n.inputs[0];
}

// v = Sqrt(Add(ReduceMean(Pow(d, 2) or Mul(d, d)), eps)): returns d, eps and the nodes.
struct RootMeanSquare {
    ValueId d;
    double eps;
    std::vector<NodeId> nodes;
};

std::optional<RootMeanSquare> rootMeanSquare(const Rewriter& rw, ValueId v) {
    NodeId sqrtId = rw.producer(v);
    if (!sqrtId.valid() || !isOp(rw.graph().node(sqrtId), "Sqrt")) return std::nullopt;
    NodeId addId = rw.producer(rw.graph().node(sqrtId).inputs[0]);
    if (!addId.valid() || !isOp(rw.graph().node(addId), "Add")) return std::nullopt;
    const Node& add = rw.graph().node(addId);
    for (int side = 0; side < 2; ++side) {
        auto eps = constantScalar(rw, add.inputs[1 - side]);
        NodeId meanId = rw.producer(add.inputs[side]);
        if (!eps || !meanId.valid()) continue;
        auto squared = meanOverLastAxis(rw, meanId);
        if (!squared) continue;
        NodeId sqId = rw.producer(*squared);
        if (!sqId.valid()) return std::nullopt;
        const Node& sq = rw.graph().node(sqId);
        ValueId d;
        if (isOp(sq, "Pow") && constantScalar(rw, sq.inputs[1]) == 2.0) d = sq.inputs[0];
        else if (isOp(sq, "Mul") && sq.inputs[0] == sq.inputs[1]) d = sq.inputs[0];
        else return std::nullopt;
        return RootMeanSquare{d, *eps, {sqId, meanId, addId, sqrtId}};
    }
    return std::nullopt;
}

// The Mul-by-constant and Add-constant that follow a normalization (gamma, beta), when
// they are its sole readers and broadcast along the last axis only.
void absorbAffine(const Rewriter& rw, NodeId& last, ValueId& gamma, ValueId& beta, std::vector<NodeId>& nodes) {
    const Graph& g = rw.graph();
    auto lastAxisConstant = [&](ValueId c, int64_t len) {
        const Tensor* t = rw.constant(c);
        return t && t->dtype() == DType::Float32 && t->numElements() == len && !t->dims().empty() &&
               t->dims().back() == len;
    };
    auto shape = g.value(g.node(last).outputs[0]).type.shape;
    if (!shape.rankKnown() || shape.rank() == 0 || !shape.dims().back().isKnown()) return;
    const int64_t len = shape.dims().back().size();
    for (const char* op : {"Mul", "Add"}) {
        NodeId next = rw.soleUser(g.node(last).outputs[0]);
        if (!next.valid() || !isOp(g.node(next), op)) return;
        ValueId c = otherInput(g.node(next), g.node(last).outputs[0]);
        if (!lastAxisConstant(c, len)) return;
        (std::string(op) == "Mul" ? gamma : beta) = c;
        nodes.push_back(next);
        last = next;
    }
}

ValueId flatConstant(Rewriter& rw, ValueId c, int64_t len, float fill, const std::string& name) {
    std::vector<float> values(size_t(len), fill);
    if (c.valid()) {
        const Tensor* t = rw.constant(c);
        values.assign(t->dataAs<float>(), t->dataAs<float>() + len);
    }
    return rw.addConstant(makeFloatTensor({len}, values), name);
}

// A normalization written out: the nodes replaced (the last one's output is the result),
// its input, gamma and beta (invalid when absent), epsilon and the normalized length.
struct WrittenOutNorm {
    std::vector<NodeId> nodes;
    ValueId x, gamma, beta;
    double epsilon = 0;
    int64_t length = 0;
};

class LayerNormPattern : public TypedPattern<WrittenOutNorm> {
public:
    explicit LayerNormPattern(bool onnxOp) : m_onnxOp(onnxOp) {}
    std::string name() const override { return "layer-norm"; }
    std::set<std::string> rootOps() const override { return {"Div"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& div = g.node(anchor);
        if (!isOp(div, "Div")) return MatchResult::none();
        auto rms = rootMeanSquare(rw, div.inputs[1]);
        if (!rms || rms->d != div.inputs[0]) return MatchResult::none();
        NodeId subId = rw.producer(rms->d);
        if (!subId.valid() || !isOp(g.node(subId), "Sub")) return MatchResult::none();
        const Node& sub = g.node(subId);
        auto centered = meanOverLastAxis(rw, rw.producer(sub.inputs[1]));
        if (!centered || *centered != sub.inputs[0]) return MatchResult::none();
        if (dtypeOf(g, sub.inputs[0]) != DType::Float32) return MatchResult::rejected("only float32 is fused");
        std::vector<NodeId> nodes = {rw.producer(sub.inputs[1]), subId};
        nodes.insert(nodes.end(), rms->nodes.begin(), rms->nodes.end());
        nodes.push_back(anchor);
        NodeId last = anchor;
        ValueId gamma, beta;
        absorbAffine(rw, last, gamma, beta, nodes);
        if (!internalOnly(rw, nodes)) return MatchResult::rejected("an intermediate value has other readers");
        auto shape = g.value(sub.inputs[0]).type.shape;
        if (!shape.rankKnown() || shape.rank() == 0 || !shape.dims().back().isKnown())
            return MatchResult::rejected("the normalized axis has no known size");
        return MatchResult::matched(
            WrittenOutNorm{std::move(nodes), sub.inputs[0], gamma, beta, rms->eps, shape.dims().back().size()});
    }

    std::string rewrite(Rewriter& rw, const WrittenOutNorm& m) const override {
        const Node last = rw.graph().node(m.nodes.back());
        ValueId gamma = flatConstant(rw, m.gamma, m.length, 1.0f, last.name + "/gamma");
        ValueId beta = flatConstant(rw, m.beta, m.length, 0.0f, last.name + "/beta");
        Node ln = makeNode("LayerNormalization", m_onnxOp ? "" : kFusescopeDomain, last,
                           {m.x, gamma, beta}, {last.outputs[0]},
                           {fsc::intAttr("axis", -1), fsc::floatAttr("epsilon", float(m.epsilon))});
        for (NodeId n : m.nodes) rw.removeNode(n);
        rw.addNode(std::move(ln), m.nodes.back(), m.nodes);
        return "layer normalization over the last axis, written out";
    }

private:
    bool m_onnxOp;
};

class RmsNormPattern : public TypedPattern<WrittenOutNorm> {
public:
    std::string name() const override { return "rms-norm"; }
    std::set<std::string> rootOps() const override { return {"Div", "Mul"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& n = g.node(anchor);
        std::optional<RootMeanSquare> rms;
        std::vector<NodeId> nodes;
        if (isOp(n, "Div")) {
            rms = rootMeanSquare(rw, n.inputs[1]);
            if (!rms || rms->d != n.inputs[0]) return MatchResult::none();
            nodes = rms->nodes;
        } else if (isOp(n, "Mul")) {  // x * Reciprocal(Sqrt(...)), or x * (1 / Sqrt(...)) (torch.rsqrt)
            for (int side = 0; side < 2 && !rms; ++side) {
                NodeId rec = rw.producer(n.inputs[1 - side]);
                if (!rec.valid()) continue;
                const Node& r = g.node(rec);
                const bool reciprocal = isOp(r, "Reciprocal") || (isOp(r, "Div") && isConstantSplat(rw, r.inputs[0], 1.0));
                if (!reciprocal) continue;
                rms = rootMeanSquare(rw, r.inputs.back());
                if (rms && rms->d != n.inputs[side]) rms.reset();
                if (rms) {
                    nodes = rms->nodes;
                    nodes.push_back(rec);
                }
            }
            if (!rms) return MatchResult::none();
        } else {
            return MatchResult::none();
        }
        NodeId centered = rw.producer(rms->d);
        if (centered.valid() && isOp(g.node(centered), "Sub") &&
            meanOverLastAxis(rw, rw.producer(g.node(centered).inputs[1])))
            return MatchResult::rejected("its input is centered: this is a layer norm");
        if (dtypeOf(g, rms->d) != DType::Float32) return MatchResult::rejected("only float32 is fused");
        nodes.push_back(anchor);
        NodeId last = anchor;
        ValueId gamma, beta;
        absorbAffine(rw, last, gamma, beta, nodes);
        if (beta.valid()) {  // RMSNorm has no shift: leave the Add outside
            nodes.pop_back();
            beta = {};
        }
        if (!internalOnly(rw, nodes)) return MatchResult::rejected("an intermediate value has other readers");
        auto shape = g.value(rms->d).type.shape;
        if (!shape.rankKnown() || shape.rank() == 0 || !shape.dims().back().isKnown())
            return MatchResult::rejected("the normalized axis has no known size");
        return MatchResult::matched(
            WrittenOutNorm{std::move(nodes), rms->d, gamma, {}, rms->eps, shape.dims().back().size()});
    }

    std::string rewrite(Rewriter& rw, const WrittenOutNorm& m) const override {
        const Node last = rw.graph().node(m.nodes.back());
        ValueId gamma = flatConstant(rw, m.gamma, m.length, 1.0f, last.name + "/gamma");
        Node rms = makeNode("RmsNorm", kFusescopeDomain, last, {m.x, gamma}, {last.outputs[0]},
                            {fsc::intAttr("axis", -1), fsc::floatAttr("epsilon", float(m.epsilon))});
        for (NodeId n : m.nodes) rw.removeNode(n);
        rw.addNode(std::move(rms), m.nodes.back(), m.nodes);
        return "RMS normalization over the last axis, written out";
    }
};

struct ResidualNorm {
    NodeId add, norm;
};

class SkipLayerNormPattern : public TypedPattern<ResidualNorm> {
public:
    std::string name() const override { return "skip-layer-norm"; }
    std::set<std::string> rootOps() const override { return {"LayerNormalization"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& ln = g.node(anchor);
        if (ln.opType != "LayerNormalization" || (!ln.domain.empty() && ln.domain != kFusescopeDomain))
            return MatchResult::none();
        NodeId addId = rw.producer(ln.inputs[0]);
        if (!addId.valid() || !isOp(g.node(addId), "Add")) return MatchResult::none();
        const Node& add = g.node(addId);
        const int64_t rank = int64_t(g.value(ln.inputs[0]).type.shape.rank());
        if (intAttr(ln, "axis", -1) != -1 && intAttr(ln, "axis", -1) != rank - 1)
            return MatchResult::rejected("the norm is not over the last axis only");
        for (size_t i = 1; i < ln.outputs.size(); ++i)
            if (ln.outputs[i].valid() && !rw.users(ln.outputs[i]).empty())
                return MatchResult::rejected("the mean or inverse deviation output is read");
        if (!sameShape(g, add.inputs[0], add.inputs[1]))
            return MatchResult::rejected("the Add broadcasts (or its shapes are unknown)");
        if (rw.isCaptured(add.outputs[0])) return MatchResult::rejected("the sum is read by a subgraph");
        if (!isFusableFloat(dtypeOf(g, add.outputs[0])))
            return MatchResult::rejected("only float32, float16 and bfloat16 are fused");
        for (size_t i = 1; i < 3 && i < ln.inputs.size(); ++i)
            if (ln.inputs[i].valid() && g.value(ln.inputs[i]).type.shape.rank() != 1)
                return MatchResult::rejected("gamma/beta are not 1-D");
        if (!weightsBeforeAdd(rw, ln) && (rw.users(add.outputs[0]).size() > 1 || rw.isGraphOutput(add.outputs[0])))
            return MatchResult::rejected("the sum is read elsewhere and gamma/beta are computed after the Add");
        return MatchResult::matched(ResidualNorm{addId, anchor});
    }

    // Gamma and beta exist before the graph runs (initializers, as exporters write them).
    static bool weightsBeforeAdd(const Rewriter& rw, const Node& ln) {
        for (size_t i = 1; i < ln.inputs.size(); ++i)
            if (ln.inputs[i].valid() && rw.producer(ln.inputs[i]).valid()) return false;
        return true;
    }

    std::string rewrite(Rewriter& rw, const ResidualNorm& m) const override {
        const Node add = rw.graph().node(m.add);
        const Node ln = rw.graph().node(m.norm);
        const bool sumRead = rw.users(add.outputs[0]).size() > 1 || rw.isGraphOutput(add.outputs[0]);
        std::vector<ValueId> inputs = {add.inputs[0], add.inputs[1], ln.inputs[1]};
        if (ln.inputs.size() > 2) inputs.push_back(ln.inputs[2]);
        std::vector<ValueId> outputs = {ln.outputs[0]};
        if (sumRead) outputs.push_back(add.outputs[0]);
        Node skip = makeNode("SkipLayerNorm", kFusescopeDomain, ln, inputs, outputs,
                             {fsc::floatAttr("epsilon", floatAttr(ln, "epsilon", 1e-5f))});
        rw.removeNode(m.norm);
        rw.removeNode(m.add);
        // Where the Add was, when it can: a reader of the sum placed between the Add and the
        // norm must still find the sum produced before it.
        rw.addNode(std::move(skip), weightsBeforeAdd(rw, ln) ? m.add : m.norm, {m.add, m.norm});
        return sumRead ? "residual Add + LayerNorm in one pass; the sum is still produced for the residual stream"
                       : "residual Add + LayerNorm in one pass";
    }
};

// Emits ONNX's LayerNormalization where the model's opset has it.
class LayerNormPass : public Pass {
public:
    std::string name() const override { return "layer-norm-fusion"; }
    std::string description() const override { return "recognizes layer normalization in its decomposed form"; }
    Status run(PassContext& context) override {
        PatternPass inner(name(), description(),
                          onePattern(std::make_unique<LayerNormPattern>(context.model.opsetVersion("") >= 17)));
        return inner.run(context);
    }
};

}  // namespace

std::unique_ptr<Pass> fuseLayerNorm() { return std::make_unique<LayerNormPass>(); }

std::unique_ptr<Pass> fuseRmsNorm() {
    return std::make_unique<PatternPass>("rms-norm-fusion", "recognizes RMS normalization in its decomposed form",
                                         onePattern(std::make_unique<RmsNormPattern>()));
}

std::unique_ptr<Pass> fuseSkipLayerNorm() {
    return std::make_unique<PatternPass>("skip-layer-norm-fusion", "merges a residual Add into the LayerNorm after it",
                                         onePattern(std::make_unique<SkipLayerNormPattern>()));
}

}  // namespace fsc::passes
