// fold-constants: a node whose inputs are all constants is run once, now, on the CPU
// kernels, and its outputs become constants (Constant nodes become initializers too).
#include "compiler/passes/node_evaluator.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

// Folding must not turn a small graph into a huge file (ConstantOfShape, Expand, Tile).
constexpr size_t kMaxGrowthBytes = 16 << 20;

// The QDQ form's weight: a DequantizeLinear of constants read only as the weight (input 1)
// of Conv/MatMul/Gemm whose input is itself a DequantizeLinear's output. qdq-folding makes
// such an op integer from the int8 weight and its scale, which folding to float would lose.
bool isQdqWeight(const Rewriter& rw, const Node& n) {
    if (!isOp(n, "DequantizeLinear") || n.outputs.empty() || !n.outputs[0].valid()) return false;
    const ValueId out = n.outputs[0];
    if (rw.isGraphOutput(out) || rw.isCaptured(out) || rw.users(out).empty()) return false;
    for (NodeId user : rw.users(out)) {
        const Node& op = rw.graph().node(user);
        if (!(isOp(op, "Conv") || isOp(op, "MatMul") || isOp(op, "Gemm")) || op.inputs.size() < 2 || op.inputs[1] != out ||
            op.inputs[0] == out)
            return false;
        const NodeId x = rw.producer(op.inputs[0]);
        if (!x.valid() || !isOp(rw.graph().node(x), "DequantizeLinear")) return false;
    }
    return true;
}

class FoldConstantsPass : public Pass {
public:
    explicit FoldConstantsPass(bool keepQdqWeights) : m_keepQdqWeights(keepQdqWeights) {}
    std::string name() const override { return "fold-constants"; }
    std::string description() const override {
        return "computes nodes whose inputs are all constants once, with the CPU kernels";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        for (NodeId id : std::vector<NodeId>(rw.graph().order())) {
            if (context.cancelled()) return {ErrorCode::Cancelled, "cancelled"};
            const Node& n = rw.graph().node(id);
            std::vector<const Tensor*> inputs;
            bool allConstant = true;
            size_t inputBytes = 0;
            for (ValueId in : n.inputs) {
                const Tensor* t = in.valid() ? rw.constant(in) : nullptr;
                if (in.valid() && !t) allConstant = false;
                if (t) inputBytes += t->byteSize();
                inputs.push_back(t);
            }
            if (!allConstant) continue;
            if (m_keepQdqWeights && isQdqWeight(rw, n)) {
                context.reject("constant-node", id, "a QDQ weight, kept for qdq-folding");
                continue;
            }
            if (std::string why = blocker(rw.graph(), n); !why.empty()) {
                context.reject("constant-node", id, why);
                continue;
            }
            ++context.counters.matched;
            const Node copy = n;
            auto outputs = evaluateNode(copy, inputs, context.model.opsetImports);
            if (!outputs) {
                context.reject("constant-node", id, "the CPU kernel failed: " + outputs.status().message());
                continue;
            }
            size_t outputBytes = 0;
            for (const Tensor& t : *outputs) outputBytes += t.byteSize();
            if (outputBytes > inputBytes + kMaxGrowthBytes) {
                context.reject("constant-node", id, "its result would add over 16 MiB of constants");
                continue;
            }
            bool replaceable = true;
            for (ValueId out : copy.outputs)
                replaceable &= !out.valid() || !(rw.isGraphOutput(out) || rw.isCaptured(out));
            if (!replaceable) {
                context.reject("constant-node", id, "its output is a graph output that must keep its name");
                continue;
            }
            for (size_t i = 0; i < copy.outputs.size(); ++i) {
                if (!copy.outputs[i].valid()) continue;
                ValueId c = rw.addConstant(std::move((*outputs)[i]), rw.graph().value(copy.outputs[i]).name + "/folded");
                rw.replaceAllUses(copy.outputs[i], c);
            }
            rw.removeNode(id);
            if (rw.commit("constant-node", copy.opType + " of constants computed at compile time"))
                ++context.counters.applied;
        }
        rw.finish();
        return Status::ok();
    }

private:
    bool m_keepQdqWeights;

    static std::string blocker(const Graph& g, const Node& n) {
        if (!n.domain.empty()) return "ops of domain '" + n.domain + "' are not folded";
        for (ValueId out : n.outputs)
            if (out.valid() && g.value(out).type.kind == ValueType::Kind::Sequence)
                return "its output is a sequence, which no constant can hold";
        if (isRandomOp(n)) return "the op is random";
        if (!n.subgraphs().empty()) return "the op has a subgraph";
        return {};
    }
};

}  // namespace

std::unique_ptr<Pass> foldConstants(bool keepQdqWeights) { return std::make_unique<FoldConstantsPass>(keepQdqWeights); }

}  // namespace fsc::passes
