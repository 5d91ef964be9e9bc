// pad-fusion: an explicit zero Pad in front of a Conv, AveragePool or MaxPool (TensorFlow's
// exports write asymmetric "SAME" padding this way) becomes the consumer's own `pads`, so
// the padded copy of the activations is never written.
//   Conv:        padding with zeros is what its `pads` do.
//   AveragePool: the explicit zeros count in every average: `count_include_pad` = 1, which
//                the pool must already have or have no padding of its own yet.
//   MaxPool:     its own padding never wins a max; an explicit 0 never wins either when the
//                input is not negative (a Relu's output) or when the Pad fills with -inf.
#include <algorithm>
#include <cmath>

#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

struct PadIntoConsumer {
    NodeId pad, consumer;
    std::vector<int64_t> pads;  // the consumer's new `pads`, spatial dims only
};

// Pad's amounts and fill value: from attributes before opset 11, from constant inputs after.
struct PadSpec {
    std::vector<int64_t> pads;  // begin of every dim, then end of every dim
    double value = 0;
};

std::optional<PadSpec> padSpec(const Rewriter& rw, const Node& pad, std::string& why) {
    if (stringAttr(pad, "mode", "constant") != "constant") {
        why = "only constant padding is what a Conv or pool pads with";
        return std::nullopt;
    }
    PadSpec spec;
    if (pad.inputs.size() == 1) {
        spec.pads = intsAttr(pad, "pads");
        spec.value = floatAttr(pad, "value", 0.f);
        return spec;
    }
    auto pads = constantInts(rw, pad.inputs[1]);
    if (!pads) {
        why = "the pad amounts are computed at run time";
        return std::nullopt;
    }
    spec.pads = *pads;
    if (pad.inputs.size() > 2 && pad.inputs[2].valid()) {
        auto value = constantScalar(rw, pad.inputs[2]);
        if (!value) {
            why = "the fill value is not a constant";
            return std::nullopt;
        }
        spec.value = *value;
    }
    if (pad.inputs.size() > 3 && pad.inputs[3].valid()) {
        why = "the Pad names its axes";
        return std::nullopt;
    }
    return spec;
}

// The value is never negative: a Relu's output, or a Clip's with a lower bound of 0 or more.
bool neverNegative(const Rewriter& rw, ValueId v) {
    const NodeId id = rw.producer(v);
    if (!id.valid()) return false;
    const Node& n = rw.graph().node(id);
    if (isOp(n, "Relu") || isOp(n, "Sigmoid")) return true;
    if (!isOp(n, "Clip")) return false;
    if (n.attribute("min")) return floatAttr(n, "min", -1.f) >= 0.f;
    if (n.inputs.size() < 2 || !n.inputs[1].valid()) return false;
    auto lo = constantScalar(rw, n.inputs[1]);
    return lo && *lo >= 0;
}

