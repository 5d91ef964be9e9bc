#include "compiler/verifier.h"

#include <unordered_set>
#include <vector>

namespace fsc {
namespace {

std::string label(const Node& n) {
    return "node '" + n.name + "' (" + n.opType + ")";
}

Status verify(const Graph& g, const std::vector<const Graph*>& enclosing) {
    const size_t valueCount = g.valueCount();
    std::vector<bool> available(valueCount, false);
    std::vector<bool> produced(valueCount, false);
    for (size_t i = 0; i < valueCount; ++i) {
        const Value& v = g.value(ValueId(static_cast<uint32_t>(i)));
        if (v.kind == Value::Kind::GraphInput || v.kind == Value::Kind::Initializer)
            available[i] = true;
        if (v.kind == Value::Kind::OuterScope) {
            bool found = false;
            for (const Graph* outer : enclosing) found |= outer->findValue(v.name).valid();
            if (!found)
                return invalidModel("graph '" + g.name + "': outer value '" + v.name +
                                    "' is defined by no enclosing graph");
            available[i] = true;
        }
    }
    std::unordered_set<uint32_t> seenNodes;
    for (NodeId nid : g.order()) {
        if (!seenNodes.insert(nid.index).second)
            return invalidModel("graph '" + g.name + "': a node appears twice in the order");
        const Node& n = g.node(nid);
        for (ValueId in : n.inputs) {
            if (!in.valid()) continue;
            if (in.index >= valueCount)
                return invalidModel(label(n) + ": input id out of range");
            if (!available[in.index])
                return invalidModel(label(n) + ": reads '" + g.value(in).name +
                                    "' before it is produced");
        }
        std::vector<const Graph*> inner = enclosing;
        inner.push_back(&g);
        for (const auto& sub : n.subgraphs()) FSC_RETURN_IF_ERROR(verify(*sub, inner));
        for (ValueId out : n.outputs) {
            if (!out.valid()) continue;
            if (out.index >= valueCount)
                return invalidModel(label(n) + ": output id out of range");
            if (produced[out.index] || available[out.index])
                return invalidModel(label(n) + ": output '" + g.value(out).name +
                                    "' is produced twice");
            if (g.value(out).producer != nid)
                return invalidModel(label(n) + ": output '" + g.value(out).name +
                                    "' names another producer");
            produced[out.index] = true;
            available[out.index] = true;
        }
    }
    for (ValueId out : g.outputs)
        if (!out.valid() || out.index >= valueCount || !available[out.index])
            return invalidModel("graph '" + g.name + "': an output is never produced");
    return Status::ok();
}

}  // namespace

Status verifyGraph(const Graph& graph) {
    return verify(graph, {});
}

Status verifyModel(const Model& model) {
    if (!model.graph) return invalidModel("model has no graph");
    FSC_RETURN_IF_ERROR(verifyGraph(*model.graph));
    for (const Function& f : model.functions)
        FSC_RETURN_IF_ERROR(verifyGraph(*f.body).withContext("function '" + f.name + "'"));
    return Status::ok();
}

}  // namespace fsc
