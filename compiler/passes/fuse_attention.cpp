// attention-fusion: scaled dot-product attention written out by exporters,
//   [Transpose] -> [Mul|Div by a scalar] -> MatMul(Q, K^T) -> [Mul|Div by a scalar]
//   -> [Add mask] -> Softmax(last axis) -> MatMul(., V) -> [Transpose]
// becomes one ai.fusescope.Attention. The head transposes on Q, K^T, V and the output are
// absorbed as permutation attributes (they are real data movement; the kernel reads with
// strides instead), and every scalar scale folds into one `scale`.
#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

// A live node of `opType` producing `v` that only `reader` reads.
NodeId soleProducer(const Rewriter& rw, ValueId v, const char* opType, NodeId reader) {
    NodeId p = rw.producer(v);
    if (!p.valid() || !isOp(rw.graph().node(p), opType)) return {};
    if (rw.soleUser(v) != reader || rw.isGraphOutput(v) || rw.isCaptured(v)) return {};
    return p;
}

// Peels "x * c", "c * x" or "x / c" with a scalar constant c off `v`, multiplying `scale`.
ValueId peelScale(const Rewriter& rw, ValueId v, NodeId reader, double& scale, std::vector<NodeId>& nodes) {
    for (const char* op : {"Mul", "Div"}) {
        NodeId p = soleProducer(rw, v, op, reader);
        if (!p.valid()) continue;
        const Node& n = rw.graph().node(p);
        if (n.inputs.size() != 2) continue;
        for (int side = 0; side < 2; ++side) {
            if (side == 0 && std::string(op) == "Div") continue;  // c / x is not a scale
            auto c = constantScalar(rw, n.inputs[size_t(side)]);
            if (!c || *c == 0.0) continue;
            scale *= std::string(op) == "Div" ? 1.0 / *c : *c;
            nodes.push_back(p);
            return n.inputs[size_t(1 - side)];
        }
    }
    return v;
}

// Peels the Transposes off `v` (a chain of them composes: K's head split, then K^T); their
// permutation goes to `perm`.
ValueId peelTranspose(const Rewriter& rw, ValueId v, NodeId reader, std::vector<int64_t>& perm,
                      std::vector<NodeId>& nodes) {
    for (;;) {
        NodeId p = soleProducer(rw, v, "Transpose", reader);
        if (!p.valid()) return v;
        const Node& n = rw.graph().node(p);
        std::vector<int64_t> inner = intsAttr(n, "perm");
        if (inner.empty()) {  // default: reverse the dims
            const Shape& s = rw.graph().value(n.inputs[0]).type.shape;
            if (!s.rankKnown()) return v;
            for (size_t i = s.rank(); i-- > 0;) inner.push_back(int64_t(i));
        }
        if (!perm.empty() && perm.size() != inner.size()) return v;
        if (perm.empty()) {
            perm = inner;
        } else {  // out[i] = mid[perm[i]] = in[inner[perm[i]]]
            std::vector<int64_t> composed;
            for (int64_t a : perm) composed.push_back(inner[size_t(a)]);
            perm = std::move(composed);
        }
        nodes.push_back(p);
        v = n.inputs[0];
        reader = p;
    }
}

// A step of the chain that exists but whose output others read too: say so, rather than
// pass over the candidate silently.
MatchResult sharedStep(const Rewriter& rw, ValueId v, std::initializer_list<const char*> ops) {
    NodeId p = rw.producer(v);
    const bool shared = rw.users(v).size() > 1 || rw.isGraphOutput(v) || rw.isCaptured(v);
    if (!p.valid() || !shared) return MatchResult::none();
    for (const char* op : ops)
        if (isOp(rw.graph().node(p), op)) return MatchResult::rejected("an intermediate value has other readers");
    return MatchResult::none();
}

int64_t rankOf(const Graph& g, ValueId v) {
    const Shape& s = g.value(v).type.shape;
    return s.rankKnown() ? int64_t(s.rank()) : -1;
}

// softmax(scale * Q.K^T [+ mask]).V and the transposes around its operands.
struct ScaledDotProduct {
    std::vector<NodeId> nodes;  // every node replaced, the anchor last
    ValueId q, kt, v, mask;     // mask: invalid when there is none
    double scale = 1.0;
    // Permutations absorbed into the fused op; empty: none.
    std::vector<int64_t> qPerm, kPerm, vPerm, outPerm;
};

