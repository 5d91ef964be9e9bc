// fold-shape-computation: exporters compute shapes at run time (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape). Where the shapes are known, each such chain's last
// value becomes a constant and the arithmetic behind it goes. Symbolic dims (a batch
// size) keep the nodes that depend on them, except in a Reshape's target: there a dim
// that is the data's own dim at the same place is Reshape's 0 ("copy"), and one other
// unknown dim is its -1, so the target is a constant whatever the batch.
// Where a shape is unknown only because float arithmetic on shapes (a resize's scale) is
// left to fold-constants, the pass folds that arithmetic, infers shapes again and takes
// another round.
#include <algorithm>
#include <cstring>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "core/shape_values.h"

namespace fsc::passes {
namespace {

// Shape values are small; a larger one is data, left to fold-constants.
constexpr size_t kMaxElements = 4096;
// Rounds of folding and inferring again; a detector's pre-processing needed three.
constexpr int kMaxRounds = 8;

std::optional<Tensor> toTensor(const std::vector<int64_t>& values, const ValueType& type) {
    if (type.kind != ValueType::Kind::Tensor || !type.shape.rankKnown()) return std::nullopt;
    std::vector<int64_t> dims;
    if (type.shape.rank() == 0) {
        if (values.size() != 1) return std::nullopt;
    } else if (type.shape.rank() == 1) {
        dims = {static_cast<int64_t>(values.size())};
    } else {
        if (!type.shape.isStatic()) return std::nullopt;
        for (const Dim& d : type.shape.dims()) dims.push_back(d.size());
        if (checkedProduct(dims).value_or(-1) != static_cast<int64_t>(values.size())) return std::nullopt;
    }
    const size_t n = values.size();
    switch (type.elemType) {
        case DType::Int64: return int64Tensor("", dims, values);
        case DType::Int32: {
            std::string bytes(n * 4, '\0');
            for (size_t i = 0; i < n; ++i) {
                const int32_t v = static_cast<int32_t>(values[i]);
                std::memcpy(bytes.data() + i * 4, &v, 4);
            }
            return Tensor("", DType::Int32, dims, makeBuffer(std::move(bytes)), 0, n * 4);
        }
        case DType::Bool: {
            std::string bytes(n, '\0');
            for (size_t i = 0; i < n; ++i) bytes[i] = values[i] != 0;
            return Tensor("", DType::Bool, dims, makeBuffer(std::move(bytes)), 0, n);
        }
        default: return std::nullopt;
    }
}

class FoldShapeComputationPass : public Pass {
public:
    std::string name() const override { return "fold-shape-computation"; }
    std::string description() const override {
        return "replaces shape arithmetic on known shapes by constants";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        // Each round looks at the whole graph again, so only the last round's rejections stand.
        const size_t rejectionsBefore = context.rejections.size();
        const auto rejectedBefore = context.counters.rejected;
        std::unique_ptr<Pass> constants = foldConstants();
        for (int round = 1;; ++round) {
            context.rejections.resize(rejectionsBefore);
            context.counters.rejected = rejectedBefore;
            readShapesOfInputs(context);
            rw.finish();
            foldKnownShapes(context);
            rw.finish();
            if (round == kMaxRounds || !constantWorkHidesShapes(rw)) break;
            if (context.cancelled()) return {ErrorCode::Cancelled, "cancelled"};
            const int appliedBefore = context.counters.applied;
            if (Status s = constants->run(context); !s) return s;
            if (context.counters.applied == appliedBefore) break;  // nothing it could fold
            refreshShapes(context.model);
        }
        return Status::ok();
    }

private:
    // Values computable from constants alone (a Resize's sizes worked out in float from the
    // image's shape: Cast, Mul, Floor) read by a node whose shape is not known, or known
    // only by an invented name: folding them and inferring again may size everything after
    // (a detector's feature maps, its anchors), whose shape arithmetic the next round folds.
    static bool constantWorkHidesShapes(const Rewriter& rw) {
        const Graph& g = rw.graph();
        std::vector<bool> computable(g.valueCount(), false);
        auto isComputable = [&](ValueId v) { return !v.valid() || rw.constant(v) || computable[v.index]; };
        auto unsized = [&](ValueId v) {
            const Shape& shape = g.value(v).type.shape;
            if (!shape.rankKnown()) return true;
            for (const Dim& d : shape.dims())
                if (!d.isKnown() && (!d.isSymbolic() || isInventedSymbol(d))) return true;
            return false;
        };
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            const bool foldable = n.domain.empty() && n.subgraphs().empty() && !isRandomOp(n) &&
                                  std::all_of(n.inputs.begin(), n.inputs.end(), isComputable);
            if (foldable) {
                for (ValueId out : n.outputs)
                    if (out.valid()) computable[out.index] = true;
                continue;
            }
            const bool readsComputed = std::any_of(n.inputs.begin(), n.inputs.end(),
                                                   [&](ValueId v) { return v.valid() && computable[v.index]; });
            if (readsComputed && std::any_of(n.outputs.begin(), n.outputs.end(),
                                             [&](ValueId v) { return v.valid() && unsized(v); }))
                return true;
        }
        return false;
    }

