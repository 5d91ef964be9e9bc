// O3's memory step, schedule-for-memory: reorders nodes so intermediates die sooner (greedy
// list scheduling: of the nodes ready to run, the one that frees the most bytes and
// allocates the fewest goes first), kept only when an estimate of the arena shrinks. The
// estimate sizes symbolic dims (batch) at 1 and leaves out the in-place reuse the kernels
// choose; the plan a run lays out is the executor's (Executor::plannedMemory), which
// compile, run and the walkthrough report.
#include "compiler/runtime/memory_plan.h"
#include "compiler/passes/passes.h"

namespace fsc::passes {
namespace {

Result<MemoryPlan> planFor(const Graph& g, const DimBindings& bindings,
                          const std::vector<NodeId>* schedule = nullptr) {
    auto lifetimes = computeLifetimes(g, bindings, 64, schedule);
    if (!lifetimes) return lifetimes.status();
    return planMemory(std::move(*lifetimes));
}

std::vector<ValueId> reads(const Graph& g, const Node& n) {
    std::vector<ValueId> in;
    for (ValueId v : n.inputs)
        if (v.valid()) in.push_back(v);
    for (const std::string& name : n.capturedNames())
        if (ValueId v = g.findValue(name); v.valid()) in.push_back(v);
    return in;
}

// A topological order that keeps live bytes low.
std::vector<NodeId> memoryAwareOrder(const Graph& g, const std::vector<size_t>& bytes) {
    const auto& order = g.order();
    std::vector<size_t> position(g.nodeArenaSize(), 0);
    for (size_t i = 0; i < order.size(); ++i) position[order[i].index] = i;
    std::vector<int> readersLeft(g.valueCount(), 0), waiting(g.nodeArenaSize(), 0);
    std::vector<std::vector<NodeId>> readersOf(g.valueCount());
    for (NodeId id : order) {
        for (ValueId v : reads(g, g.node(id))) {
            auto& r = readersOf[v.index];
            if (std::find(r.begin(), r.end(), id) != r.end()) continue;
            r.push_back(id);
            readersLeft[v.index]++;
            const Value& value = g.value(v);
            if (value.kind == Value::Kind::NodeOutput && value.producer.valid()) waiting[id.index]++;
        }
    }
    std::vector<NodeId> ready, result;
    for (NodeId id : order)
        if (waiting[id.index] == 0) ready.push_back(id);
    auto score = [&](NodeId id) {
        long long delta = 0;
        for (ValueId out : g.node(id).outputs)
            if (out.valid()) delta += (long long)bytes[out.index];
        std::vector<uint32_t> seen;
        for (ValueId v : reads(g, g.node(id))) {
            if (std::find(seen.begin(), seen.end(), v.index) != seen.end()) continue;
            seen.push_back(v.index);
            if (readersLeft[v.index] == 1) delta -= (long long)bytes[v.index];
        }
        return delta;
    };
    while (!ready.empty()) {
        size_t best = 0;
        long long bestScore = score(ready[0]);
        for (size_t i = 1; i < ready.size(); ++i) {
            const long long s = score(ready[i]);
            if (s < bestScore || (s == bestScore && position[ready[i].index] < position[ready[best].index])) {
                best = i;
                bestScore = s;
            }
        }
        const NodeId id = ready[best];
        ready.erase(ready.begin() + long(best));
        result.push_back(id);
        std::vector<uint32_t> seen;
        for (ValueId v : reads(g, g.node(id)))
            if (std::find(seen.begin(), seen.end(), v.index) == seen.end()) {
                seen.push_back(v.index);
                readersLeft[v.index]--;
            }
        for (ValueId out : g.node(id).outputs) {
            if (!out.valid()) continue;
            for (NodeId reader : readersOf[out.index])
                if (--waiting[reader.index] == 0) ready.push_back(reader);
        }
    }
    return result;
}

class ScheduleForMemory : public Pass {
public:
    std::string name() const override { return "schedule-for-memory"; }
    std::string description() const override { return "orders nodes so intermediates die sooner and the arena shrinks (an estimate at batch 1 decides)"; }

    Status run(PassContext& context) override {
        Rewriter& rw = context.rewriter;
        rw.finish();
        const Graph& g = rw.graph();
        const DimBindings bindings = bindAllSymbols(g, 1);
        auto before = planFor(g, bindings);
        if (!before) {
            context.reject("schedule", g.order().empty() ? NodeId{} : g.order()[0], before.status().message());
            return Status::ok();
        }
        std::vector<size_t> bytes(g.valueCount(), 0);
        std::vector<bool> output(g.valueCount(), false);
        for (ValueId v : g.outputs) output[v.index] = true;
        for (size_t i = 0; i < g.valueCount(); ++i) {
            const Value& v = g.value(ValueId{uint32_t(i)});
            if (v.kind != Value::Kind::NodeOutput || output[i]) continue;  // not in the arena
            if (auto b = valueBytes(v, bindings)) bytes[i] = *b;
        }
        std::vector<NodeId> order = memoryAwareOrder(g, bytes);
        if (order.size() != g.order().size()) return Status(ErrorCode::Internal, "schedule-for-memory lost nodes");
        auto after = planFor(g, bindings, &order);
        context.counters.figures["estimated_arena_bytes_before"] = double(before->arenaBytes);
        context.counters.matched = 1;
        if (!after || after->arenaBytes >= before->arenaBytes) {  // no better: keep the exported order
            context.counters.figures["estimated_arena_bytes_after"] = double(before->arenaBytes);
            context.reject("schedule", g.order().empty() ? NodeId{} : g.order()[0],
                           "the memory-aware order does not shrink the arena");
            return Status::ok();
        }
        const std::string reason = "reordered " + std::to_string(order.size()) + " nodes: arena " +
                                   std::to_string(before->arenaBytes) + " -> " + std::to_string(after->arenaBytes) + " bytes";
        FSC_RETURN_IF_ERROR(rw.setSchedule(std::move(order)));
        context.counters.figures["estimated_arena_bytes_after"] = double(after->arenaBytes);
        context.counters.applied = 1;
        rw.commit("schedule", reason);
        return Status::ok();
    }
};

}  // namespace

std::unique_ptr<Pass> scheduleForMemory() { return std::make_unique<ScheduleForMemory>(); }

}  // namespace fsc::passes
