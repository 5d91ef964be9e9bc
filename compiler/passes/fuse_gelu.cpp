// gelu-fusion: GELU written out by exporters becomes one ai.fusescope.Gelu.
//   erf form:  x * 0.5 * (1 + erf(x / sqrt(2)))            (or x * (1/sqrt(2)) inside erf)
//   tanh form: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// The product may be grouped either way; the anchor is the outermost Mul.
#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;

// Factors of a product tree: the anchor Mul's inputs, each expanded once more when it is
// a Mul read only here.
std::vector<std::pair<ValueId, std::vector<NodeId>>> factors(const Rewriter& rw, NodeId mul) {
    std::vector<std::pair<ValueId, std::vector<NodeId>>> out;
    for (ValueId in : rw.graph().node(mul).inputs) {
        NodeId p = rw.producer(in);
        if (p.valid() && isOp(rw.graph().node(p), "Mul") && rw.soleUser(in).valid()) {
            for (ValueId inner : rw.graph().node(p).inputs) out.push_back({inner, {p}});
        } else {
            out.push_back({in, {}});
        }
    }
    return out;
}

// `v` = x / sqrt(2) or x * (1/sqrt(2)) for some x: returns x and the node.
std::optional<std::pair<ValueId, NodeId>> scaledBySqrtHalf(const Rewriter& rw, ValueId v) {
    NodeId p = rw.producer(v);
    if (!p.valid()) return std::nullopt;
    const Node& n = rw.graph().node(p);
    if (n.inputs.size() != 2) return std::nullopt;
    auto c = constantScalar(rw, n.inputs[1]);
    if (!c) return std::nullopt;
    const double tol = storedPrecision(rw, n.inputs[1]);
    if ((isOp(n, "Div") && near(*c, kSqrt2, tol)) || (isOp(n, "Mul") && near(*c, 1.0 / kSqrt2, tol)))
        return std::make_pair(n.inputs[0], p);
    return std::nullopt;
}

// v = Add(Erf(x/sqrt2), 1) or Add(Tanh(sqrt(2/pi) * (x + 0.044715 x^3)), 1).
struct Inner {
    ValueId x;
    std::vector<NodeId> nodes;
    bool tanh = false;
};

std::optional<Inner> onePlus(const Rewriter& rw, ValueId v) {
    NodeId addId = rw.producer(v);
    if (!addId.valid() || !isOp(rw.graph().node(addId), "Add")) return std::nullopt;
    const Node& add = rw.graph().node(addId);
    for (int side = 0; side < 2; ++side) {
        auto one = constantScalar(rw, add.inputs[1 - side]);
        if (!one || *one != 1.0) continue;
        NodeId fId = rw.producer(add.inputs[side]);
        if (!fId.valid()) return std::nullopt;
        const Node& f = rw.graph().node(fId);
        if (isOp(f, "Erf")) {
            auto s = scaledBySqrtHalf(rw, f.inputs[0]);
            if (!s) return std::nullopt;
            return Inner{s->first, {s->second, fId, addId}, false};
        }
        if (isOp(f, "Tanh")) {
            // sqrt(2/pi) * (x + 0.044715 * x^3)
            NodeId mId = rw.producer(f.inputs[0]);
            if (!mId.valid() || !isOp(rw.graph().node(mId), "Mul")) return std::nullopt;
            const Node& m = rw.graph().node(mId);
            auto c = constantScalar(rw, m.inputs[1]);
            if (!c || !near(*c, kSqrt2OverPi, storedPrecision(rw, m.inputs[1]))) return std::nullopt;
            NodeId sumId = rw.producer(m.inputs[0]);
            if (!sumId.valid() || !isOp(rw.graph().node(sumId), "Add")) return std::nullopt;
            const Node& sum = rw.graph().node(sumId);
            for (int k = 0; k < 2; ++k) {
                const ValueId x = sum.inputs[k];
                NodeId cubeMulId = rw.producer(sum.inputs[1 - k]);
                if (!cubeMulId.valid() || !isOp(rw.graph().node(cubeMulId), "Mul")) continue;
                const Node& cubeMul = rw.graph().node(cubeMulId);
                auto k3 = constantScalar(rw, cubeMul.inputs[1]);
                NodeId powId = rw.producer(cubeMul.inputs[0]);
                if (!k3 || !near(*k3, 0.044715, storedPrecision(rw, cubeMul.inputs[1])) || !powId.valid()) continue;
                const Node& pow = rw.graph().node(powId);
                auto e = isOp(pow, "Pow") ? constantScalar(rw, pow.inputs[1]) : std::nullopt;
                if (!e || *e != 3.0 || pow.inputs[0] != x) continue;
                return Inner{x, {powId, cubeMulId, sumId, mId, fId, addId}, true};
            }
            return std::nullopt;
        }
        return std::nullopt;
    }
    return std::nullopt;
}

struct WrittenOutGelu {
    std::vector<NodeId> nodes;  // the anchor (the last Mul) last
    ValueId x;
    bool tanh = false;  // the tanh approximation, else the erf form
};

class GeluPattern : public TypedPattern<WrittenOutGelu> {
public:
    std::string name() const override { return "gelu"; }
    std::set<std::string> rootOps() const override { return {"Mul"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        if (!isOp(rw.graph().node(anchor), "Mul")) return MatchResult::none();
        auto fs = factors(rw, anchor);
        if (fs.size() != 3) return MatchResult::none();
        // One factor is 1 + erf/tanh(...x...), one is 0.5, one is x itself.
        for (size_t i = 0; i < 3; ++i) {
            auto inner = onePlus(rw, fs[i].first);
            if (!inner) continue;
            bool half = false, sameX = false;
            std::vector<NodeId> nodes = inner->nodes;
            for (size_t j = 0; j < 3; ++j) {
                if (j == i) continue;
                auto c = constantScalar(rw, fs[j].first);
                if (c && *c == 0.5) half = true;
                else if (fs[j].first == inner->x) sameX = true;
            }
            if (!half || !sameX) return MatchResult::rejected("a factor is not 0.5 or the GELU's input");
            for (const auto& f : fs)
                for (NodeId n : f.second)
                    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
            nodes.push_back(anchor);
            if (!internalOnly(rw, nodes)) return MatchResult::rejected("an intermediate value has other readers");
            return MatchResult::matched(WrittenOutGelu{std::move(nodes), inner->x, inner->tanh});
        }
        return MatchResult::none();
    }

    std::string rewrite(Rewriter& rw, const WrittenOutGelu& m) const override {
        const Node anchor = rw.graph().node(m.nodes.back());
        Node gelu = makeNode("Gelu", kFusescopeDomain, anchor, {m.x}, {anchor.outputs[0]});
        if (m.tanh) gelu.attributes.push_back(fsc::stringAttr("approximate", "tanh"));
        for (NodeId n : m.nodes) rw.removeNode(n);
        rw.addNode(std::move(gelu), m.nodes.back(), m.nodes);
        return m.tanh ? "the tanh approximation of GELU, written out" : "GELU (erf form), written out";
    }
};

}  // namespace

std::unique_ptr<Pass> fuseGelu() {
    return std::make_unique<PatternPass>("gelu-fusion", "recognizes GELU (erf and tanh forms) in element-wise ops",
                                         onePattern(std::make_unique<GeluPattern>()));
}

}  // namespace fsc::passes
