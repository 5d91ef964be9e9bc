// rows-gemm-to-matmul: a linear layer written over the rows of a flattened tensor, Reshape
// [..., K] -> [rows, K], Gemm by a constant weight, Reshape back to [..., N], is one MatMul of
// the unflattened tensor (and an Add of the bias). Hugging Face's GPT-2 writes every linear
// layer so (its Conv1D is addmm over x.view(-1, K)), and older exporters nn.Linear on 3-D
// input. Where the Reshape to rows also merged trailing dims (attention's heads), one Reshape
// of those into K stays. As a MatMul the layer meets the fusions that take MatMul (split-packed-projection,
// matmul-add-fusion with its activation epilogue, tensor-parallel), and the two Reshapes go
// with the shape arithmetic that computed their targets.
#include <cstring>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/buffer.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

struct RowsGemm {
    NodeId flatten, gemm, unflatten;
    size_t leading;  // dims of the flattened input that the output keeps; the rest make K
};

// Equal dims that are sizes or the same symbol (from the same Shape), never unknown ones.
bool sameKnownDims(const Shape& a, const Shape& b, size_t count) {
    if (!a.rankKnown() || !b.rankKnown() || a.rank() < count || b.rank() < count) return false;
    for (size_t i = 0; i < count; ++i)
        if (a[i].isUnknown() || !(a[i] == b[i])) return false;
    return true;
}

