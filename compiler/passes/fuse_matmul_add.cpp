// matmul-add-fusion: MatMul by a 2-D weight followed by adding a per-column constant bias
// becomes Gemm when the activations are 2-D, and ai.fusescope.FusedMatMul (bias in the
// epilogue) when they have more dims, as transformer activations do.
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "compiler/pass_manager.h"
#include "core/buffer.h"

namespace fsc::passes {
namespace {

struct MatMulBias {
    NodeId matmul, add;
    ValueId bias;
    bool gemm = false;  // 2-D activations: a Gemm, else FusedMatMul
};

class MatMulAddPattern : public TypedPattern<MatMulBias> {
public:
    std::string name() const override { return "matmul-add"; }
    std::set<std::string> rootOps() const override { return {"Add"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& add = g.node(anchor);
        if (!isOp(add, "Add") || add.inputs.size() != 2) return MatchResult::none();
        for (int side = 0; side < 2; ++side) {
            NodeId mmId = rw.producer(add.inputs[side]);
            if (!mmId.valid() || !isOp(g.node(mmId), "MatMul")) continue;
            const Node& mm = g.node(mmId);
            const ValueId biasV = add.inputs[1 - side];
            if (!rw.soleUser(mm.outputs[0]).valid()) return MatchResult::rejected("the MatMul output has other readers");
            auto wDims = staticDims(g, mm.inputs[1]);
            if (!wDims || wDims->size() != 2) return MatchResult::rejected("the weight is not 2-D");
            const auto& aType = g.value(mm.inputs[0]).type;
            // An activation rank the shapes do not tell (Swin's window reshapes) is fine for a
            // 1-D bias: MatMul's output always ends in the weight's columns.
            const bool rankKnown = aType.shape.rankKnown();
            const DType type = dtypeOf(g, mm.outputs[0]);
            if (!isFusableFloat(type)) return MatchResult::rejected("only float32, float16 and bfloat16 are fused");
            const Tensor* bias = rw.constant(biasV);
            if (!bias) return MatchResult::rejected("the bias is not a constant");
            const int64_t n = (*wDims)[1];
            for (size_t d = 0; d + 1 < bias->dims().size(); ++d)
                if (bias->dims()[d] != 1) return MatchResult::rejected("the bias varies along more than the last axis");
            if (bias->numElements() != n || bias->dtype() != type)
                return MatchResult::rejected("the bias does not have one value of the product's type per output column");
            if (!rankKnown && bias->dims().size() > 1)
                return MatchResult::rejected("the activations' rank is unknown and the bias is not 1-D");
            if (rankKnown && bias->dims().size() > aType.shape.rank()) return MatchResult::rejected("the bias adds dims");
            return MatchResult::matched(MatMulBias{mmId, anchor, biasV, rankKnown && aType.shape.rank() == 2});
        }
        return MatchResult::none();
    }

    std::string rewrite(Rewriter& rw, const MatMulBias& m) const override {
        const Node mm = rw.graph().node(m.matmul);
        const Node add = rw.graph().node(m.add);
        const Tensor& bias = *rw.constant(m.bias);
        ValueId bias1d = m.bias;
        if (bias.dims().size() != 1) {  // the same bytes as a vector
            std::string bytes(reinterpret_cast<const char*>(bias.data()), bias.byteSize());
            Tensor vector("", bias.dtype(), {bias.numElements()}, makeBuffer(std::move(bytes)), 0, bias.byteSize());
            bias1d = rw.addConstant(std::move(vector), rw.graph().value(m.bias).name + "/1d");
        }
        const bool gemm = m.gemm;
        Node fused = makeNode(gemm ? "Gemm" : "FusedMatMul", gemm ? "" : kFusescopeDomain, mm,
                              {mm.inputs[0], mm.inputs[1], bias1d}, {add.outputs[0]});
        fused.name = mm.name;
        rw.removeNode(m.add);
        rw.removeNode(m.matmul);
        rw.addNode(std::move(fused), m.add, {m.matmul, m.add});
        return gemm ? "MatMul + Add of a per-column bias is a Gemm"
                    : "MatMul + per-column bias: the bias is added in the MatMul's epilogue";
    }
};

}  // namespace

std::unique_ptr<Pass> fuseMatMulAdd() {
    return std::make_unique<PatternPass>("matmul-add-fusion",
                                         "MatMul + bias becomes Gemm (2-D) or FusedMatMul with a bias epilogue",
                                         onePattern(std::make_unique<MatMulAddPattern>()));
}

}  // namespace fsc::passes
