// cancel-inverse-pairs: a Transpose of a Transpose becomes one Transpose (or none when the
// permutations cancel), a round-trip Cast through a wider type goes, a Reshape of a
// Reshape reshapes once, and a Gather of one index that leaves a Transpose's other dims in
// order gathers from the untransposed tensor (PyTorch's LSTM: output.transpose(0, 1)[:, -1]),
// and a Transpose that moves only axes of size 1 becomes a Reshape.
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/buffer.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

// Two nodes of the same kind, the second reading the first.
struct NodePair {
    NodeId first, second;
};

struct TransposePair {
    NodeId first, second;
    std::vector<int64_t> perm;  // the two permutations composed
    bool cancels = false;       // ... into the identity
};

class TransposePairPattern : public TypedPattern<TransposePair> {
public:
    std::string name() const override { return "transpose-pair"; }
    std::set<std::string> rootOps() const override { return {"Transpose"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& second = g.node(anchor);
        if (!isOp(second, "Transpose")) return MatchResult::none();
        NodeId firstId = rw.producer(second.inputs[0]);
        if (!firstId.valid() || !isOp(g.node(firstId), "Transpose")) return MatchResult::none();
        const Node& first = g.node(firstId);
        auto p1 = intsAttr(first, "perm"), p2 = intsAttr(second, "perm");
        if (p1.empty() || p2.empty()) return MatchResult::rejected("a perm is left to its default (rank unknown)");
        if (p1.size() != p2.size()) return MatchResult::rejected("perms of different rank");
        std::vector<int64_t> combined;
        bool identity = true;
        for (size_t j = 0; j < p2.size(); ++j) {
            if (p2[j] < 0 || p2[j] >= static_cast<int64_t>(p1.size())) return MatchResult::none();
            combined.push_back(p1[size_t(p2[j])]);
            identity &= combined.back() == static_cast<int64_t>(j);
        }
        if (!identity && rw.users(first.outputs[0]).size() > 1)
            return MatchResult::rejected("the first Transpose has other readers");
        if (identity)
            if (std::string why = forwardBlocker(rw, second.outputs[0], first.inputs[0]); !why.empty())
                return MatchResult::rejected(why);
        return MatchResult::matched(TransposePair{firstId, anchor, std::move(combined), identity});
    }
    std::string rewrite(Rewriter& rw, const TransposePair& m) const override {
        const Node first = rw.graph().node(m.first);
        const Node second = rw.graph().node(m.second);
        if (m.cancels) {
            rw.replaceAllUses(second.outputs[0], first.inputs[0]);
            rw.removeNode(m.second);
            removeIfUnread(rw, m.first);
            return "the two permutations cancel";
        }
        Node merged;
        merged.name = second.name;
        merged.opType = "Transpose";
        merged.scope = second.scope;
        merged.inputs = {first.inputs[0]};
        merged.outputs = second.outputs;
        Attribute a;
        a.name = "perm";
        a.type = Attribute::Type::Ints;
        a.ints = m.perm;
        merged.attributes = {a};
        rw.removeNode(m.second);
        rw.removeNode(m.first);
        rw.addNode(std::move(merged), m.second, {m.first, m.second});
        return "two Transposes compose into one";
    }
};

struct TransposeGather {
    NodeId transpose, gather;
    int64_t axis = 0;  // of the untransposed tensor
};

class TransposeGatherPattern : public TypedPattern<TransposeGather> {
public:
    std::string name() const override { return "transpose-gather"; }
    std::set<std::string> rootOps() const override { return {"Gather"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& gather = g.node(anchor);
        if (!isOp(gather, "Gather") || gather.inputs.size() != 2) return MatchResult::none();
        const NodeId tid = rw.producer(gather.inputs[0]);
        if (!tid.valid() || !isOp(g.node(tid), "Transpose")) return MatchResult::none();
        const std::vector<int64_t> perm = intsAttr(g.node(tid), "perm");
        if (perm.empty()) return MatchResult::rejected("the perm is left to its default (rank unknown)");
        const Shape& indices = g.value(gather.inputs[1]).type.shape;
        if (!indices.rankKnown() || indices.rank() != 0)
            return MatchResult::rejected("the Gather takes more than one index (its dims would land among the others)");
        const int64_t rank = int64_t(perm.size());
        int64_t axis = intAttr(gather, "axis", 0);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) return MatchResult::none();
        // The dims left after gathering must keep their order for the Transpose to vanish.
        int64_t previous = -1;
        for (int64_t j = 0; j < rank; ++j) {
            if (j == axis) continue;
            if (perm[size_t(j)] < previous)
                return MatchResult::rejected("the other dims stay permuted after the Gather");
            previous = perm[size_t(j)];
        }
        if (rw.soleUser(gather.inputs[0]) != anchor || rw.isGraphOutput(gather.inputs[0]) || rw.isCaptured(gather.inputs[0]))
            return MatchResult::rejected("the Transpose has other readers");
        return MatchResult::matched(TransposeGather{tid, anchor, perm[size_t(axis)]});
    }
    std::string rewrite(Rewriter& rw, const TransposeGather& m) const override {
        const Node transpose = rw.graph().node(m.transpose);
        Node gather = rw.graph().node(m.gather);
        gather.inputs[0] = transpose.inputs[0];
        std::erase_if(gather.attributes, [](const Attribute& a) { return a.name == "axis"; });
        Attribute a;
        a.name = "axis";
        a.type = Attribute::Type::Int;
        a.i = m.axis;
        gather.attributes.push_back(a);
        rw.removeNode(m.gather);
        rw.removeNode(m.transpose);
        rw.addNode(std::move(gather), m.gather, {m.transpose, m.gather});
        return "one index gathered from the untransposed tensor leaves the other dims in order";
    }
};

// Every value of `from` is exactly representable in `via`.
bool widens(DType from, DType via) {
    auto rank = [](DType t) -> std::pair<int, int> {  // (family, bits): 0 float, 1 signed, 2 unsigned
        switch (t) {
            case DType::Float16: return {0, 11};
            case DType::BFloat16: return {0, 8};
            case DType::Float32: return {0, 24};
            case DType::Float64: return {0, 53};
            case DType::Int8: return {1, 8};
            case DType::Int16: return {1, 16};
            case DType::Int32: return {1, 32};
            case DType::Int64: return {1, 64};
            case DType::UInt8: return {2, 8};
            case DType::UInt16: return {2, 16};
            case DType::UInt32: return {2, 32};
            case DType::UInt64: return {2, 64};
            case DType::Bool: return {3, 1};
            default: return {-1, 0};
        }
    };
    if (from == via) return true;
    if ((from == DType::Float16 && via == DType::BFloat16) || (from == DType::BFloat16 && via == DType::Float16))
        return false;
    auto [ff, fb] = rank(from);
    auto [vf, vb] = rank(via);
    if (ff < 0 || vf < 0) return false;
    if (ff == 3) return vf != 3 || vb >= 1;            // bool fits every numeric type
    if (ff == vf) return vb >= fb;
    if (ff == 2 && vf == 1) return vb > fb;             // unsigned into a wider signed
    if ((ff == 1 || ff == 2) && vf == 0) return vb >= fb - (ff == 1 ? 1 : 0);  // mantissa holds it
    return false;
}

class CastPairPattern : public TypedPattern<NodePair> {
public:
    std::string name() const override { return "cast-pair"; }
    std::set<std::string> rootOps() const override { return {"Cast"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& second = g.node(anchor);
        if (!isOp(second, "Cast")) return MatchResult::none();
        NodeId firstId = rw.producer(second.inputs[0]);
        if (!firstId.valid() || !isOp(g.node(firstId), "Cast")) return MatchResult::none();
        const Node& first = g.node(firstId);
        const DType original = dtypeOf(g, first.inputs[0]);
        const auto via = static_cast<DType>(intAttr(first, "to", 0));
        const auto to = static_cast<DType>(intAttr(second, "to", 0));
        if (original == DType::Undefined) return MatchResult::rejected("the input's type is unknown");
        if (to != original) return MatchResult::none();
        if (!widens(original, via))
            return MatchResult::rejected("the middle type " + std::string(dtypeName(via)) + " loses values of " +
                                         std::string(dtypeName(original)));
        if (std::string why = forwardBlocker(rw, second.outputs[0], first.inputs[0]); !why.empty())
            return MatchResult::rejected(why);
        return MatchResult::matched(NodePair{firstId, anchor});
    }
    std::string rewrite(Rewriter& rw, const NodePair& m) const override {
        const Node first = rw.graph().node(m.first);
        const Node second = rw.graph().node(m.second);
        rw.replaceAllUses(second.outputs[0], first.inputs[0]);
        rw.removeNode(m.second);
        removeIfUnread(rw, m.first);
        return "a Cast to a wider type and back is exact";
    }
};

class ReshapePairPattern : public TypedPattern<NodePair> {
public:
    std::string name() const override { return "reshape-pair"; }
    std::set<std::string> rootOps() const override { return {"Reshape"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& second = g.node(anchor);
        if (!isOp(second, "Reshape") || second.inputs.size() < 2) return MatchResult::none();
        NodeId firstId = rw.producer(second.inputs[0]);
        if (!firstId.valid() || !isOp(g.node(firstId), "Reshape")) return MatchResult::none();
        auto target = constantInts(rw, second.inputs[1]);
        if (!target) return MatchResult::rejected("the second shape is not a constant");
        for (int64_t d : *target)
            if (d == 0 && intAttr(second, "allowzero", 0) == 0)
                return MatchResult::rejected("the second shape copies a dim (0) from the first's result");
        return MatchResult::matched(NodePair{firstId, anchor});
    }
    std::string rewrite(Rewriter& rw, const NodePair& m) const override {
        const Node first = rw.graph().node(m.first);
        rw.setInput(m.second, 0, first.inputs[0]);
        removeIfUnread(rw, m.first);
        return "only the last of two Reshapes matters";
    }
};

// A Transpose that moves only axes of size 1 leaves every element where it was: a Reshape,
// which both runtimes run without a copy when nothing else reads its input. At batch 1
// nn.MultiheadAttention's batch-first transposes ([1, L, E] <-> [L, 1, E]) are two such
// copies a layer. Transposes next to another Transpose, or read by a Gather, are left to the
// patterns above, which remove them outright.
struct UnitAxesTranspose {
    NodeId node;
    std::vector<int64_t> dims;  // the output's
};

class UnitAxesTransposePattern : public TypedPattern<UnitAxesTranspose> {
public:
    std::string name() const override { return "unit-axes-transpose"; }
    std::set<std::string> rootOps() const override { return {"Transpose"}; }
    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& t = g.node(anchor);
        if (!isOp(t, "Transpose") || t.inputs.empty() || !t.inputs[0].valid() || t.outputs.size() != 1 ||
            !t.outputs[0].valid())
            return MatchResult::none();
        const auto in = staticDims(g, t.inputs[0]);
        if (!in) return MatchResult::none();
        std::vector<int64_t> perm = intsAttr(t, "perm");
        if (perm.empty())
            for (size_t i = in->size(); i-- > 0;) perm.push_back(int64_t(i));
        if (perm.size() != in->size()) return MatchResult::none();
        int64_t lastMoved = -1;
        bool identity = true;
        std::vector<int64_t> out;
        for (size_t i = 0; i < perm.size(); ++i) {
            if (perm[i] < 0 || perm[i] >= int64_t(in->size())) return MatchResult::none();
            identity = identity && perm[i] == int64_t(i);
            out.push_back((*in)[size_t(perm[i])]);
            if ((*in)[size_t(perm[i])] == 1) continue;
            if (perm[i] < lastMoved) return MatchResult::none();  // axes of other sizes change order
            lastMoved = perm[i];
        }
        if (identity) return MatchResult::none();  // eliminate-no-ops' case
        const NodeId producer = rw.producer(t.inputs[0]);
        if (producer.valid() && isOp(g.node(producer), "Transpose")) return MatchResult::rejected("a Transpose pair");
        for (NodeId reader : rw.users(t.outputs[0]))
            if (isOp(g.node(reader), "Transpose") || isOp(g.node(reader), "Gather"))
                return MatchResult::rejected("read by a Transpose or a Gather");
        return MatchResult::matched(UnitAxesTranspose{anchor, std::move(out)});
    }
    std::string rewrite(Rewriter& rw, const UnitAxesTranspose& m) const override {
        const Node t = rw.graph().node(m.node);
        const ValueId shape = rw.addConstant(
            Tensor("", DType::Int64, {int64_t(m.dims.size())},
                   makeBuffer(std::string(reinterpret_cast<const char*>(m.dims.data()), m.dims.size() * 8)), 0,
                   m.dims.size() * 8),
            rw.graph().value(t.outputs[0]).name + "/shape");
        Node reshape = makeNode("Reshape", "", t, {t.inputs[0], shape}, {t.outputs[0]});
        reshape.name = t.name;
        rw.removeNode(m.node);
        rw.addNode(std::move(reshape), m.node, {m.node});
        return "it moves only axes of size 1: a Reshape";
    }
};

}  // namespace

std::unique_ptr<Pass> cancelInversePairs() {
    std::vector<std::unique_ptr<RewritePattern>> patterns;
    patterns.push_back(std::make_unique<TransposePairPattern>());
    patterns.push_back(std::make_unique<CastPairPattern>());
    patterns.push_back(std::make_unique<ReshapePairPattern>());
    patterns.push_back(std::make_unique<TransposeGatherPattern>());
    patterns.push_back(std::make_unique<UnitAxesTransposePattern>());
    return std::make_unique<PatternPass>("cancel-inverse-pairs",
                                         "cancels or merges Transpose, Cast and Reshape pairs; gathers before a Transpose; "
                                         "a Transpose of unit axes becomes a Reshape",
                                         std::move(patterns));
}

}  // namespace fsc::passes
