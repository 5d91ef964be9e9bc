// lower-contrib-ops: the com.microsoft ops ONNX Runtime's optimizer writes into a model it
// saves, as the standard (and our own) ops they stand for, so that a model saved after
// ONNX Runtime's optimization meets the same fusions as the export it came from:
//   FusedMatMul(A, B)            -> [Transpose] [Transpose] MatMul [Mul by alpha]
//   SkipLayerNormalization       -> Add(input, bias) Add(skip) LayerNormalization
//   Gelu / BiasGelu / FastGelu   -> [Add of the bias] Gelu (FastGelu: approximate = tanh)
//   SimplifiedLayerNormalization -> our RmsNorm (ONNX Runtime registers the op in the ONNX
//                                   domain, where ONNX's checker finds no such op)
//   Attention                    -> MatMul [Add] Reshape per part, the mask's ops, our
//                                   Attention, Reshape (contrib_attention_lowering.cpp)
// Each keeps the op's arithmetic; SkipLayerNormalization adds its bias to the input before
// the skip (ONNX Runtime adds it last), so that the bias can join the product before it and
// the residual Add the norm: sums that differ in their last bit. An op whose other outputs
// are read (SkipLayerNormalization's mean and inverse deviation) stays as it is, run by its
// kernel (backends/cpu/contrib_ops.cpp).
#include "compiler/passes/contrib_attention_lowering.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "compiler/runtime/fused_domain.h"
#include "core/fused_matmul_axes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

constexpr const char* kMs = "com.microsoft";

struct ContribOp {
    NodeId node;
};

bool outputRead(const Rewriter& rw, const Node& n, size_t i) {
    return i < n.outputs.size() && n.outputs[i].valid() && (!rw.users(n.outputs[i]).empty() || rw.isGraphOutput(n.outputs[i]));
}

// The type of x with its axes moved: out axis d is x's axis perm[d].
ValueType permutedType(const ValueType& x, const std::vector<int64_t>& perm) {
    ValueType t = x;
    if (!x.shape.rankKnown() || x.shape.rank() != perm.size()) {
        t.shape = Shape();
        return t;
    }
    std::vector<Dim> dims;
    for (int64_t p : perm) dims.push_back(x.shape.dims()[size_t(p)]);
    t.shape = Shape(std::move(dims));
    return t;
}

