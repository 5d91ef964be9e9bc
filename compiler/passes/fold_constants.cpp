// fold-constants: a node whose inputs are all constants is run once, now, on the CPU
// kernels, and its outputs become constants (Constant nodes become initializers too).
#include "compiler/passes/node_evaluator.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

// Folding must not turn a small graph into a huge file (ConstantOfShape, Expand, Tile).
constexpr size_t kMaxGrowthBytes = 16 << 20;

class FoldConstantsPass : public Pass {
public:
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

std::unique_ptr<Pass> foldConstants() { return std::make_unique<FoldConstantsPass>(); }

}  // namespace fsc::passes
