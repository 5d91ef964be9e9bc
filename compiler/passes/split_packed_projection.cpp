// split-packed-projection: a MatMul by a constant weight whose output columns are read as
// separate blocks becomes one MatMul per block, each by its own slice of the weight (and of a
// bias Add after it). nn.MultiheadAttention packs the query, key and value projections into one
// [E, 3E] weight; its export then copies the product apart: PyTorch 2's exporter as
// Reshape [.., 3, E], Unsqueeze, Transpose, Squeeze and a Gather per part (on an H200 those
// copies were a third of a float16 ViT-B/16 layer's time: docs/gpu-runs/2026-12-04-*),
// older exporters as a Slice per part, or one Split (torch.chunk). Each block's product now
// lands where its copy did.
// A block is found by following the product's axes through the layout ops: the leading axes
// must come out in their order, the part axis taken by a constant index, the element axis last.
#include <algorithm>
#include <cstring>

#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/buffer.h"

namespace fsc::passes {
namespace {

// A block of the product's columns [begin, begin + width) read as `value` (the same leading
// dims, the block's columns last) by the consumer nodes `chain` (the last produces `value`).
struct Block {
    int64_t begin = 0, width = 0;
    ValueId value;
    std::vector<NodeId> chain;
};

struct PackedProjection {
    NodeId matmul, add;  // add: the bias Add, when there is one
    ValueId bias;
    std::vector<Block> blocks;
};

// Axis labels while following the product through layout ops: its leading axes 0..r-2, the
// part axis, the element axis within a part, and a size-1 axis an Unsqueeze made.
constexpr int kPart = -1, kElement = -2, kUnit = -3;

std::optional<std::vector<int64_t>> axesOf(const Rewriter& rw, const Node& n) {
    if (n.inputs.size() > 1 && n.inputs[1].valid()) return constantInts(rw, n.inputs[1]);
    if (const Attribute* a = n.attribute("axes")) return a->ints;
    return std::nullopt;
}

class PackedProjectionPattern : public TypedPattern<PackedProjection> {
public:
    std::string name() const override { return "packed-projection"; }
    std::set<std::string> rootOps() const override { return {"MatMul"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& mm = g.node(anchor);
        if (mm.inputs.size() != 2 || mm.outputs.size() != 1 || !mm.outputs[0].valid())
            return MatchResult::none();
        const Tensor* w = rw.constant(mm.inputs[1]);
        if (!w || w->dims().size() != 2 || !isFusableFloat(w->dtype())) return MatchResult::none();
        const int64_t columns = w->dims()[1];
        PackedProjection m{anchor, {}, {}, {}};
        ValueId product = mm.outputs[0];
        // A bias Add of one constant per column, read by nothing else in between.
        if (const NodeId add = rw.soleUser(product); add.valid() && isOp(g.node(add), "Add")) {
            const ValueId other = otherInput(g.node(add), product);
            const Tensor* bias = other.valid() ? rw.constant(other) : nullptr;
            if (bias && !bias->dims().empty() && bias->numElements() == columns &&
                bias->dtype() == w->dtype() && bias->dims().back() == columns) {
                m.add = add;
                m.bias = other;
                product = g.node(add).outputs[0];
            }
        }
        const Shape& shape = g.value(product).type.shape;
        if (!shape.rankKnown() || shape.rank() < 2 || !shape[shape.rank() - 1].isKnown() ||
            shape[shape.rank() - 1].size() != columns || rw.isGraphOutput(product))
            return MatchResult::none();
        for (NodeId reader : rw.users(product)) {
            auto blocks = blocksRead(rw, product, reader, columns);
            if (!blocks) return MatchResult::none();
            m.blocks.insert(m.blocks.end(), blocks->begin(), blocks->end());
        }
        if (m.blocks.size() < 2) return MatchResult::none();
        return MatchResult::matched(std::move(m));
    }

    std::string rewrite(Rewriter& rw, const PackedProjection& m) const override {
        const Node mm = rw.graph().node(m.matmul);
        const Tensor& w = *rw.constant(mm.inputs[1]);
        const Tensor* bias = m.add.valid() ? rw.constant(m.bias) : nullptr;
        const int64_t rows = w.dims()[0];
        std::vector<NodeId> replaced = {m.matmul};
        if (m.add.valid()) replaced.push_back(m.add);
        for (const Block& b : m.blocks)  // a layout chain ending in several Gathers is shared
            for (NodeId id : b.chain)
                if (std::find(replaced.begin(), replaced.end(), id) == replaced.end())
                    replaced.push_back(id);
        const std::string weightName = rw.graph().value(mm.inputs[1]).name;
        std::vector<std::pair<Node, NodeId>> made;  // each block's nodes, anchored at its last copy
        for (size_t i = 0; i < m.blocks.size(); ++i) {
            const Block& b = m.blocks[i];
            const std::string part = "/part" + std::to_string(i);
            const ValueId wPart = rw.addConstant(
                columnBlock(w, rows, b.begin, b.width, {rows, b.width}), weightName + part);
            ValueId productPart = b.value;
            if (bias) {
                const ValueType& outType = rw.graph().value(b.value).type;
                productPart =
                    rw.addIntermediate(outType, rw.graph().value(b.value).name + "/product");
            }
            Node partMm = makeNode("MatMul", "", mm, {mm.inputs[0], wPart}, {productPart});
            partMm.name = mm.name + part;
            made.push_back({std::move(partMm), b.chain.back()});
            if (bias) {
                const ValueId biasPart =
                    rw.addConstant(columnBlock(*bias, 1, b.begin, b.width, {b.width}),
                                   rw.graph().value(m.bias).name + part);
                Node partAdd =
                    makeNode("Add", "", rw.graph().node(m.add), {productPart, biasPart}, {b.value});
                partAdd.name = rw.graph().node(m.add).name + part;
                made.push_back({std::move(partAdd), b.chain.back()});
            }
        }
        for (NodeId id : replaced) rw.removeNode(id);
        for (auto& [node, anchor] : made) rw.addNode(std::move(node), anchor, replaced);
        return std::to_string(m.blocks.size()) +
               " blocks of a packed projection's columns computed apart: no copies";
    }

private:
    // A Split of the last axis (torch.chunk and tensor.split, as GPT-2's c_attn is read): one
    // block per output.
    static std::optional<std::vector<Block>> splitBlocks(const Rewriter& rw, const Node& n,
                                                         NodeId reader, size_t rank,
                                                         int64_t columns) {
        int64_t axis = intAttr(n, "axis", 0);
        if (axis < 0) axis += int64_t(rank);
        const auto sizes = splitSizes(rw, n, columns);
        if (axis != int64_t(rank) - 1 || !sizes) return std::nullopt;
        std::vector<Block> blocks;
        int64_t begin = 0;
        for (size_t k = 0; k < n.outputs.size(); ++k) {
            if (!n.outputs[k].valid()) return std::nullopt;
            blocks.push_back(Block{begin, (*sizes)[k], n.outputs[k], {reader}});
            begin += (*sizes)[k];
        }
        return blocks;
    }

    // The blocks `reader` (and the layout ops after it) take of `product`'s columns, or none
    // when it reads the product any other way.
    static std::optional<std::vector<Block>> blocksRead(const Rewriter& rw, ValueId product,
                                                        NodeId reader, int64_t columns) {
        const Graph& g = rw.graph();
        const Node& n = g.node(reader);
        const size_t rank = g.value(product).type.shape.rank();
        if (isOp(n, "Slice")) {  // older exporters: a Slice of the last axis
            if (n.inputs.size() < 3 || n.outputs.size() != 1 || !n.outputs[0].valid())
                return std::nullopt;
            const auto starts = constantInts(rw, n.inputs[1]), ends = constantInts(rw, n.inputs[2]);
            const auto axes = n.inputs.size() > 3 && n.inputs[3].valid()
                                  ? constantInts(rw, n.inputs[3])
                                  : std::optional<std::vector<int64_t>>();
            const auto steps = n.inputs.size() > 4 && n.inputs[4].valid()
                                   ? constantInts(rw, n.inputs[4])
                                   : std::optional<std::vector<int64_t>>();
            if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
            const int64_t axis = axes ? (axes->size() == 1 ? (*axes)[0] : -99) : 0;
            if (axis != -1 && axis != int64_t(rank) - 1) return std::nullopt;
            if (steps && (steps->size() != 1 || (*steps)[0] != 1)) return std::nullopt;
            auto clampIndex = [columns](int64_t x) {
                return std::clamp<int64_t>(x < 0 ? x + columns : x, 0, columns);
            };
            const int64_t begin = clampIndex((*starts)[0]), end = clampIndex((*ends)[0]);
            if (end <= begin) return std::nullopt;
            return std::vector<Block>{Block{begin, end - begin, n.outputs[0], {reader}}};
        }
        if (isOp(n, "Split")) return splitBlocks(rw, n, reader, rank, columns);
        // PyTorch 2: Reshape [.., parts, E], then Unsqueeze/Transpose/Squeeze, then a Gather per
        // part.
        if (!isOp(n, "Reshape") || n.outputs.size() != 1 || !n.outputs[0].valid())
            return std::nullopt;
        const Shape& in = g.value(product).type.shape;
        const Shape& split = g.value(n.outputs[0]).type.shape;
        if (!split.rankKnown() || split.rank() != rank + 1) return std::nullopt;
        for (size_t d = 0; d + 1 < rank; ++d)
            if (split[d] != in[d] || split[d].isUnknown()) return std::nullopt;
        if (!split[rank - 1].isKnown() || !split[rank].isKnown()) return std::nullopt;
        const int64_t parts = split[rank - 1].size(), element = split[rank].size();
        if (parts < 2 || parts * element != columns) return std::nullopt;
        std::vector<int> labels;
        for (size_t d = 0; d + 1 < rank; ++d) labels.push_back(int(d));
        labels.push_back(kPart);
        labels.push_back(kElement);
        std::vector<NodeId> chain = {reader};
        ValueId at = n.outputs[0];
        // Layout ops, each read by the next alone; then every reader a Gather of one part.
        for (;;) {
            const NodeId next = rw.soleUser(at);
            if (!next.valid() || rw.isGraphOutput(at)) break;
            const Node& op = g.node(next);
            if (op.outputs.size() != 1 || !op.outputs[0].valid()) return std::nullopt;
            if (isOp(op, "Unsqueeze")) {
                const auto axes = axesOf(rw, op);
                if (!axes) return std::nullopt;
                const int outRank = int(labels.size() + axes->size());
                std::vector<int64_t> sorted;
                for (int64_t a : *axes) sorted.push_back(a < 0 ? a + outRank : a);
                std::sort(sorted.begin(), sorted.end());
                for (int64_t a : sorted) {
                    if (a < 0 || a > int64_t(labels.size())) return std::nullopt;
                    labels.insert(labels.begin() + a, kUnit);
                }
            } else if (isOp(op, "Squeeze")) {
                const auto axes = axesOf(rw, op);
                if (!axes) return std::nullopt;
                std::vector<int64_t> sorted;
                for (int64_t a : *axes) sorted.push_back(a < 0 ? a + int64_t(labels.size()) : a);
                std::sort(sorted.rbegin(), sorted.rend());
                for (int64_t a : sorted) {
                    if (a < 0 || a >= int64_t(labels.size()) || labels[size_t(a)] != kUnit)
                        return std::nullopt;
                    labels.erase(labels.begin() + a);
                }
            } else if (isOp(op, "Transpose")) {
                const std::vector<int64_t> perm = intsAttr(op, "perm");
                if (perm.size() != labels.size()) return std::nullopt;
                std::vector<int> moved;
                for (int64_t p : perm) {
                    if (p < 0 || p >= int64_t(labels.size())) return std::nullopt;
                    moved.push_back(labels[size_t(p)]);
                }
                labels = std::move(moved);
            } else {
                break;
            }
            chain.push_back(next);
            at = op.outputs[0];
        }
        // `at` is read by Gathers alone, one part each.
        std::vector<Block> blocks;
        if (rw.isGraphOutput(at) || rw.users(at).empty()) return std::nullopt;
        for (NodeId gatherId : rw.users(at)) {
            const Node& gather = g.node(gatherId);
            if (!isOp(gather, "Gather") || gather.inputs.size() != 2 ||
                gather.outputs.size() != 1 || !gather.outputs[0].valid())
                return std::nullopt;
            int64_t axis = intAttr(gather, "axis", 0);
            if (axis < 0) axis += int64_t(labels.size());
            if (axis < 0 || axis >= int64_t(labels.size()) || labels[size_t(axis)] != kPart)
                return std::nullopt;
            const Tensor* index = rw.constant(gather.inputs[1]);
            const auto value = constantInts(rw, gather.inputs[1]);
            if (!index || !index->dims().empty() || !value || value->size() != 1)
                return std::nullopt;
            int64_t part = (*value)[0];
            if (part < 0) part += parts;
            if (part < 0 || part >= parts) return std::nullopt;
            std::vector<int> left = labels;
            left.erase(left.begin() + axis);
            std::vector<int> expected;
            for (size_t d = 0; d + 1 < rank; ++d) expected.push_back(int(d));
            expected.push_back(kElement);
            if (left != expected) return std::nullopt;
            std::vector<NodeId> nodes = chain;
            nodes.push_back(gatherId);
            blocks.push_back(Block{part * element, element, gather.outputs[0], nodes});
        }
        return blocks;
    }
};

}  // namespace

std::unique_ptr<Pass> splitPackedProjection() {
    return std::make_unique<PatternPass>("split-packed-projection",
                                         "a MatMul whose columns are copied apart (a packed QKV "
                                         "projection) becomes one MatMul per block",
                                         onePattern(std::make_unique<PackedProjectionPattern>()));
}

}  // namespace fsc::passes