class RowsGemmPattern : public TypedPattern<RowsGemm> {
public:
    std::string name() const override { return "rows-gemm"; }
    std::set<std::string> rootOps() const override { return {"Gemm"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& gemm = g.node(anchor);
        if (gemm.inputs.size() < 2 || gemm.outputs.size() != 1) return MatchResult::none();
        const NodeId flatten = rw.producer(gemm.inputs[0]);
        const NodeId unflatten = rw.soleUser(gemm.outputs[0]);
        if (!flatten.valid() || !isOp(g.node(flatten), "Reshape") || !unflatten.valid() ||
            !isOp(g.node(unflatten), "Reshape") || g.node(unflatten).inputs[0] != gemm.outputs[0])
            return MatchResult::none();
        const Tensor* w = rw.constant(gemm.inputs[1]);
        if (!w || w->dims().size() != 2 || !isFusableFloat(w->dtype())) return MatchResult::none();
        if (intAttr(gemm, "transA", 0) != 0 || floatAttr(gemm, "alpha", 1.0f) != 1.0f)
            return MatchResult::rejected("Gemm with transA or alpha");
        const bool transB = intAttr(gemm, "transB", 0) != 0;
        const int64_t k = w->dims()[transB ? 1 : 0], n = w->dims()[transB ? 0 : 1];
        if (gemm.inputs.size() > 2 && gemm.inputs[2].valid()) {
            const Tensor* c = rw.constant(gemm.inputs[2]);
            if (!c || c->numElements() != n || c->dims().empty() || c->dims().back() != n ||
                floatAttr(gemm, "beta", 1.0f) != 1.0f)
                return MatchResult::rejected("the bias is not one constant per output column");
        }
        if (!rw.soleUser(gemm.inputs[0]).valid()) return MatchResult::rejected("the flattened rows are read elsewhere");
        const Shape& x = g.value(g.node(flatten).inputs[0]).type.shape;
        const Shape& rows = g.value(gemm.inputs[0]).type.shape;
        const Shape& y = g.value(g.node(unflatten).outputs[0]).type.shape;
        if (!x.rankKnown() || !rows.rankKnown() || rows.rank() != 2 || !y.rankKnown() || y.rank() < 3 || x.rank() < y.rank())
            return MatchResult::none();
        // The output's leading dims are the input's, and the input's other dims make K (heads
        // merged into one row by the same Reshape: [b, s, heads, size] -> [b x s, K]).
        const size_t leading = y.rank() - 1;
        int64_t merged = 1;
        for (size_t i = leading; i < x.rank(); ++i) merged *= x[i].isKnown() ? x[i].size() : -1;
        if (merged != k || !y[leading].isKnown() || y[leading].size() != n)
            return MatchResult::rejected("the Reshapes do not keep the last axis");
        if (!sameKnownDims(x, y, leading))
            return MatchResult::rejected("the second Reshape is not known to restore the leading dims");
        return MatchResult::matched(RowsGemm{flatten, anchor, unflatten, leading});
    }

    std::string rewrite(Rewriter& rw, const RowsGemm& m) const override {
        const Node flatten = rw.graph().node(m.flatten), gemm = rw.graph().node(m.gemm), unflatten = rw.graph().node(m.unflatten);
        ValueId weight = gemm.inputs[1];
        if (intAttr(gemm, "transB", 0) != 0) {
            const Tensor& w = *rw.constant(weight);
            const int64_t rows = w.dims()[0], columns = w.dims()[1];
            const size_t bytes = size_t(dtypeBits(w.dtype()) / 8);
            std::string data(size_t(w.numElements()) * bytes, '\0');
            const auto* src = reinterpret_cast<const char*>(w.data());
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < columns; ++c)
                    std::memcpy(data.data() + size_t(c * rows + r) * bytes, src + size_t(r * columns + c) * bytes, bytes);
            weight = rw.addConstant(Tensor(w.name() + "_t", w.dtype(), {columns, rows}, makeBuffer(std::move(data)), 0,
                                           size_t(w.numElements()) * bytes),
                                    rw.graph().value(gemm.inputs[1]).name + "/transposed");
        }
        const bool bias = gemm.inputs.size() > 2 && gemm.inputs[2].valid();
        const ValueId result = unflatten.outputs[0];
        const ValueId product = bias ? rw.addIntermediate(rw.graph().value(result).type, gemm.name + "/product") : result;
        rw.removeNode(m.unflatten);
        rw.removeNode(m.gemm);
        rw.removeNode(m.flatten);
        const std::vector<NodeId> from{m.flatten, m.gemm, m.unflatten};
        ValueId x = flatten.inputs[0];
        const Shape& inShape = rw.graph().value(x).type.shape;
        if (inShape.rank() > m.leading + 1) {  // merge the trailing dims into K; 0 keeps a leading dim as it is
            std::vector<int64_t> target(m.leading, 0);
            std::vector<Dim> dims(inShape.dims().begin(), inShape.dims().begin() + ptrdiff_t(m.leading));
            const int64_t k = rw.constant(weight)->dims()[0];
            target.push_back(k);
            dims.push_back(Dim::known(k));
            const ValueId shape = rw.addConstant(int64Tensor("rows_shape", {int64_t(target.size())}, target), flatten.name + "/merged");
            const ValueId merged = rw.addIntermediate(ValueType::tensor(dtypeOf(rw.graph(), x), Shape(std::move(dims))), flatten.name);
            Node reshape = makeNode("Reshape", "", flatten, {x, shape}, {merged});
            reshape.name = flatten.name;
            reshape.attributes.clear();
            rw.addNode(std::move(reshape), m.unflatten, from);
            x = merged;
        }
        Node matmul = makeNode("MatMul", "", gemm, {x, weight}, {product});
        matmul.name = gemm.name;
        rw.addNode(std::move(matmul), m.unflatten, from);
        if (bias) {
            Node add = makeNode("Add", "", gemm, {product, gemm.inputs[2]}, {result});
            add.name = gemm.name + "/bias";
            rw.addNode(std::move(add), m.unflatten, from);
        }
        return "a Gemm over the flattened rows is a MatMul of the unflattened tensor; both Reshapes go";
    }
};

}  // namespace

std::unique_ptr<Pass> rowsGemmToMatMul() {
    return std::make_unique<PatternPass>("rows-gemm-to-matmul",
                                         "a Gemm between a Reshape to rows and a Reshape back becomes one MatMul",
                                         onePattern(std::make_unique<RowsGemmPattern>()));
}

}  // namespace fsc::passes
