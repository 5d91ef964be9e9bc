#include "compiler/graph_snapshot.h"

namespace fsc {

std::shared_ptr<const GraphSnapshot> GraphSnapshot::capture(const Graph& graph,
                                                            const GraphSnapshot* previous,
                                                            const std::vector<uint32_t>& changedNodes,
                                                            const std::vector<uint32_t>& changedValues) {
    auto s = std::make_shared<GraphSnapshot>();
    s->m_nodes = SharedTable<Node>::derive(previous ? &previous->m_nodes : nullptr,
                                           graph.nodeArenaSize(),
                                           changedNodes,
                                           [&](size_t i) { return graph.node(NodeId(static_cast<uint32_t>(i))); });
    s->m_values = SharedTable<Value>::derive(previous ? &previous->m_values : nullptr,
                                             graph.valueCount(), changedValues,
                                             [&](size_t i) { return graph.value(ValueId(static_cast<uint32_t>(i))); });
    s->m_order = graph.order();
    s->m_inputs = graph.inputs;
    s->m_outputs = graph.outputs;
    s->m_initializers = graph.initializers;
    s->m_name = graph.name;
    s->m_docString = graph.docString;
    return s;
}

std::shared_ptr<Graph> GraphSnapshot::materialize() const {
    std::vector<Value> values;
    values.reserve(m_values.size());
    for (size_t i = 0; i < m_values.size(); ++i) values.push_back(m_values[i]);
    std::vector<Node> nodes;
    nodes.reserve(m_nodes.size());
    for (size_t i = 0; i < m_nodes.size(); ++i) nodes.push_back(m_nodes[i]);
    auto g = std::make_shared<Graph>(Graph::fromArenas(std::move(values), std::move(nodes), m_order));
    g->inputs = m_inputs;
    g->outputs = m_outputs;
    g->initializers = m_initializers;
    g->name = m_name;
    g->docString = m_docString;
    return g;
}

}  // namespace fsc
