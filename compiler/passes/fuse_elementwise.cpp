// elementwise-fusion: a connected group of element-wise ops (Add, Mul, Sigmoid, Exp, ...)
// whose inner values nobody else reads becomes one ai.fusescope.FusedElementwise. The node
// carries its program (`ops`, `args`) and the C++ loop body generated from it (`source`),
// so one pass over memory replaces one per op. Every op of a group produces the group's
// output shape; only the group's inputs broadcast. A float32 group also takes in a Cast from
// int32 in front of it that only the group reads (the int32 sums of an INT8 graph's
// ConvInteger, then scaled): the kernel converts the int32 input as it loads it, and the
// float copy is never written.
#include <set>

#include "compiler/runtime/elementwise_program.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "core/graph_builder.h"

namespace fsc::passes {
namespace {

constexpr size_t kMaxGroup = 64;  // keeps generated kernels readable and registers in L1

bool fusable(const Node& n) {
    return n.domain.empty() && n.outputs.size() == 1 && elementwiseOp(n.opType, n.inputs.size()).has_value();
}

// Nodes of the group in an order where each comes after the group nodes it reads.
std::vector<NodeId> orderGroup(const Rewriter& rw, const std::set<uint32_t>& group) {
    std::vector<NodeId> order;
    std::set<uint32_t> placed;
    while (order.size() < group.size()) {
        for (uint32_t id : group) {
            if (placed.count(id)) continue;
            bool ready = true;
            for (ValueId in : rw.graph().node(NodeId{id}).inputs) {
                NodeId p = rw.producer(in);
                if (p.valid() && group.count(p.index) && !placed.count(p.index)) ready = false;
            }
            if (ready) {
                order.push_back(NodeId{id});
                placed.insert(id);
            }
        }
    }
    return order;
}

// A group of element-wise ops, each after the group nodes it reads, the sink last, and the
// values it reads from outside (the fused node's inputs, in first-read order).
struct ElementwiseGroup {
    std::vector<NodeId> nodes;
    std::vector<ValueId> inputs;
    std::vector<NodeId> casts;  // Casts from int32 taken in: their inputs are among `inputs`
};

// The Cast to float32 of an int32 value that produces `v`, when only `group` reads `v`.
NodeId castFromInt32(const Rewriter& rw, ValueId v, const std::set<uint32_t>& group) {
    const NodeId p = rw.producer(v);
    if (!p.valid() || !rw.isLive(p)) return NodeId{};
    const Node& n = rw.graph().node(p);
    if (!isOp(n, "Cast") || n.inputs.size() != 1 || !n.inputs[0].valid() || intAttr(n, "to", 0) != 1) return NodeId{};
    if (dtypeOf(rw.graph(), n.inputs[0]) != DType::Int32 || rw.isGraphOutput(v) || rw.isCaptured(v)) return NodeId{};
    for (NodeId u : rw.users(v))
        if (!group.count(u.index)) return NodeId{};
    return p;
}

class ElementwisePattern : public TypedPattern<ElementwiseGroup> {
public:
    std::string name() const override { return "elementwise-group"; }
    std::set<std::string> rootOps() const override { return elementwiseOpTypes(); }

