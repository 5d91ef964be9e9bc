// reshape-before-transpose: a Reshape that only splits axes of a Transpose's output runs
// before the Transpose instead, splitting the input axes they came from, and the Transpose
// moves the finer axes: Reshape(Transpose(X, p), S) = Transpose(Reshape(X, S'), p'). The data
// moves exactly as before, but the Transpose now meets what reads the Reshape. PyTorch 2's
// nn.MultiheadAttention export moves its heads apart this way, q.view(L, N*H, D).transpose(0,
// 1).view(N, H, L, D), and attention-fusion can then take each head transpose into the fused
// op's operand permutation (on an H200 three such copies were 45 of a float16 ViT-B/16
// layer's 500 us: docs/gpu-runs/2026-12-04-*).
#include <algorithm>

#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/buffer.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

struct SplitAfterTranspose {
    NodeId transpose, reshape;
    std::vector<int64_t> innerDims;  // X's axes, each split as the Reshape splits its image
    std::vector<int64_t> perm;       // from the split X to the Reshape's output
};

class SplitAfterTransposePattern : public TypedPattern<SplitAfterTranspose> {
public:
    std::string name() const override { return "reshape-before-transpose"; }
    std::set<std::string> rootOps() const override { return {"Reshape"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& reshape = g.node(anchor);
        if (reshape.inputs.empty() || !reshape.inputs[0].valid() || reshape.outputs.size() != 1 ||
            !reshape.outputs[0].valid())
            return MatchResult::none();
        const NodeId tId = rw.producer(reshape.inputs[0]);
        if (!tId.valid() || !isOp(g.node(tId), "Transpose")) return MatchResult::none();
        if (rw.soleUser(reshape.inputs[0]) != anchor || rw.isGraphOutput(reshape.inputs[0]))
            return MatchResult::rejected("the Transpose's output has other readers");
        const Node& t = g.node(tId);
        const auto x = staticDims(g, t.inputs[0]), mid = staticDims(g, reshape.inputs[0]),
                   out = staticDims(g, reshape.outputs[0]);
        if (!x || !mid || !out) return MatchResult::rejected("a shape is not known");
        std::vector<int64_t> perm = intsAttr(t, "perm");
        if (perm.empty())
            for (size_t i = x->size(); i-- > 0;) perm.push_back(int64_t(i));
        if (perm.size() != mid->size() || perm.size() != x->size() || out->size() <= mid->size())
            return MatchResult::none();
        std::vector<int64_t> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < sorted.size(); ++i)
            if (sorted[i] != int64_t(i)) return MatchResult::none();
        // Each axis of the Transpose's output becomes a run of the Reshape's axes whose sizes
        // multiply to it (axes of size 1 join the run before them).
        std::vector<std::vector<int64_t>> groups(mid->size());
        size_t at = 0;
        for (size_t i = 0; i < mid->size(); ++i) {
            int64_t product = 1;
            while (at < out->size() && (groups[i].empty() || product < (*mid)[i])) {
                product *= (*out)[at];
                groups[i].push_back((*out)[at++]);
            }
            if (product != (*mid)[i])
                return MatchResult::rejected("the Reshape merges axes, not only splits them");
        }
        while (at < out->size() && (*out)[at] == 1) groups.back().push_back((*out)[at++]);
        if (at != out->size())
            return MatchResult::rejected("the Reshape merges axes, not only splits them");
        // X split the same way, axis by axis, and the permutation of the finer axes.
        std::vector<size_t> groupOf(x->size());
        for (size_t i = 0; i < perm.size(); ++i) groupOf[size_t(perm[i])] = i;
        std::vector<int64_t> inner, firstAxis(x->size());
        for (size_t j = 0; j < x->size(); ++j) {
            firstAxis[j] = int64_t(inner.size());
            inner.insert(inner.end(), groups[groupOf[j]].begin(), groups[groupOf[j]].end());
        }
        std::vector<int64_t> finer;
        for (size_t i = 0; i < perm.size(); ++i)
            for (size_t k = 0; k < groups[i].size(); ++k)
                finer.push_back(firstAxis[size_t(perm[i])] + int64_t(k));
        return MatchResult::matched(
            SplitAfterTranspose{tId, anchor, std::move(inner), std::move(finer)});
    }

    std::string rewrite(Rewriter& rw, const SplitAfterTranspose& m) const override {
        const Node t = rw.graph().node(m.transpose);
        const Node reshape = rw.graph().node(m.reshape);
        const ValueId x = t.inputs[0];
        const ValueId shape = rw.addConstant(
            Tensor("", DType::Int64, {int64_t(m.innerDims.size())},
                   makeBuffer(std::string(reinterpret_cast<const char*>(m.innerDims.data()),
                                          m.innerDims.size() * 8)),
                   0, m.innerDims.size() * 8),
            rw.graph().value(x).name + "/split");
        std::vector<Dim> dims;
        for (int64_t d : m.innerDims) dims.push_back(Dim::known(d));
        const ValueId split =
            rw.addIntermediate(ValueType::tensor(dtypeOf(rw.graph(), x), Shape(std::move(dims))),
                               rw.graph().value(x).name + "/split");
        Node first = makeNode("Reshape", "", reshape, {x, shape}, {split});
        first.name = reshape.name + "/before";
        Node moved = makeNode("Transpose", "", t, {split}, {reshape.outputs[0]},
                              {fsc::intsAttr("perm", m.perm)});
        moved.name = t.name;
        rw.removeNode(m.reshape);
        rw.removeNode(m.transpose);
        rw.addNode(std::move(first), m.transpose, {m.transpose, m.reshape});
        rw.addNode(std::move(moved), m.reshape, {m.transpose, m.reshape});
        return "a Reshape that splits a Transpose's axes runs first; the Transpose now meets its "
               "reader";
    }
};

}  // namespace

std::unique_ptr<Pass> reshapeBeforeTranspose() {
    return std::make_unique<PatternPass>(
        "reshape-before-transpose",
        "a Reshape that only splits a Transpose's output axes runs before the Transpose",
        onePattern(std::make_unique<SplitAfterTransposePattern>()));
}

}  // namespace fsc::passes
