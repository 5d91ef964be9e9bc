// conv-bn-fusion: an inference BatchNormalization after a Conv is a per-channel scale and
// shift, folded into the Conv's weights and bias: W' = W * s, b' = (b - mean) * s + beta,
// s = gamma / sqrt(var + epsilon).
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

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
        for (size_t i = 1; i < bn.outputs.size(); ++i)
            if (bn.outputs[i].valid() && (!rw.users(bn.outputs[i]).empty() || rw.isGraphOutput(bn.outputs[i])))
                return MatchResult::rejected("BatchNormalization in training mode (statistics outputs are read)");
        if (intAttr(bn, "training_mode", 0) != 0) return MatchResult::rejected("BatchNormalization in training mode");
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

}  // namespace

std::unique_ptr<Pass> foldConvBatchNorm() {
    return std::make_unique<PatternPass>("conv-bn-fusion", "folds inference BatchNormalization into the preceding Conv",
                                         onePattern(std::make_unique<ConvBatchNormPattern>()));
}

}  // namespace fsc::passes