    // A Transpose or Reshape whose output only Shapes read: an exporter's x.size() after a
    // permute or a view (GPT-2's key length, its merged heads' shape). It copies the tensor at
    // every run, and under tensor-parallel it is a reader outside the pair of the heads it
    // splits. Where each of its dims is one of its input's dims or a number, the Shapes read
    // the input instead, Gather (and Concat, for numbers) picking the dims, and it goes.
    static void readShapesOfInputs(PassContext& context) {
        Rewriter& rw = context.rewriter;
        const Graph& g = rw.graph();
        for (NodeId id : std::vector<NodeId>(g.order())) {
            const Node n = g.node(id);
            if (n.outputs.size() != 1 || !n.outputs[0].valid() || !n.domain.empty()) continue;
            const ValueId out = n.outputs[0];
            const std::vector<NodeId> readers = rw.users(out);
            if (readers.empty() || rw.isGraphOutput(out) || rw.isCaptured(out) ||
                !std::all_of(readers.begin(), readers.end(), [&](NodeId r) { return isOp(g.node(r), "Shape"); }))
                continue;
            const auto dims = dimsOfInput(g, n);
            if (!dims) continue;
            ++context.counters.matched;
            const int64_t inRank = int64_t(g.value(n.inputs[0]).type.shape.rank()), rank = int64_t(dims->index.size());
            for (NodeId reader : readers) {
                const Node shape = g.node(reader);
                int64_t start = intAttr(shape, "start", 0), end = intAttr(shape, "end", rank);
                start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
                end = std::clamp<int64_t>(end < 0 ? end + rank : end, start, rank);
                const std::vector<int64_t> picked(dims->index.begin() + start, dims->index.begin() + end);
                const std::string name = g.value(shape.outputs[0]).name;
                const std::vector<NodeId> from{reader, id};
                ValueId source = rw.addIntermediate(ValueType::tensor(DType::Int64, Shape::ofSizes({inRank})), name + "/of_input");
                Node whole = shape;
                whole.inputs[0] = n.inputs[0];
                whole.outputs = {source};
                whole.attributes.clear();
                rw.removeNode(reader);
                rw.addNode(std::move(whole), reader, from);
                if (std::any_of(picked.begin(), picked.end(), [&](int64_t i) { return i >= inRank; })) {
                    const int64_t count = int64_t(dims->numbers.size());
                    const ValueId numbers = rw.addConstant(int64Tensor("numbers", {count}, dims->numbers), shape.name + "/numbers");
                    const ValueId joined =
                        rw.addIntermediate(ValueType::tensor(DType::Int64, Shape::ofSizes({inRank + count})), name + "/with_numbers");
                    Node concat = makeNode("Concat", "", shape, {source, numbers}, {joined});
                    concat.name = shape.name + "/with_numbers";
                    concat.attributes = {fsc::intAttr("axis", 0)};
                    rw.addNode(std::move(concat), reader, from);
                    source = joined;
                }
                const ValueId order = rw.addConstant(int64Tensor("dims", {int64_t(picked.size())}, picked), shape.name + "/dims");
                Node gather = makeNode("Gather", "", shape, {source, order}, {shape.outputs[0]});
                gather.name = shape.name + "/picked";
                gather.attributes = {fsc::intAttr("axis", 0)};
                rw.addNode(std::move(gather), reader, from);
            }
            const std::string op = n.opType;
            rw.removeNode(id);
            if (rw.commit("shape-of-input", "a " + op + " read only by Shape: its dims are its input's (or numbers), read there"))
                ++context.counters.applied;
        }
    }

