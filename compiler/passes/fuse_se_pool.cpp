// se-pool-fusion: a squeeze-and-excitation pool, the mean over H and W of a channels-last
// depthwise convolution's output (the ReduceMean [N, 1, 1, C] the channels-last pass makes of
// a GlobalAveragePool), becomes that FusedConv's second output. The depthwise loop sums each
// output row while it is in cache, where the separate ReduceMean read the whole output back
// from memory (EfficientNet: 17 of them, 0.30 ms at 1 thread).
#include <algorithm>

#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

struct PoolMatch {
    NodeId conv, pool;
};

class SePoolPattern : public TypedPattern<PoolMatch> {
public:
    std::string name() const override { return "se-pool"; }
    std::set<std::string> rootOps() const override { return {"ReduceMean"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& pool = g.node(anchor);
        if (!pool.domain.empty() || pool.inputs.empty() || pool.outputs.size() != 1) return MatchResult::none();
        const NodeId cid = rw.producer(pool.inputs[0]);
        if (!cid.valid()) return MatchResult::none();
        const Node& conv = g.node(cid);
        if (conv.domain != kFusescopeDomain || conv.opType != "FusedConv" || intAttr(conv, "channels_last", 0) != 1)
            return MatchResult::none();
        if (!overHeightAndWidth(rw, pool)) return MatchResult::none();
        if (conv.outputs.size() != 1) return MatchResult::rejected("the convolution already gives its channel means");
        if (conv.inputs.size() > 3 && conv.inputs[3].valid())
            return MatchResult::rejected("the convolution adds a residual after its rows are summed");
        if (dtypeOf(g, pool.outputs[0]) != DType::Float32) return MatchResult::rejected("only float32 is fused");
        const auto w = staticDims(g, conv.inputs[1]);
        const int64_t group = intAttr(conv, "group", 1);
        if (!w || w->size() != 4 || (*w)[1] != 1 || (*w)[0] != group)
            return MatchResult::rejected("not a depthwise convolution (only its loop sums rows in cache)");
        return MatchResult::matched(PoolMatch{cid, anchor});
    }

    std::string rewrite(Rewriter& rw, const PoolMatch& m) const override {
        Node fused = rw.graph().node(m.conv);
        fused.outputs.push_back(rw.graph().node(m.pool).outputs[0]);
        rw.removeNode(m.pool);
        rw.removeNode(m.conv);
        rw.addNode(std::move(fused), m.conv, {m.conv, m.pool});
        return "the squeeze-and-excitation pool taken by the depthwise convolution while its rows are in cache";
    }

private:
    // ReduceMean over axes 1 and 2 of an NHWC tensor, keeping them: [N, 1, 1, C].
    static bool overHeightAndWidth(const Rewriter& rw, const Node& pool) {
        if (intAttr(pool, "keepdims", 1) != 1) return false;
        std::vector<int64_t> axes = intsAttr(pool, "axes");
        if (pool.inputs.size() > 1 && pool.inputs[1].valid()) {
            auto fromInput = constantInts(rw, pool.inputs[1]);
            if (!fromInput) return false;
            axes = *fromInput;
        }
        for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
        std::sort(axes.begin(), axes.end());
        return axes == std::vector<int64_t>{1, 2};
    }
};

}  // namespace

std::unique_ptr<Pass> fuseSePool() {
    return std::make_unique<PatternPass>(
        "se-pool-fusion", "a channels-last depthwise convolution also gives the mean over H and W that a ReduceMean took",
        onePattern(std::make_unique<SePoolPattern>()));
}

}  // namespace fsc::passes
