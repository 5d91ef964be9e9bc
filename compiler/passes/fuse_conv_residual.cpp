// residual-fusion: a residual Add of a convolution's output and a tensor of the same shape,
// with the activation after it, becomes the convolution's epilogue: FusedConv's fourth input
// Z, so Y = activation(Conv(X, W, B) + Z) (ONNX Runtime's FusedConv has the same input).
// ResNet's blocks end this way: the Add and the ReLU were a separate pass over memory per
// block, where oneDNN accumulates the output onto Z in Z's own buffer (a sum post-op).
#include <algorithm>
#include <array>

#include "compiler/pass_manager.h"
#include "compiler/passes/epilogue_activation.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

struct ResidualMatch {
    NodeId conv, add, activation;  // activation: invalid when the Add's output is the result
    ValueId residual;
    ActivationSpec spec;
};

class ResidualPattern : public TypedPattern<ResidualMatch> {
public:
    std::string name() const override { return "conv-residual"; }
    std::set<std::string> rootOps() const override { return {"Add"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& add = g.node(anchor);
        if (!add.domain.empty() || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return MatchResult::none();
        // Either operand may be the convolution; when both are, the later one takes the
        // other as Z (its output is then read sooner).
        std::optional<MatchResult> rejected;
        const NodeId p0 = rw.producer(add.inputs[0]), p1 = rw.producer(add.inputs[1]);
        const bool laterFirst = p0.valid() && p1.valid() && positionOf(g, p1) > positionOf(g, p0);
        for (int side : laterFirst ? std::array<int, 2>{1, 0} : std::array<int, 2>{0, 1}) {
            MatchResult r = matchSide(rw, anchor, add.inputs[size_t(side)], add.inputs[size_t(1 - side)]);
            if (r.kind == MatchResult::Kind::Matched) return r;
            if (r.kind == MatchResult::Kind::Rejected && !rejected) rejected = std::move(r);
        }
        return rejected ? *rejected : MatchResult::none();
    }

    std::string rewrite(Rewriter& rw, const ResidualMatch& m) const override {
        const Node conv = rw.graph().node(m.conv);
        Node fused = conv;
        fused.domain = kFusescopeDomain;
        fused.opType = "FusedConv";
        fused.inputs.resize(3);  // an absent B stays an empty slot
        fused.inputs.push_back(m.residual);
        const NodeId last = m.activation.valid() ? m.activation : m.add;
        if (m.activation.valid()) {
            fused.attributes.push_back(fsc::stringAttr("activation", m.spec.name));
            if (!m.spec.params.empty()) fused.attributes.push_back(fsc::floatsAttr("activation_params", m.spec.params));
        }
        fused.outputs = {rw.graph().node(last).outputs[0]};
        std::vector<NodeId> origins{m.conv, m.add};
        if (m.activation.valid()) {
            origins.push_back(m.activation);
            rw.removeNode(m.activation);
        }
        rw.removeNode(m.add);
        rw.removeNode(m.conv);
        rw.addNode(std::move(fused), last, origins);
        return m.activation.valid() ? "residual Add and " + m.spec.name + " applied in the Conv's epilogue"
                                    : "residual Add applied in the Conv's epilogue";
    }

private:
    static size_t positionOf(const Graph& g, NodeId id) {
        const auto& order = g.order();
        return size_t(std::find(order.begin(), order.end(), id) - order.begin());
    }

    // `c` as the convolution's output, `z` as the residual.
    static MatchResult matchSide(const Rewriter& rw, NodeId anchor, ValueId c, ValueId z) {
        const Graph& g = rw.graph();
        const NodeId pid = rw.producer(c);
        if (!pid.valid()) return MatchResult::none();
        const Node& p = g.node(pid);
        const bool fused = p.domain == kFusescopeDomain && p.opType == "FusedConv";
        if (!fused && !isOp(p, "Conv")) return MatchResult::none();
        if (fused && p.attribute("activation"))
            return MatchResult::rejected("the convolution's activation comes before the Add");
        if (fused && p.inputs.size() > 3) return MatchResult::rejected("the convolution already adds a residual");
        if (intAttr(p, "channels_last", 0) != 0) return MatchResult::rejected("the convolution already runs channels-last");
        if (!isFusableFloat(dtypeOf(g, c))) return MatchResult::rejected("only float32, float16 and bfloat16 are fused");
        if (rw.soleUser(c) != anchor || rw.isCaptured(c))
            return MatchResult::rejected("the convolution's output has other readers");
        const ValueId sum = g.node(anchor).outputs[0];
        if (!sameShape(g, c, z) || !sameShape(g, c, sum) || dtypeOf(g, z) != dtypeOf(g, c))
            return MatchResult::rejected("the Add broadcasts, or its shapes are not known");
        ResidualMatch m{pid, anchor, NodeId{}, z, {}};
        const NodeId next = rw.soleUser(sum);
        if (next.valid() && !rw.isCaptured(sum)) {
            std::string why;
            if (auto spec = epilogueActivationOf(rw, g.node(next), why); spec && g.node(next).inputs[0] == sum) {
                m.activation = next;
                m.spec = *spec;
            }
        }
        return MatchResult::matched(std::move(m));
    }
};

}  // namespace

std::unique_ptr<Pass> fuseConvResidual() {
    return std::make_unique<PatternPass>("residual-fusion",
                                         "adds a residual tensor (and applies the activation after it) in a Conv's epilogue",
                                         onePattern(std::make_unique<ResidualPattern>()));
}

}  // namespace fsc::passes