    MatchResult match(const Rewriter& rw, NodeId anchor) const override {
        const Graph& g = rw.graph();
        const Node& last = g.node(anchor);
        if (!fusable(last)) return MatchResult::none();
        const ValueId out = last.outputs[0];
        const DType t = dtypeOf(g, out);
        if (!isFusableFloat(t) && t != DType::Float64) return MatchResult::none();
        auto joins = [&](NodeId p) {
            const Node& n = g.node(p);
            return rw.isLive(p) && fusable(n) && dtypeOf(g, n.outputs[0]) == t && sameShape(g, n.outputs[0], out);
        };
        // Groups grow backwards from their sink; a node whose readers could all take it in
        // is not one.
        bool sink = rw.isGraphOutput(out) || rw.isCaptured(out) || rw.users(out).empty();
        for (NodeId u : rw.users(out)) sink = sink || !joins(u);
        if (!sink) return MatchResult::none();

        std::set<uint32_t> group = {anchor.index};
        bool sharedProducer = false;
        for (bool grew = true; grew && group.size() < kMaxGroup;) {
            grew = false;
            for (uint32_t id : std::set<uint32_t>(group)) {
                for (ValueId in : g.node(NodeId{id}).inputs) {
                    NodeId p = rw.producer(in);
                    if (!p.valid() || group.count(p.index) || !joins(p) || group.size() >= kMaxGroup) continue;
                    const ValueId v = g.node(p).outputs[0];
                    bool inside = !rw.isGraphOutput(v) && !rw.isCaptured(v);
                    for (NodeId u : rw.users(v)) inside = inside && group.count(u.index);
                    if (!inside) {
                        sharedProducer = true;
                        continue;
                    }
                    group.insert(p.index);
                    grew = true;
                }
            }
        }
        if (group.size() < 2)
            return sharedProducer ? MatchResult::rejected("the element-wise producer's output has other readers")
                                  : MatchResult::none();
        ElementwiseGroup m;
        m.nodes = orderGroup(rw, group);
        for (NodeId id : m.nodes)
            for (ValueId in : g.node(id).inputs) {
                NodeId p = rw.producer(in);
                if (p.valid() && group.count(p.index)) continue;
                if (const NodeId cast = t == DType::Float32 ? castFromInt32(rw, in, group) : NodeId{}; cast.valid()) {
                    if (std::find(m.casts.begin(), m.casts.end(), cast) == m.casts.end()) m.casts.push_back(cast);
                    in = g.node(cast).inputs[0];
                }
                if (std::find(m.inputs.begin(), m.inputs.end(), in) == m.inputs.end()) m.inputs.push_back(in);
            }
        return MatchResult::matched(std::move(m));
    }

    std::string rewrite(Rewriter& rw, const ElementwiseGroup& m) const override {
        const Graph& g = rw.graph();
        ElementwiseProgram program;
        program.inputs = int(m.inputs.size());
        std::map<uint32_t, int> registerOf;  // value index -> register
        for (size_t k = 0; k < m.inputs.size(); ++k) registerOf[m.inputs[k].index] = int(k);
        for (NodeId cast : m.casts)  // the group reads the Cast's float output as its int32 input
            registerOf[g.node(cast).outputs[0].index] = registerOf.at(g.node(cast).inputs[0].index);
        std::string ops;
        for (NodeId id : m.nodes) {
            const Node& n = g.node(id);
            ElementwiseProgram::Instruction in{*elementwiseOp(n.opType, n.inputs.size())};
            in.a = registerOf.at(n.inputs[0].index);
            if (n.inputs.size() > 1) in.b = registerOf.at(n.inputs[1].index);
            registerOf[n.outputs[0].index] = program.inputs + int(program.code.size());
            program.code.push_back(in);
            ops += (ops.empty() ? "" : ", ") + n.opType;
        }
        const Node anchor = g.node(m.nodes.back());
        Node fused = makeNode("FusedElementwise", kFusescopeDomain, anchor, m.inputs, {anchor.outputs[0]},
                              {fsc::stringsAttr("ops", program.opNames()), fsc::intsAttr("args", program.args()),
                               fsc::stringAttr("source", program.cppLoopBody())});
        std::vector<NodeId> merged = m.nodes;
        merged.insert(merged.begin(), m.casts.begin(), m.casts.end());
        for (NodeId n : merged) rw.removeNode(n);
        rw.addNode(std::move(fused), m.nodes.back(), merged);
        std::string said = std::to_string(m.nodes.size()) + " element-wise ops in one pass over memory: " + ops;
        if (!m.casts.empty())
            said += "; " + std::to_string(m.casts.size()) + " int32 input(s) converted as they are read, not Cast first";
        return said;
    }
};

}  // namespace

std::unique_ptr<Pass> fuseElementwise() {
    return std::make_unique<PatternPass>("elementwise-fusion",
                                         "merges groups of element-wise ops into one generated kernel",
                                         onePattern(std::make_unique<ElementwisePattern>()));
}

}  // namespace fsc::passes
