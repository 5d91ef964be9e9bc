// eliminate-dead-code: nodes none of whose outputs reach a graph output (directly or
// through other nodes, or by name from a subgraph) are removed, last first.
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

class DeadCodePass : public Pass {
public:
    std::string name() const override { return "eliminate-dead-code"; }
    std::string description() const override {
        return "removes nodes whose results nothing reads";
    }
    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        const auto order = rw.graph().order();
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const Node& n = rw.graph().node(*it);
            if (anyOutputRead(rw, *it)) continue;
            ++context.counters.matched;
            rw.removeNode(*it);
            if (rw.commit("dead-node", "no output of this " + n.opType + " is read"))
                ++context.counters.applied;
        }
        rw.finish();
        return Status::ok();
    }
};

}  // namespace

std::unique_ptr<Pass> eliminateDeadCode() { return std::make_unique<DeadCodePass>(); }

}  // namespace fsc::passes
