// conv-bn-fusion: an inference BatchNormalization after a Conv is a per-channel scale and
// shift, folded into the Conv's weights and bias: W' = W * s, b' = (b - mean) * s + beta,
// s = gamma / sqrt(var + epsilon). The same after a Gemm on [rows, features] (a Linear and
// BatchNorm1d: PointNet's and many tabular models' heads), per output column.
#include <algorithm>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

// Why a BatchNormalization is not an inference one (a fixed affine map), or "".
std::string whyNotInference(const Rewriter& rw, const Node& bn) {
    for (size_t i = 1; i < bn.outputs.size(); ++i)
        if (bn.outputs[i].valid() && (!rw.users(bn.outputs[i]).empty() || rw.isGraphOutput(bn.outputs[i])))
            return "BatchNormalization in training mode (statistics outputs are read)";
    if (intAttr(bn, "training_mode", 0) != 0) return "BatchNormalization in training mode";
    return {};
}

struct ConvBatchNorm {
    NodeId conv, batchNorm;
};

class ConvBatchNormPattern : public TypedPattern<ConvBatchNorm> {
public:
    std::string name() const override { return "conv-batchnorm"; }
    std::set<std::string> rootOps() const override { return {"BatchNormalization"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& bn = g.node(anchor);
        if (!isOp(bn, "BatchNormalization") || bn.inputs.size() < 5) return MatchResult::none();
        NodeId convId = rw.producer(bn.inputs[0]);
        if (!convId.valid() || !isOp(g.node(convId), "Conv")) return MatchResult::none();
        const Node& conv = g.node(convId);
        if (std::string why = whyNotInference(rw, bn); !why.empty()) return MatchResult::rejected(why);
        if (!rw.soleUser(conv.outputs[0]).valid()) return MatchResult::rejected("the Conv output has other readers");
        const Tensor* w = conv.inputs.size() > 1 ? rw.constant(conv.inputs[1]) : nullptr;
        if (!w) return MatchResult::rejected("the Conv weights are not constants");
        if (w->dtype() != DType::Float32) return MatchResult::rejected("only float32 weights are folded");
        if (conv.inputs.size() > 2 && conv.inputs[2].valid() && !rw.constant(conv.inputs[2]))
            return MatchResult::rejected("the Conv bias is not a constant");
        for (size_t i = 1; i < 5; ++i)
            if (!constantValues(rw, bn.inputs[i])) return MatchResult::rejected("the batch-norm parameters are not constants");
        const int64_t channels = w->dims().empty() ? 0 : w->dims()[0];
        for (size_t i = 1; i < 5; ++i)
            if (int64_t(constantValues(rw, bn.inputs[i])->size()) != channels)
                return MatchResult::rejected("batch-norm parameters do not have one value per output channel");
        return MatchResult::matched(ConvBatchNorm{convId, anchor});
    }

    std::string rewrite(Rewriter& rw, const ConvBatchNorm& m) const override {
        const Node conv = rw.graph().node(m.conv);
        const Node bn = rw.graph().node(m.batchNorm);
        const Tensor& w = *rw.constant(conv.inputs[1]);
        const ChannelAffine bnMap = *batchNormAffine(rw, bn);  // match() checked the statistics
        std::vector<double> bias(bnMap.scale.size(), 0.0);
        if (conv.inputs.size() > 2 && conv.inputs[2].valid()) bias = *constantValues(rw, conv.inputs[2]);
        const size_t channels = bnMap.scale.size();
        const size_t perChannel = size_t(w.numElements()) / channels;
        std::vector<float> newW(size_t(w.numElements()));
        std::vector<float> newB(channels);
        for (size_t c = 0; c < channels; ++c) {
            const double s = bnMap.scale[c];
            for (size_t i = 0; i < perChannel; ++i)
                newW[c * perChannel + i] = float(double(w.dataAs<float>()[c * perChannel + i]) * s);
            newB[c] = float(bias[c] * s + bnMap.shift[c]);
        }
        ValueId wv = rw.addConstant(makeFloatTensor(w.dims(), newW), rw.graph().value(conv.inputs[1]).name + "/bn_folded");
        ValueId bv = rw.addConstant(makeFloatTensor({int64_t(channels)}, newB), conv.name + "/bias_bn_folded");
        Node folded = conv;
        folded.name = conv.name;
        folded.inputs = {conv.inputs[0], wv, bv};
        folded.outputs = bn.outputs;
        folded.outputs.resize(1);
        rw.removeNode(m.batchNorm);
        rw.removeNode(m.conv);
        rw.addNode(std::move(folded), m.batchNorm, {m.conv, m.batchNorm});
        return "the batch norm's scale and shift folded into the Conv's weights and bias";
    }
};

struct GemmBatchNorm {
    NodeId gemm, batchNorm;
};

// Gemm(A, B, C) = alpha op(A) op(B) + beta C, then BatchNormalization over its columns:
// column j of op(B) scaled by s_j, C' = (beta C_j) s_j + shift_j with beta 1.
class GemmBatchNormPattern : public TypedPattern<GemmBatchNorm> {
public:
    std::string name() const override { return "gemm-batchnorm"; }
    std::set<std::string> rootOps() const override { return {"BatchNormalization"}; }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& bn = g.node(anchor);
        if (!isOp(bn, "BatchNormalization") || bn.inputs.size() < 5) return MatchResult::none();
        NodeId gemmId = rw.producer(bn.inputs[0]);
        if (!gemmId.valid() || !isOp(g.node(gemmId), "Gemm")) return MatchResult::none();
        const Node& gemm = g.node(gemmId);
        if (std::string why = whyNotInference(rw, bn); !why.empty()) return MatchResult::rejected(why);
        if (!rw.soleUser(gemm.outputs[0]).valid()) return MatchResult::rejected("the Gemm output has other readers");
        const Tensor* w = gemm.inputs.size() > 1 ? rw.constant(gemm.inputs[1]) : nullptr;
        if (!w || w->dtype() != DType::Float32 || w->dims().size() != 2)
            return MatchResult::rejected("the Gemm's B is not a constant float32 matrix");
        const int64_t columns = w->dims()[intAttr(gemm, "transB", 0) ? 0 : 1];
        if (gemm.inputs.size() > 2 && gemm.inputs[2].valid()) {
            const auto c = constantValues(rw, gemm.inputs[2]);
            if (!c) return MatchResult::rejected("the Gemm's C is not a constant");
            const auto dims = staticDims(g, gemm.inputs[2]);
            const bool perColumn = dims && (dims->empty() || (dims->size() == 1 && ((*dims)[0] == 1 || (*dims)[0] == columns)) ||
                                            (dims->size() == 2 && (*dims)[0] == 1 && ((*dims)[1] == 1 || (*dims)[1] == columns)));
            if (!perColumn) return MatchResult::rejected("the Gemm's C is not one value per column");
        }
        for (size_t i = 1; i < 5; ++i) {
            const auto values = constantValues(rw, bn.inputs[i]);
            if (!values) return MatchResult::rejected("the batch-norm parameters are not constants");
            if (int64_t(values->size()) != columns)
                return MatchResult::rejected("batch-norm parameters do not have one value per output column");
        }
        return MatchResult::matched(GemmBatchNorm{gemmId, anchor});
    }

