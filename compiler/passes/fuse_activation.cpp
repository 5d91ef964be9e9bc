// activation-fusion: an activation whose input is the sole output of a Conv, Gemm or
// MatMul (or of a fused one without an activation yet) is applied in that op's epilogue:
// FusedConv, FusedGemm, FusedMatMul in the ai.fusescope domain.
#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

struct ActivationSpec {
    std::string name;  // as FusedConv's `activation` attribute
    std::vector<float> params;
};

// The activation a node computes, or a reason it cannot be an epilogue.
std::optional<ActivationSpec> activationOf(const Rewriter& rw, const Node& n, std::string& why) {
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

struct Epilogue {
    NodeId producer, activation;
    ActivationSpec spec;
};

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
        auto spec = activationOf(rw, act, why);
        if (!spec) return why.empty() ? MatchResult::none() : MatchResult::rejected(why);
        NodeId pid = rw.producer(act.inputs[0]);
        if (!pid.valid()) return MatchResult::none();
        const Node& p = g.node(pid);
        const bool fusedKind = p.domain == kFusescopeDomain &&
                               (p.opType == "FusedConv" || p.opType == "FusedGemm" || p.opType == "FusedMatMul");
        const bool plainKind = p.domain.empty() && (p.opType == "Conv" || p.opType == "Gemm" || p.opType == "MatMul");
        if (!fusedKind && !plainKind) return MatchResult::none();
        if (fusedKind && p.attribute("activation")) return MatchResult::rejected("the producer already has an activation");
        if (!rw.soleUser(p.outputs[0]).valid()) return MatchResult::rejected("the producer's output has other readers");
        if (dtypeOf(g, p.outputs[0]) != DType::Float32) return MatchResult::rejected("only float32 is fused");
        return MatchResult::matched(Epilogue{pid, anchor, *spec});
    }

    std::string rewrite(Rewriter& rw, const Epilogue& m) const override {
        const Node p = rw.graph().node(m.producer);
        const Node act = rw.graph().node(m.activation);
        Node fused = p;
        if (p.domain.empty()) {
            fused.domain = kFusescopeDomain;
            fused.opType = "Fused" + p.opType;
        }
        fused.attributes.push_back(fsc::stringAttr("activation", m.spec.name));
        if (!m.spec.params.empty()) fused.attributes.push_back(fsc::floatsAttr("activation_params", m.spec.params));
        fused.outputs = {act.outputs[0]};
        rw.removeNode(m.activation);
        rw.removeNode(m.producer);
        rw.addNode(std::move(fused), m.activation, {m.producer, m.activation});
        return act.opType + " applied in the " + p.opType + "'s epilogue";
    }
};

}  // namespace

std::unique_ptr<Pass> fuseActivation() {
    return std::make_unique<PatternPass>("activation-fusion",
                                         "applies Relu/Clip/Sigmoid/HardSwish/Gelu/... in a Conv, Gemm or MatMul epilogue",
                                         onePattern(std::make_unique<ActivationPattern>()));
}

}  // namespace fsc::passes
