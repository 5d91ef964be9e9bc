// activation-fusion: an activation whose input is the sole output of a Conv, Gemm or
// MatMul (or of a fused one without an activation yet) is applied in that op's epilogue:
// FusedConv, FusedGemm, FusedMatMul in the ai.fusescope domain.
#include "compiler/pass_manager.h"
#include "compiler/passes/epilogue_activation.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {

std::optional<ActivationSpec> epilogueActivationOf(const Rewriter& rw, const Node& n, std::string& why) {
    const bool onnx = n.domain.empty();
    if (onnx && (n.opType == "Relu" || n.opType == "Sigmoid" || n.opType == "Tanh" || n.opType == "HardSwish"))
        return ActivationSpec{n.opType, {}};
    if (onnx && n.opType == "LeakyRelu") return ActivationSpec{"LeakyRelu", {floatAttr(n, "alpha", 0.01f)}};
    if (onnx && n.opType == "HardSigmoid")
        return ActivationSpec{"HardSigmoid", {floatAttr(n, "alpha", 0.2f), floatAttr(n, "beta", 0.5f)}};
    if ((onnx || n.domain == kFusescopeDomain) && n.opType == "Gelu")
        return ActivationSpec{stringAttr(n, "approximate", "none") == "tanh" ? "GeluTanh" : "Gelu", {}};
    if (onnx && n.opType == "Clip") {
        float lo = -INFINITY, hi = INFINITY;
        if (n.attribute("min") || n.attribute("max")) {  // opset < 11
            lo = floatAttr(n, "min", lo);
            hi = floatAttr(n, "max", hi);
        }
        for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
            if (!n.inputs[i].valid()) continue;
            auto v = constantScalar(rw, n.inputs[i]);
            if (!v) {
                why = "the Clip bounds are not constants";
                return std::nullopt;
            }
            (i == 1 ? lo : hi) = float(*v);
        }
        return ActivationSpec{"Clip", {lo, hi}};
    }
    return std::nullopt;
}

namespace {

struct Epilogue {
    NodeId producer, activation;
    ActivationSpec spec;
};

// A Conv, Gemm or MatMul (or a fused one without an activation yet) of a float type can take an
// activation in its epilogue: nothing, or what the match should answer instead.
std::optional<MatchResult> producerProblem(const Rewriter& rw, NodeId pid) {
    if (!pid.valid()) return MatchResult::none();
    const Node& p = rw.graph().node(pid);
    const bool fusedKind = p.domain == kFusescopeDomain &&
                           (p.opType == "FusedConv" || p.opType == "FusedGemm" || p.opType == "FusedMatMul");
    const bool plainKind = p.domain.empty() && (p.opType == "Conv" || p.opType == "Gemm" || p.opType == "MatMul");
    if (!fusedKind && !plainKind) return MatchResult::none();
    if (fusedKind && p.attribute("activation")) return MatchResult::rejected("the producer already has an activation");
    if (!isFusableFloat(dtypeOf(rw.graph(), p.outputs[0])))
        return MatchResult::rejected("only float32, float16 and bfloat16 are fused");
    return std::nullopt;
}

// The producer made fused (or kept fused) with the activation; `activation`'s nodes go, the
// last one's output becoming the fused node's.
std::string fuseEpilogue(Rewriter& rw, NodeId producer, const std::vector<NodeId>& activation, const ActivationSpec& spec) {
    const Node p = rw.graph().node(producer);
    Node fused = p;
    if (p.domain.empty()) {
        fused.domain = kFusescopeDomain;
        fused.opType = "Fused" + p.opType;
    }
    fused.attributes.push_back(fsc::stringAttr("activation", spec.name));
    if (!spec.params.empty()) fused.attributes.push_back(fsc::floatsAttr("activation_params", spec.params));
    fused.outputs = {rw.graph().node(activation.back()).outputs[0]};
    const std::string what = activation.size() == 1 ? rw.graph().node(activation[0]).opType : spec.name;
    for (auto it = activation.rbegin(); it != activation.rend(); ++it) rw.removeNode(*it);
    rw.removeNode(producer);
    std::vector<NodeId> origins{producer};
    origins.insert(origins.end(), activation.begin(), activation.end());
    rw.addNode(std::move(fused), activation.back(), origins);
    return what + " applied in the " + p.opType + "'s epilogue";
}

class ActivationPattern : public TypedPattern<Epilogue> {
public:
    std::string name() const override { return "epilogue-activation"; }
    std::set<std::string> rootOps() const override {
        return {"Relu", "Sigmoid", "Tanh", "HardSwish", "LeakyRelu", "HardSigmoid", "Gelu", "Clip"};
    }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& act = g.node(anchor);
        std::string why;
        auto spec = epilogueActivationOf(rw, act, why);
        if (!spec) return why.empty() ? MatchResult::none() : MatchResult::rejected(why);
        NodeId pid = rw.producer(act.inputs[0]);
        if (auto problem = producerProblem(rw, pid)) return *problem;
        if (!rw.soleUser(g.node(pid).outputs[0]).valid()) return MatchResult::rejected("the producer's output has other readers");
        return MatchResult::matched(Epilogue{pid, anchor, *spec});
    }

