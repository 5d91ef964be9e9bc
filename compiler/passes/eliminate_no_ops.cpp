// eliminate-no-ops: nodes whose output equals an input (Identity, inference Dropout, Cast
// to the same type, Reshape/Expand to the same shape, identity Transpose, one-input
// Concat, adding zeros or multiplying by ones, pools of one element: AdaptiveAvgPool2d to the
// size it is given, as AlexNet and VGG export it at 224 x 224) are removed and their readers
// read the input.
#include <algorithm>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

// A node whose output is one of its inputs, unchanged.
struct PassThrough {
    NodeId node;
    ValueId output, input;
};

MatchResult forward(const Rewriter& rw, NodeId anchor, ValueId input) {
    const Node& n = rw.graph().node(anchor);
    if (std::string why = forwardBlocker(rw, n.outputs[0], input); !why.empty())
        return MatchResult::rejected(why);
    return MatchResult::matched(PassThrough{anchor, n.outputs[0], input});
}

// Dropout's mask or MaxPool's indices: a node that must still compute it cannot go.
bool secondOutputRead(const Rewriter& rw, const Node& n) {
    return n.outputs.size() > 1 && n.outputs[1].valid() &&
           (!rw.users(n.outputs[1]).empty() || rw.isGraphOutput(n.outputs[1]));
}

class NoOpPattern : public TypedPattern<PassThrough> {
public:
    std::string name() const override { return "no-op"; }
    std::set<std::string> rootOps() const override {
        return {"Identity", "Dropout", "Cast", "Reshape", "Expand", "Flatten", "Squeeze", "Unsqueeze",
                "Transpose", "Concat", "Add", "Sub", "Mul", "Div", "AveragePool", "MaxPool",
                "GlobalAveragePool", "GlobalMaxPool"};
    }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& n = g.node(anchor);
        if (!n.domain.empty() || n.inputs.empty() || !n.inputs[0].valid() || n.outputs.empty() ||
            !n.outputs[0].valid())
            return MatchResult::none();
        const ValueId in = n.inputs[0], out = n.outputs[0];
        const std::string& op = n.opType;
        if (op == "Identity") return forward(rw, anchor, in);
        if (op == "Dropout") {
            if (secondOutputRead(rw, n)) return MatchResult::rejected("its mask output is read");
            // With ratio 0 nothing is dropped even in training mode.
            const bool zeroRatio = n.inputs.size() > 1 && isConstantSplat(rw, n.inputs[1], 0);
            if (!zeroRatio && n.inputs.size() > 2 && n.inputs[2].valid() && !isConstantSplat(rw, n.inputs[2], 0))
                return MatchResult::rejected("training_mode is not a constant false (and the ratio is not 0)");
            return forward(rw, anchor, in);
        }
        if (op == "Cast") {
            const DType from = dtypeOf(g, in);
            if (from == DType::Undefined) return MatchResult::rejected("input type unknown");
            if (static_cast<int64_t>(from) != intAttr(n, "to", -1)) return MatchResult::none();
            return forward(rw, anchor, in);
        }
        if (op == "Reshape" || op == "Expand" || op == "Flatten" || op == "Squeeze" ||
            op == "Unsqueeze") {
            if (!sameShape(g, in, out)) return MatchResult::none();
            return forward(rw, anchor, in);
        }
        if (op == "Transpose") {
            auto perm = intsAttr(n, "perm");
            if (perm.empty()) return MatchResult::none();
            for (size_t i = 0; i < perm.size(); ++i)
                if (perm[i] != static_cast<int64_t>(i)) return MatchResult::none();
            return forward(rw, anchor, in);
        }
        if (op == "Concat" && n.inputs.size() == 1) return forward(rw, anchor, in);
        if (op == "AveragePool" || op == "MaxPool" || op == "GlobalAveragePool" || op == "GlobalMaxPool") {
            if (secondOutputRead(rw, n)) return MatchResult::rejected("its indices output is read");
            // A window of one element at stride 1 (a global pool over 1 x 1) keeps the input.
            auto allEqual = [](const std::vector<int64_t>& v, int64_t x) {
                return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
            };
            const bool global = op.rfind("Global", 0) == 0;
            if (!global && (intsAttr(n, "kernel_shape").empty() || !allEqual(intsAttr(n, "kernel_shape"), 1) ||
                            !allEqual(intsAttr(n, "strides"), 1) || !allEqual(intsAttr(n, "pads"), 0)))
                return MatchResult::none();
            if (!sameShape(g, in, out)) return MatchResult::none();
            return forward(rw, anchor, in);
        }
        if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
            if (n.inputs.size() != 2) return MatchResult::none();
            const double neutral = (op == "Add" || op == "Sub") ? 0.0 : 1.0;
            // x op neutral, or neutral + x / neutral * x for the commutative ops.
            for (int side = 0; side < 2; ++side) {
                const ValueId other = n.inputs[1 - side], data = n.inputs[side];
                if (side == 1 && (op == "Sub" || op == "Div")) break;
                if (!isConstantSplat(rw, other, neutral)) continue;
                if (!sameShape(g, data, out) || dtypeOf(g, data) != dtypeOf(g, out))
                    return MatchResult::rejected("the constant may broadcast the result to a new shape");
                return forward(rw, anchor, data);
            }
        }
        return MatchResult::none();
    }

    std::string rewrite(Rewriter& rw, const PassThrough& m) const override {
        const Node& n = rw.graph().node(m.node);
        std::string reason = n.opType + " passes its input through unchanged";
        rw.replaceAllUses(m.output, m.input);
        rw.removeNode(m.node);
        return reason;
    }
};

}  // namespace

std::unique_ptr<Pass> eliminateNoOps() {
    return std::make_unique<PatternPass>(
        "eliminate-no-ops", "removes nodes whose output equals their input (Identity, Dropout, same-type Cast, ...)",
        onePattern(std::make_unique<NoOpPattern>()));
}

}  // namespace fsc::passes