    // Each output dim of `n` as an index into its input's dims; from the input's rank on, an
    // index into `numbers`.
    struct DimsOfInput {
        std::vector<int64_t> index;
        std::vector<int64_t> numbers;
    };
    static std::optional<DimsOfInput> dimsOfInput(const Graph& g, const Node& n) {
        if (n.inputs.empty() || !n.inputs[0].valid()) return std::nullopt;
        const Shape& in = g.value(n.inputs[0]).type.shape;
        const Shape& out = g.value(n.outputs[0]).type.shape;
        if (!in.rankKnown() || !out.rankKnown()) return std::nullopt;
        DimsOfInput dims;
        if (isOp(n, "Transpose")) {  // exact whatever the dims: the perm says which is which
            dims.index = intsAttr(n, "perm");
            if (dims.index.empty())
                for (int64_t d = int64_t(in.rank()) - 1; d >= 0; --d) dims.index.push_back(d);
            return dims.index.size() == in.rank() ? std::optional(dims) : std::nullopt;
        }
        if (!isOp(n, "Reshape")) return std::nullopt;
        for (const Dim& d : out.dims()) {
            if (d.isKnown()) {
                dims.index.push_back(int64_t(in.rank() + dims.numbers.size()));
                dims.numbers.push_back(d.size());
                continue;
            }
            if (!d.isSymbolic()) return std::nullopt;  // the same symbol is the same size; nothing else is known
            const auto at = std::find(in.dims().begin(), in.dims().end(), d);
            if (at == in.dims().end()) return std::nullopt;
            dims.index.push_back(int64_t(at - in.dims().begin()));
        }
        return dims;
    }

    void foldKnownShapes(PassContext& context) {
        Rewriter& rw = context.rewriter;
        const Graph& g = rw.graph();
        const std::vector<NodeId> order = g.order();
        ShapeValueTable table(g);
        // Nodes whose (only) output is known: candidates.
        std::vector<bool> known(g.nodeArenaSize(), false);
        std::vector<std::vector<int64_t>> values(g.nodeArenaSize());
        for (NodeId id : order) {
            const Node& n = g.node(id);
            table.evaluate(n);
            if (n.opType == "Constant" || n.outputs.size() != 1 || !n.outputs[0].valid() ||
                !n.domain.empty() || !n.subgraphs().empty())
                continue;
            const DType type = dtypeOf(g, n.outputs[0]);
            if (type != DType::Int64 && type != DType::Int32 && type != DType::Bool) continue;
            auto ints = knownInts(table.find(n.outputs[0]));
            if (!ints || ints->size() > kMaxElements) continue;
            known[id.index] = true;
            values[id.index] = std::move(*ints);
        }
        // A known value read by anything that is not itself known becomes a constant.
        for (NodeId id : order) {
            if (!known[id.index]) continue;
            const Node& n = g.node(id);
            const ValueId out = n.outputs[0];
            bool boundary = rw.isGraphOutput(out) || rw.isCaptured(out);
            for (NodeId user : rw.users(out)) boundary |= !known[user.index];
            if (!boundary) continue;
            if (rw.isGraphOutput(out) || rw.isCaptured(out)) {
                context.reject("shape-value", id, "its output is a graph output that must keep its name");
                known[id.index] = false;
                continue;
            }
            auto tensor = toTensor(values[id.index], g.value(out).type);
            if (!tensor) {
                context.reject("shape-value", id, "the result's type or rank is unknown");
                known[id.index] = false;
                continue;
            }
            ++context.counters.matched;
            const std::string op = n.opType;
            ValueId c = rw.addConstant(std::move(*tensor), g.value(out).name + "/folded");
            rw.replaceAllUses(out, c);
            rw.removeNode(id);
            if (rw.commit("shape-value", op + " computes a shape that is known: " +
                                             describe(values[id.index])))
                ++context.counters.applied;
        }
        for (NodeId id : order)
            if (rw.isLive(id)) foldReshapeTarget(context, id, table);
        // The arithmetic feeding the folded values is read by nothing now.
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            if (!known[it->index] || !rw.isLive(*it)) continue;
            const ValueId out = g.node(*it).outputs[0];
            if (!rw.users(out).empty() || rw.isGraphOutput(out) || rw.isCaptured(out)) continue;
            const std::string op = g.node(*it).opType;
            rw.removeNode(*it);
            if (rw.commit("shape-value", op + " was part of a shape computation folded to a constant"))
                ++context.counters.applied;
        }
    }

