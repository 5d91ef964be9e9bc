// pipeline-parallel: cuts the schedule into N stages of about equal estimated time (the
// cost model's roofline on a nominal device) and moves every activation that crosses a cut
// through an ai.fusescope Send (on the stage that has it) and Recv (on the next stage), so
// what each stage boundary carries is explicit, with its bytes. Nodes move to scope
// "stageS/...". A value a later stage needs passes through every stage between.
#include <map>
#include <sstream>

#include "compiler/runtime/fused_domain.h"
#include "compiler/parallel/simulated_timeline.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

class PipelineParallelPass : public Pass {
public:
    explicit PipelineParallelPass(int stages) : m_stages(stages) {}
    std::string name() const override { return "pipeline-parallel"; }
    std::string description() const override {
        return "cuts the schedule into " + std::to_string(m_stages) +
               " stages of equal estimated time, with Send/Recv of every activation crossing a cut";
    }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        const Graph& g = rw.graph();
        const std::vector<NodeId> order = g.order();
        if (m_stages < 2) {
            rw.finish();
            return Status::ok();
        }
        // More stages than nodes would leave stages empty and report their bubbles as if real:
        // this graph does not support that many (Unsupported, as a pass refuses a model).
        if (order.size() < size_t(m_stages))
            return Status(ErrorCode::Unsupported,
                          std::to_string(m_stages) + " pipeline stages asked for, but the graph has " +
                              std::to_string(order.size()) + (order.size() == 1 ? " node" : " nodes") +
                              " to place: at most " + std::to_string(order.size()) +
                              (order.size() == 1 ? " stage" : " stages"));
        // Stage of every node: cut where the running time passes k/N of the total.
        std::vector<double> seconds;
        double total = 0;
        for (NodeId id : order) total += seconds.emplace_back(simulatedNodeSeconds(g, g.node(id)));
        std::map<uint32_t, int> stageOf;
        std::vector<double> stageSeconds(static_cast<size_t>(m_stages), 0.0);
        double running = 0;
        int stage = 0;
        for (size_t i = 0; i < order.size(); ++i) {
            const size_t nodesLeft = order.size() - i;
            if (stage + 1 < m_stages && (running >= total * (stage + 1) / m_stages || nodesLeft <= size_t(m_stages - stage - 1)))
                ++stage;
            stageOf[order[i].index] = stage;
            stageSeconds[size_t(stage)] += seconds[i];
            running += seconds[i];
        }
        // The first node of each stage: where its Recvs go.
        std::vector<NodeId> firstOfStage(static_cast<size_t>(m_stages));
        for (NodeId id : order)
            if (!firstOfStage[size_t(stageOf[id.index])].valid()) firstOfStage[size_t(stageOf[id.index])] = id;

        // Every non-constant value read on a later stage than the one that has it.
        std::map<uint32_t, std::map<int, ValueId>> onStage;  // value -> stage -> the value there
        std::vector<double> boundaryBytes(static_cast<size_t>(m_stages), 0.0);
        auto produced = [&](ValueId v) { return rw.producer(v).valid() ? stageOf[rw.producer(v).index] : 0; };
        for (NodeId id : order) {
            const std::vector<ValueId> inputs = g.node(id).inputs;  // copied: adding nodes moves them
            for (ValueId in : inputs) {
                if (!in.valid() || rw.constant(in) || onStage.count(in.index)) continue;
                int last = produced(in);
                for (NodeId user : rw.users(in)) last = std::max(last, stageOf[user.index]);
                if (last == produced(in)) continue;
                auto& chain = onStage[in.index];
                chain[produced(in)] = in;
                const double bytes = valueBytes(rw.graph(), in);
                for (int s = produced(in); s < last; ++s) {
                    const std::string base = rw.graph().value(in).name;
                    const ValueType type = rw.graph().value(in).type;
                    const ValueId sent = rw.addIntermediate(type, base + "/sent_to_stage" + std::to_string(s + 1));
                    const ValueId received = rw.addIntermediate(type, base + "/on_stage" + std::to_string(s + 1));
                    const std::vector<Attribute> attrs{fsc::intAttr("from", s), fsc::intAttr("to", s + 1),
                                                       fsc::intAttr("bytes", int64_t(bytes))};
                    const NodeId anchor = firstOfStage[size_t(s + 1)];
                    Node send = makeNode("Send", kFusescopeDomain, rw.graph().node(anchor), {chain[s]}, {sent}, attrs);
                    send.name = base + "/Send_" + std::to_string(s) + "_to_" + std::to_string(s + 1);
                    send.scope = "stage" + std::to_string(s);
                    const NodeId producer = rw.producer(in);
                    const std::vector<NodeId> madeFrom = producer.valid() ? std::vector<NodeId>{producer} : std::vector<NodeId>{};
                    rw.addNode(std::move(send), anchor, madeFrom);
                    Node recv = makeNode("Recv", kFusescopeDomain, rw.graph().node(anchor), {sent}, {received}, attrs);
                    recv.name = base + "/Recv_" + std::to_string(s) + "_to_" + std::to_string(s + 1);
                    recv.scope = "stage" + std::to_string(s + 1);
                    rw.addNode(std::move(recv), anchor, madeFrom);
                    chain[s + 1] = received;
                    boundaryBytes[size_t(s)] += bytes;
                }
            }
        }
        // Every node moves to its stage's scope, reading what reached its stage.
        for (NodeId id : order) {
            Node n = rw.graph().node(id);
            const int s = stageOf[id.index];
            for (ValueId& in : n.inputs)
                if (auto it = onStage.find(in.index); in.valid() && it != onStage.end() && it->second.count(s)) in = it->second.at(s);
            n.scope = "stage" + std::to_string(s) + (n.scope.empty() ? "" : "/" + n.scope);
            rw.removeNode(id);
            rw.addNode(std::move(n), id, {id});
        }
        std::ostringstream why;
        why << m_stages << " stages of estimated time";
        for (int s = 0; s < m_stages; ++s) why << (s ? ", " : " ") << stageSeconds[size_t(s)] * 1e6 << " us";
        why << "; activation bytes across the cuts:";
        for (int s = 0; s + 1 < m_stages; ++s) why << (s ? ", " : " ") << int64_t(boundaryBytes[size_t(s)]);
        ++context.counters.matched;
        if (rw.commit("stages", why.str())) ++context.counters.applied;
        for (int s = 0; s + 1 < m_stages; ++s) context.counters.figures["bytes after stage " + std::to_string(s)] = boundaryBytes[size_t(s)];
        rw.finish();
        return Status::ok();
    }

private:
    int m_stages;
};

}  // namespace

std::unique_ptr<Pass> pipelineParallel(int stages) {
    return std::make_unique<PipelineParallelPass>(stages);
}

}  // namespace fsc::passes