class PadPattern : public TypedPattern<PadIntoConsumer> {
public:
    std::string name() const override { return "pad-into-consumer"; }
    std::set<std::string> rootOps() const override { return {"Conv", "AveragePool", "MaxPool"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& consumer = g.node(anchor);
        if (!consumer.domain.empty() || consumer.inputs.empty()) return MatchResult::none();
        const NodeId padId = rw.producer(consumer.inputs[0]);
        if (!padId.valid() || !isOp(g.node(padId), "Pad")) return MatchResult::none();
        const Node& pad = g.node(padId);
        std::string why;
        auto spec = padSpec(rw, pad, why);
        if (!spec) return MatchResult::rejected(why);
        const size_t rank = spec->pads.size() / 2;
        if (spec->pads.size() % 2 != 0 || rank < 3) return MatchResult::rejected("the pads do not cover N, C and a spatial dim");
        for (size_t d = 0; d < 2; ++d)
            if (spec->pads[d] != 0 || spec->pads[rank + d] != 0)
                return MatchResult::rejected("the Pad pads the batch or channel dim");
        for (int64_t p : spec->pads)
            if (p < 0) return MatchResult::rejected("a negative pad crops");
        if (rw.soleUser(consumer.inputs[0]) != anchor || rw.isGraphOutput(consumer.inputs[0]) ||
            rw.isCaptured(consumer.inputs[0]))
            return MatchResult::rejected("the padded tensor has other readers");
        if (stringAttr(consumer, "auto_pad", "NOTSET") != "NOTSET")
            return MatchResult::rejected("the consumer pads by auto_pad");
        if (intAttr(consumer, "ceil_mode", 0) != 0)
            return MatchResult::rejected("with ceil_mode a window may start past the padding");
        if (auto problem = fillProblem(rw, consumer, pad, spec->value)) return MatchResult::rejected(*problem);
        const size_t spatial = rank - 2;
        std::vector<int64_t> pads = intsAttr(consumer, "pads");
        if (pads.empty()) pads.assign(2 * spatial, 0);
        if (pads.size() != 2 * spatial) return MatchResult::rejected("the consumer's pads do not match the rank");
        const std::vector<int64_t> kernel = intsAttr(consumer, "kernel_shape");
        for (size_t d = 0; d < spatial; ++d) {
            pads[d] += spec->pads[2 + d];
            pads[spatial + d] += spec->pads[rank + 2 + d];
            // A MaxPool window wholly in the padding would see the Pad's 0, not nothing.
            if (consumer.opType == "MaxPool" && (d >= kernel.size() || std::max(pads[d], pads[spatial + d]) >= kernel[d]))
                return MatchResult::rejected("a pool window could lie wholly in the padding");
        }
        return MatchResult::matched(PadIntoConsumer{padId, anchor, std::move(pads)});
    }

    std::string rewrite(Rewriter& rw, const PadIntoConsumer& m) const override {
        const Node pad = rw.graph().node(m.pad);
        Node consumer = rw.graph().node(m.consumer);
        consumer.inputs[0] = pad.inputs[0];
        std::erase_if(consumer.attributes,
                      [](const Attribute& a) { return a.name == "pads" || a.name == "count_include_pad"; });
        consumer.attributes.push_back(fsc::intsAttr("pads", m.pads));
        if (consumer.opType == "AveragePool") consumer.attributes.push_back(fsc::intAttr("count_include_pad", 1));
        rw.removeNode(m.consumer);
        rw.removeNode(m.pad);
        rw.addNode(std::move(consumer), m.consumer, {m.pad, m.consumer});
        return "the Pad became the " + consumer.opType + "'s own padding";
    }

private:
    // Why the Pad's fill value differs from what the consumer's own padding means, or nothing.
    static std::optional<std::string> fillProblem(const Rewriter& rw, const Node& consumer, const Node& pad,
                                                  double value) {
        if (consumer.opType == "Conv") {
            if (value != 0) return "a Conv pads with zeros; this Pad fills with another value";
            return std::nullopt;
        }
        if (consumer.opType == "AveragePool") {
            if (value != 0) return "the Pad fills with a value other than 0";
            bool ownPads = false;
            for (int64_t p : intsAttr(consumer, "pads")) ownPads |= p != 0;
            if (ownPads && intAttr(consumer, "count_include_pad", 0) == 0)
                return "the pool's own padding is left out of its averages, the Pad's zeros are not";
            return std::nullopt;
        }
        if (consumer.outputs.size() > 1 && consumer.outputs[1].valid() && !rw.users(consumer.outputs[1]).empty())
            return "the MaxPool's indices are read (they count the padded tensor)";
        if (std::isinf(value) && value < 0) return std::nullopt;
        if (value != 0 || !neverNegative(rw, pad.inputs[0]))
            return "a MaxPool's padding never wins; the Pad's value could (its input may be negative)";
        return std::nullopt;
    }
};

}  // namespace

std::unique_ptr<Pass> fusePad() {
    return std::make_unique<PatternPass>("pad-fusion", "an explicit zero Pad before a Conv or pool becomes its pads",
                                         onePattern(std::make_unique<PadPattern>()));
}

}  // namespace fsc::passes