    std::string rewrite(Rewriter& rw, const GemmBatchNorm& m) const override {
        const Node gemm = rw.graph().node(m.gemm);
        const Node bn = rw.graph().node(m.batchNorm);
        const Tensor& w = *rw.constant(gemm.inputs[1]);
        const bool transB = intAttr(gemm, "transB", 0) != 0;
        const ChannelAffine bnMap = *batchNormAffine(rw, bn);
        const size_t columns = bnMap.scale.size(), depth = size_t(w.numElements()) / columns;
        const double beta = [&] {
            for (const Attribute& a : gemm.attributes)
                if (a.name == "beta") return double(a.f);
            return 1.0;
        }();
        std::vector<double> c(columns, 0.0);
        if (gemm.inputs.size() > 2 && gemm.inputs[2].valid()) {
            const auto given = *constantValues(rw, gemm.inputs[2]);
            for (size_t j = 0; j < columns; ++j) c[j] = given.size() == 1 ? given[0] : given[j];
        }
        std::vector<float> newW(size_t(w.numElements()));
        const float* pw = w.dataAs<float>();
        for (size_t j = 0; j < columns; ++j)
            for (size_t k = 0; k < depth; ++k) {
                const size_t at = transB ? j * depth + k : k * columns + j;
                newW[at] = float(double(pw[at]) * bnMap.scale[j]);
            }
        std::vector<float> newC(columns);
        for (size_t j = 0; j < columns; ++j) newC[j] = float(beta * c[j] * bnMap.scale[j] + bnMap.shift[j]);
        ValueId wv = rw.addConstant(makeFloatTensor(w.dims(), newW), rw.graph().value(gemm.inputs[1]).name + "/bn_folded");
        ValueId cv = rw.addConstant(makeFloatTensor({int64_t(columns)}, newC), gemm.name + "/bias_bn_folded");
        Node folded = gemm;
        folded.inputs = {gemm.inputs[0], wv, cv};
        folded.outputs = bn.outputs;
        folded.outputs.resize(1);
        folded.attributes.erase(std::remove_if(folded.attributes.begin(), folded.attributes.end(),
                                               [](const Attribute& a) { return a.name == "beta"; }),
                                folded.attributes.end());
        rw.removeNode(m.batchNorm);
        rw.removeNode(m.gemm);
        rw.addNode(std::move(folded), m.batchNorm, {m.gemm, m.batchNorm});
        return "the batch norm's scale and shift folded into the Gemm's B and C";
    }
};

}  // namespace

std::unique_ptr<Pass> foldConvBatchNorm() {
    std::vector<std::unique_ptr<RewritePattern>> patterns;
    patterns.push_back(std::make_unique<ConvBatchNormPattern>());
    patterns.push_back(std::make_unique<GemmBatchNormPattern>());
    return std::make_unique<PatternPass>("conv-bn-fusion", "folds inference BatchNormalization into the preceding Conv or Gemm",
                                         std::move(patterns));
}

}  // namespace fsc::passes
