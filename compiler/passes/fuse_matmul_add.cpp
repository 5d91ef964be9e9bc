// matmul-add-fusion: MatMul by a 2-D weight followed by adding a per-column constant bias
// becomes Gemm when the activations are 2-D, and ai.fusescope.FusedMatMul (bias in the
// epilogue) when they have more dims, as transformer activations do. A com.microsoft.MatMulNBits
// (block-quantized weights) without a bias takes the Add's as its own bias input.
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

// A per-column constant: one value of `type` per output column, varying along the last axis only.
std::string perColumnBlocker(const Tensor* bias, int64_t n, DType type) {
    if (!bias) return "the bias is not a constant";
    for (size_t d = 0; d + 1 < bias->dims().size(); ++d)
        if (bias->dims()[d] != 1) return "the bias varies along more than the last axis";
    if (bias->numElements() != n || bias->dtype() != type)
        return "the bias does not have one value of the product's type per output column";
    return {};
}

// The same bytes as a vector.
ValueId asVector(Rewriter& rw, ValueId v) {
    const Tensor& bias = *rw.constant(v);
    if (bias.dims().size() == 1) return v;
    std::string bytes(reinterpret_cast<const char*>(bias.data()), bias.byteSize());
    Tensor vector("", bias.dtype(), {bias.numElements()}, makeBuffer(std::move(bytes)), 0, bias.byteSize());
    return rw.addConstant(std::move(vector), rw.graph().value(v).name + "/1d");
}

class NBitsBiasPattern : public TypedPattern<MatMulBias> {
public:
    std::string name() const override { return "matmul-nbits-bias"; }
    std::set<std::string> rootOps() const override { return {"Add"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& add = g.node(anchor);
        if (!isOp(add, "Add") || add.inputs.size() != 2) return MatchResult::none();
        for (int side = 0; side < 2; ++side) {
            const NodeId mmId = rw.producer(add.inputs[side]);
            if (!mmId.valid() || g.node(mmId).opType != "MatMulNBits" || g.node(mmId).domain != "com.microsoft") continue;
            const Node& mm = g.node(mmId);
            if (mm.inputs.size() > 5 && mm.inputs[5].valid()) return MatchResult::rejected("the MatMulNBits has a bias already");
            if (mm.inputs.size() > 4 && mm.inputs[4].valid()) return MatchResult::rejected("g_idx is given");
            if (!rw.soleUser(mm.outputs[0]).valid()) return MatchResult::rejected("the product has other readers");
            const std::string blocker = perColumnBlocker(rw.constant(add.inputs[1 - side]), intAttr(mm, "N", -1), DType::Float32);
            if (!blocker.empty()) return MatchResult::rejected(blocker);
            return MatchResult::matched(MatMulBias{mmId, anchor, add.inputs[1 - side], false});
        }
        return MatchResult::none();
    }

    std::string rewrite(Rewriter& rw, const MatMulBias& m) const override {
        Node mm = rw.graph().node(m.matmul);
        const Node add = rw.graph().node(m.add);
        mm.inputs.resize(6);
        mm.inputs[5] = asVector(rw, m.bias);
        mm.outputs = {add.outputs[0]};
        rw.removeNode(m.add);
        rw.removeNode(m.matmul);
        rw.addNode(std::move(mm), m.add, {m.matmul, m.add});
        return "MatMulNBits + per-column bias: its own bias input";
    }
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
            if (std::string why = perColumnBlocker(bias, (*wDims)[1], type); !why.empty()) return MatchResult::rejected(why);
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
        const ValueId bias1d = asVector(rw, m.bias);
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
                                         [] {
                                             std::vector<std::unique_ptr<RewritePattern>> patterns;
                                             patterns.push_back(std::make_unique<MatMulAddPattern>());
                                             patterns.push_back(std::make_unique<NBitsBiasPattern>());
                                             return patterns;
                                         }());
}

}  // namespace fsc::passes