    std::string rewrite(Rewriter& rw, const Epilogue& m) const override {
        return fuseEpilogue(rw, m.producer, {m.activation}, m.spec);
    }
};

// SiLU / Swish, x * Sigmoid(x), as exporters write it: the producer's output read by exactly
// the Sigmoid and the Mul (EfficientNet, YOLO, LLaMA's gated FFN). QuickGELU (CLIP),
// x * Sigmoid(alpha * x) with a constant alpha, is the same epilogue with its alpha.
struct SwishMatch {
    NodeId producer;
    std::vector<NodeId> nodes;  // [scale Mul,] Sigmoid, Mul: the activation's nodes in order
    float alpha = 1;
};

class SwishPattern : public TypedPattern<SwishMatch> {
public:
    std::string name() const override { return "epilogue-swish"; }
    std::set<std::string> rootOps() const override { return {"Mul"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& mul = g.node(anchor);
        if (!mul.domain.empty() || mul.inputs.size() != 2) return MatchResult::none();
        for (int side = 0; side < 2; ++side) {
            const ValueId x = mul.inputs[size_t(side)], gate = mul.inputs[size_t(1 - side)];
            const NodeId sid = rw.producer(gate);
            if (!sid.valid()) continue;
            const Node& sigmoid = g.node(sid);
            if (!sigmoid.domain.empty() || sigmoid.opType != "Sigmoid") continue;
            SwishMatch m{rw.producer(x), {sid, anchor}, 1.f};
            if (sigmoid.inputs[0] != x) {
                auto scale = scaleOf(rw, sigmoid.inputs[0], x);
                if (!scale) continue;
                m.nodes.insert(m.nodes.begin(), rw.producer(sigmoid.inputs[0]));
                m.alpha = *scale;
                if (rw.soleUser(sigmoid.inputs[0]) != sid) return MatchResult::rejected("the scaled input has other readers");
            }
            if (auto problem = producerProblem(rw, m.producer)) return *problem;
            if (rw.soleUser(gate) != anchor || rw.users(x).size() != 2 || rw.isGraphOutput(x) || rw.isCaptured(x))
                return MatchResult::rejected("the producer's output or the Sigmoid's has other readers");
            return MatchResult::matched(std::move(m));
        }
        return MatchResult::none();
    }

    std::string rewrite(Rewriter& rw, const SwishMatch& m) const override {
        return fuseEpilogue(rw, m.producer, m.nodes,
                            ActivationSpec{"Swish", m.alpha == 1.f ? std::vector<float>{} : std::vector<float>{m.alpha}});
    }

private:
    // v = Mul(x, alpha) with a constant alpha of rank 0 or 1 (so v has x's shape): alpha.
    static std::optional<float> scaleOf(const Rewriter& rw, ValueId v, ValueId x) {
        const NodeId id = rw.producer(v);
        if (!id.valid()) return std::nullopt;
        const Node& n = rw.graph().node(id);
        if (!n.domain.empty() || n.opType != "Mul" || n.inputs.size() != 2) return std::nullopt;
        for (int side = 0; side < 2; ++side) {
            const ValueId c = n.inputs[size_t(1 - side)];
            const Tensor* t = rw.constant(c);
            if (n.inputs[size_t(side)] != x || !t || t->dims().size() > 1) continue;
            if (auto alpha = constantScalar(rw, c)) return float(*alpha);
        }
        return std::nullopt;
    }
};

std::vector<std::unique_ptr<RewritePattern>> patterns() {
    std::vector<std::unique_ptr<RewritePattern>> list;
    list.push_back(std::make_unique<ActivationPattern>());
    list.push_back(std::make_unique<SwishPattern>());
    return list;
}

}  // namespace

std::unique_ptr<Pass> fuseActivation() {
    return std::make_unique<PatternPass>("activation-fusion",
                                         "applies Relu/Clip/Sigmoid/HardSwish/Gelu/SiLU/... in a Conv, Gemm or MatMul epilogue",
                                         patterns());
}

}  // namespace fsc::passes