    // A Reshape whose target holds symbolic dims gets a constant target of 0s (the data's
    // dim at the same place, by symbol) and at most one -1 (the one dim left, which the
    // element count decides). The nodes computing the old target go with dead-code
    // elimination once nothing else reads them.
    static void foldReshapeTarget(PassContext& context, NodeId id, ShapeValueTable& table) {
        Rewriter& rw = context.rewriter;
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (!isOp(n, "Reshape") || n.inputs.size() != 2 || rw.constant(n.inputs[1])) return;
        const ShapeValue* target = table.find(n.inputs[1]);
        if (!target || knownInts(target)) return;  // unknown, or folded above
        const Shape& data = g.value(n.inputs[0]).type.shape;
        if (!data.rankKnown()) return context.reject("reshape-target", id, "the data's rank is unknown");
        if (intAttr(n, "allowzero", 0) != 0)
            return context.reject("reshape-target", id, "allowzero: a 0 in the target cannot copy a dim");
        std::vector<int64_t> folded;
        size_t inferred = 0;
        for (size_t i = 0; i < target->size(); ++i) {
            const Dim& d = (*target)[i];
            if (d.isKnown()) folded.push_back(d.size());
            else if (d.isSymbolic() && i < data.rank() && data[i] == d) folded.push_back(0);
            else folded.push_back(-1);
            inferred += folded.back() == -1;
        }
        if (inferred > 1)
            return context.reject("reshape-target", id, "more than one dim of the target is neither known nor the data's own");
        // Shape inference must still tell the output's shape as well as from the old target
        // (a -1 it cannot resolve would hide every shape after it).
        ShapeValue foldedValue;
        for (int64_t v : folded) foldedValue.push_back(Dim::known(v));
        const auto before = reshapeResult(data, *target, false);
        const auto after = reshapeResult(data, foldedValue, false);
        if (before && (!after || *after != *before))
            return context.reject("reshape-target", id, "with 0 and -1 the output's shape would be less known");
        ++context.counters.matched;
        ValueId c = rw.addConstant(int64Tensor("", {int64_t(folded.size())}, folded),
                                   g.value(n.inputs[1]).name + "/folded");
        rw.setInput(id, 1, c);
        if (rw.commit("reshape-target", "the target's symbolic dims are the data's own (0) or inferred (-1): " +
                                            describe(folded)))
            ++context.counters.applied;
    }

    static std::string describe(const std::vector<int64_t>& v) {
        std::string s = "[";
        for (size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? "," : "") + std::to_string(v[i]);
        if (v.size() > 8) s += ",...";
        return s + "]";
    }
};

}  // namespace

std::unique_ptr<Pass> foldShapeComputation() { return std::make_unique<FoldShapeComputationPass>(); }

}  // namespace fsc::passes