class LowerContribPattern : public TypedPattern<ContribOp> {
public:
    LowerContribPattern(int64_t opset, std::string keepAttention) : m_opset(opset), m_keepAttention(std::move(keepAttention)) {}
    std::string name() const override { return "contrib-op"; }
    std::set<std::string> rootOps() const override {
        return {"FusedMatMul", "SkipLayerNormalization", "Gelu", "BiasGelu", "FastGelu", "Attention",
                "SimplifiedLayerNormalization"};
    }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& n = g.node(anchor);
        if (n.opType == "SimplifiedLayerNormalization" && (n.domain.empty() || n.domain == kMs)) {
            if (outputRead(rw, n, 1)) return MatchResult::rejected("its inverse deviation output is read");
            if (intAttr(n, "axis", -1) != -1) return MatchResult::rejected("it normalizes more than the last axis");
            return MatchResult::matched(ContribOp{anchor});
        }
        if (n.domain != kMs) return MatchResult::none();
        if (n.opType == "Attention") {
            if (!m_keepAttention.empty()) return MatchResult::rejected(m_keepAttention);
            const std::string blocker = contribAttentionBlocker(rw, n, m_opset);
            if (!blocker.empty()) return MatchResult::rejected(blocker);
        }
        if (n.opType == "FusedMatMul") {
            const bool batch = intAttr(n, "transBatchA", 0) || intAttr(n, "transBatchB", 0);
            for (size_t i = 0; i < 2; ++i) {
                const auto& shape = g.value(n.inputs[i]).type.shape;
                if (!shape.rankKnown()) return MatchResult::rejected("an operand's rank is unknown");
                if (batch && shape.rank() < 3) return MatchResult::rejected("transBatch needs operands of rank 3 or more");
            }
        }
        if (n.opType == "SkipLayerNormalization") {
            if (outputRead(rw, n, 1) || outputRead(rw, n, 2))
                return MatchResult::rejected("its mean or inverse deviation output is read");
            if (n.inputs.size() < 3 || !sameShape(g, n.inputs[0], n.inputs[1]))
                return MatchResult::rejected("the skip broadcasts, or the shapes are unknown");
        }
        return MatchResult::matched(ContribOp{anchor});
    }

    std::string rewrite(Rewriter& rw, const ContribOp& m) const override {
        if (rw.graph().node(m.node).opType == "Attention") return lowerContribAttention(rw, m.node, m_opset, m_masks);
        const Node n = rw.graph().node(m.node);
        rw.removeNode(m.node);
        std::vector<Node> nodes;
        auto intermediate = [&](ValueType type, const std::string& hint) { return rw.addIntermediate(std::move(type), n.name + hint); };
        const ValueType outType = rw.graph().value(n.outputs[0]).type;
        std::string said;
        if (n.opType == "SimplifiedLayerNormalization") {
            nodes.push_back(makeNode("RmsNorm", kFusescopeDomain, n, {n.inputs[0], n.inputs[1]}, {n.outputs[0]},
                                     {fsc::floatAttr("epsilon", floatAttr(n, "epsilon", 1e-5f)), fsc::intAttr("axis", -1)}));
            said = "SimplifiedLayerNormalization as our RmsNorm: ONNX's checker knows no such op in the ONNX domain";
        } else if (n.opType == "FusedMatMul") {
            ValueId operands[2] = {n.inputs[0], n.inputs[1]};
            const char* transName[2] = {"transA", "transB"};
            const char* batchName[2] = {"transBatchA", "transBatchB"};
            for (int i = 0; i < 2; ++i) {
                const ValueType& t = rw.graph().value(operands[i]).type;
                const int64_t rank = int64_t(t.shape.rank());
                const std::vector<int64_t> perm =
                    fusedMatMulAxes(rank, intAttr(n, transName[i], 0) != 0, intAttr(n, batchName[i], 0) != 0);
                bool identity = true;
                for (int64_t d = 0; d < rank; ++d) identity &= perm[size_t(d)] == d;
                if (identity) continue;
                const ValueId moved = intermediate(permutedType(t, perm), i ? "/b_transposed" : "/a_transposed");
                nodes.push_back(makeNode("Transpose", "", n, {operands[i]}, {moved}, {fsc::intsAttr("perm", perm)}));
                operands[i] = moved;
            }
            const float alpha = floatAttr(n, "alpha", 1.0f);
            const ValueId product = alpha == 1.0f ? n.outputs[0] : intermediate(outType, "/product");
            nodes.push_back(makeNode("MatMul", "", n, {operands[0], operands[1]}, {product}));
            if (alpha != 1.0f) {
                const ValueId scale = rw.addConstant(makeFloatTensor({}, {alpha}), n.name + "/alpha");
                nodes.push_back(makeNode("Mul", "", n, {product, scale}, {n.outputs[0]}));
            }
            said = "FusedMatMul as Transpose, MatMul and Mul: the attention and bias fusions see a plain product";
        } else if (n.opType == "SkipLayerNormalization") {
            const ValueType sumType = rw.graph().value(n.inputs[0]).type;
            ValueId first = n.inputs[0];
            if (n.inputs.size() > 4 && n.inputs[4].valid()) {
                first = intermediate(sumType, "/biased");
                nodes.push_back(makeNode("Add", "", n, {n.inputs[0], n.inputs[4]}, {first}));
            }
            const ValueId sum = outputRead(rw, n, 3) ? n.outputs[3] : intermediate(sumType, "/sum");
            nodes.push_back(makeNode("Add", "", n, {first, n.inputs[1]}, {sum}));
            std::vector<ValueId> normInputs{sum, n.inputs[2]};
            if (n.inputs.size() > 3 && n.inputs[3].valid()) normInputs.push_back(n.inputs[3]);
            nodes.push_back(makeNode("LayerNormalization", kFusescopeDomain, n, normInputs, {n.outputs[0]},
                                     {fsc::floatAttr("epsilon", floatAttr(n, "epsilon", 1e-12f)), fsc::intAttr("axis", -1)}));
            said = "SkipLayerNormalization as its Adds and LayerNormalization: the bias joins the product before it, "
                   "the residual Add the norm";
        } else {  // Gelu, BiasGelu, FastGelu
            ValueId x = n.inputs[0];
            if (n.inputs.size() > 1 && n.inputs[1].valid()) {
                x = intermediate(outType, "/biased");
                nodes.push_back(makeNode("Add", "", n, {n.inputs[0], n.inputs[1]}, {x}));
            }
            std::vector<Attribute> attrs;
            if (n.opType == "FastGelu") attrs.push_back(fsc::stringAttr("approximate", "tanh"));
            nodes.push_back(makeNode("Gelu", kFusescopeDomain, n, {x}, {n.outputs[0]}, std::move(attrs)));
            said = n.opType + " as its bias Add and Gelu: both can run in the epilogue of the product before them";
        }
        for (Node& node : nodes) rw.addNode(std::move(node), m.node, {m.node});
        return said;
    }

private:
    int64_t m_opset;  // the default domain's: which form of Unsqueeze, whether Range exists
    std::string m_keepAttention;
    mutable AttentionMaskCache m_masks;
};

class LowerContribPass : public Pass {
public:
    explicit LowerContribPass(std::string keepAttention) : m_keepAttention(std::move(keepAttention)) {}
    std::string name() const override { return "lower-contrib-ops"; }
    std::string description() const override {
        return "ONNX Runtime's FusedMatMul, SkipLayerNormalization, Gelu, BiasGelu, FastGelu, Attention and "
               "SimplifiedLayerNormalization as the standard (and our fused) ops they stand for";
    }
    Status run(PassContext& context) override {
        PatternPass inner(name(), description(), onePattern(std::make_unique<LowerContribPattern>(context.model.opsetVersion(""), m_keepAttention)));
        return inner.run(context);
    }

private:
    std::string m_keepAttention;
};

}  // namespace

std::unique_ptr<Pass> lowerContribOps(std::string keepAttention) {
    return std::make_unique<LowerContribPass>(std::move(keepAttention));
}

}  // namespace fsc::passes