class AttentionPattern : public TypedPattern<ScaledDotProduct> {
public:
    explicit AttentionPattern(int64_t opset) : m_opset(opset) {}
    std::string name() const override { return "attention"; }
    std::set<std::string> rootOps() const override { return {"Transpose", "MatMul"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& last = g.node(anchor);
        std::vector<int64_t> outPerm;
        NodeId pvId;
        if (isOp(last, "Transpose")) {
            pvId = soleProducer(rw, last.inputs[0], "MatMul", anchor);
            if (!pvId.valid()) return MatchResult::none();
            outPerm = intsAttr(last, "perm");
            if (outPerm.empty()) return MatchResult::none();
        } else if (isOp(last, "MatMul")) {
            pvId = anchor;
            // A Transpose reading only this MatMul absorbs it: let that anchor match.
            NodeId user = rw.soleUser(last.outputs[0]);
            if (user.valid() && isOp(g.node(user), "Transpose") && !rw.isGraphOutput(last.outputs[0]))
                return MatchResult::none();
        } else {
            return MatchResult::none();
        }
        const Node& pv = g.node(pvId);
        NodeId softmaxId = soleProducer(rw, pv.inputs[0], "Softmax", pvId);
        if (!softmaxId.valid()) return MatchResult::none();
        const Node& softmax = g.node(softmaxId);
        const int64_t rank = rankOf(g, softmax.outputs[0]);
        if (rank < 2) return MatchResult::rejected("the scores' rank is unknown");
        const int64_t axis = intAttr(softmax, "axis", m_opset >= 13 ? -1 : 1);
        if (axis != -1 && axis != rank - 1) return MatchResult::rejected("Softmax is not over the last axis");

        // Scores: [Add(mask)] over [scale] over MatMul(Q, K^T).
        std::vector<NodeId> nodes;
        ValueId scores = softmax.inputs[0];
        ValueId mask;
        NodeId reader = softmaxId;
        if (auto shared = sharedStep(rw, scores, {"Add", "MatMul"}); shared.kind == MatchResult::Kind::Rejected)
            return shared;
        if (NodeId addId = soleProducer(rw, scores, "Add", softmaxId); addId.valid()) {
            const Node& add = g.node(addId);
            for (int side = 0; side < 2 && !mask.valid(); ++side) {
                double unused = 1.0;
                std::vector<NodeId> probe;
                ValueId s = peelScale(rw, add.inputs[size_t(side)], addId, unused, probe);
                if (soleProducer(rw, s, "MatMul", probe.empty() ? addId : probe.back()).valid()) {
                    scores = add.inputs[size_t(side)];
                    mask = add.inputs[size_t(1 - side)];
                }
            }
            if (!mask.valid()) return MatchResult::none();
            nodes.push_back(addId);
            reader = addId;
        }
        double scale = 1.0;
        const size_t before = nodes.size();
        scores = peelScale(rw, scores, reader, scale, nodes);
        if (nodes.size() > before) reader = nodes.back();
        NodeId qkId = soleProducer(rw, scores, "MatMul", reader);
        if (!qkId.valid()) return sharedStep(rw, scores, {"MatMul", "Add", "Mul", "Div"});
        nodes.push_back(qkId);
        const Node& qk = g.node(qkId);

        // Operands, each with its scale and transpose peeled off.
        std::vector<int64_t> qPerm, kPerm, vPerm;
        auto operand = [&](ValueId v, NodeId consumer, std::vector<int64_t>& perm, bool scalable) {
            if (scalable) {
                const size_t n0 = nodes.size();
                v = peelScale(rw, v, consumer, scale, nodes);
                if (nodes.size() > n0) consumer = nodes.back();
            }
            return peelTranspose(rw, v, consumer, perm, nodes);
        };
        const ValueId q = operand(qk.inputs[0], qkId, qPerm, true);
        const ValueId kt = operand(qk.inputs[1], qkId, kPerm, true);
        const ValueId v = operand(pv.inputs[1], pvId, vPerm, false);

        // Every operand, as the kernel sees it, has the scores' rank.
        for (ValueId x : {q, kt, v})
            if (rankOf(g, x) != rank) return MatchResult::rejected("an operand's rank differs from the scores' (broadcast MatMul)");
        if (mask.valid() && (rankOf(g, mask) < 0 || rankOf(g, mask) > rank))
            return MatchResult::rejected("the mask's rank is unknown or larger than the scores'");
        const DType t = dtypeOf(g, q);
        if (!isFusableFloat(t) && t != DType::Float64) return MatchResult::rejected("not a float type");
        for (ValueId x : {kt, v, mask})
            if (x.valid() && dtypeOf(g, x) != t) return MatchResult::rejected("operands differ in dtype");

        nodes.push_back(softmaxId);
        if (pvId != anchor) nodes.push_back(pvId);
        nodes.push_back(anchor);
        if (!internalOnly(rw, nodes)) return MatchResult::rejected("an intermediate value has other readers");
        return MatchResult::matched(
            ScaledDotProduct{std::move(nodes), q, kt, v, mask, scale, qPerm, kPerm, vPerm, outPerm});
    }

    std::string rewrite(Rewriter& rw, const ScaledDotProduct& m) const override {
        const Node anchor = rw.graph().node(m.nodes.back());
        std::vector<ValueId> inputs = {m.q, m.kt, m.v};
        if (m.mask.valid()) inputs.push_back(m.mask);
        std::vector<Attribute> attrs = {fsc::floatAttr("scale", float(m.scale))};
        int absorbed = 0;
        for (const auto& [name, perm] : {std::pair{"q_perm", &m.qPerm}, std::pair{"k_perm", &m.kPerm},
                                         std::pair{"v_perm", &m.vPerm}, std::pair{"out_perm", &m.outPerm}}) {
            if (perm->empty()) continue;
            attrs.push_back(fsc::intsAttr(name, *perm));
            ++absorbed;
        }
        Node attention = makeNode("Attention", kFusescopeDomain, anchor, inputs, {anchor.outputs[0]}, attrs);
        for (NodeId n : m.nodes) rw.removeNode(n);
        rw.addNode(std::move(attention), m.nodes.back(), m.nodes);
        return std::string("softmax(scale * Q.K^T") + (m.mask.valid() ? " + mask" : "") + ").V in " +
               std::to_string(m.nodes.size()) + " nodes, " + std::to_string(absorbed) + " transposes absorbed";
    }

private:
    int64_t m_opset;
};

// The default domain's opset decides Softmax's default axis.
class AttentionPass : public Pass {
public:
    std::string name() const override { return "attention-fusion"; }
    std::string description() const override {
        return "merges scaled dot-product attention and its head transposes into one op";
    }
    Status run(PassContext& context) override {
        PatternPass inner(name(), description(), onePattern(std::make_unique<AttentionPattern>(context.model.opsetVersion(""))));
        return inner.run(context);
    }
};

}  // namespace

std::unique_ptr<Pass> fuseAttention() { return std::make_unique<AttentionPass>(); }

}  // namespace fsc::passes
