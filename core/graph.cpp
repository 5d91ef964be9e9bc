#include "core/graph.h"

#include <algorithm>

namespace fsc {

const Attribute* Node::attribute(const std::string& attrName) const {
    for (const Attribute& a : attributes)
        if (a.name == attrName) return &a;
    return nullptr;
}

std::vector<std::shared_ptr<Graph>> Node::subgraphs() const {
    std::vector<std::shared_ptr<Graph>> result;
    for (const Attribute& a : attributes) {
        if (a.g) result.push_back(a.g);
        for (const auto& g : a.graphs)
            if (g) result.push_back(g);
    }
    return result;
}

std::vector<std::string> Node::capturedNames() const {
    // Each subgraph lists what it (and its own subgraphs) read from outside as OuterScope
    // values, so one level is enough.
    std::vector<std::string> names;
    for (const auto& sub : subgraphs()) {
        for (size_t i = 0; i < sub->valueCount(); ++i) {
            const Value& v = sub->value(ValueId(static_cast<uint32_t>(i)));
            if (v.kind == Value::Kind::OuterScope &&
                std::find(names.begin(), names.end(), v.name) == names.end())
                names.push_back(v.name);
        }
    }
    return names;
}

std::string scopeFromName(const std::string& nodeName) {
    std::string scope;
    size_t start = 0;
    std::vector<std::string_view> segments;
    std::string_view name(nodeName);
    while (start <= name.size()) {
        size_t slash = name.find('/', start);
        if (slash == std::string_view::npos) slash = name.size();
        if (slash > start) segments.push_back(name.substr(start, slash - start));
        start = slash + 1;
    }
    for (size_t i = 0; i + 1 < segments.size(); ++i) {
        if (!scope.empty()) scope += '/';
        scope += segments[i];
    }
    return scope;
}

ValueId Graph::addValue(Value value) {
    ValueId id(static_cast<uint32_t>(m_values.size()));
    if (!value.name.empty()) m_byName.emplace(value.name, id);
    m_values.push_back(std::move(value));
    return id;
}

NodeId Graph::addNode(Node node) {
    NodeId id(static_cast<uint32_t>(m_nodes.size()));
    for (ValueId out : node.outputs)
        if (out.valid()) m_values[out.index].producer = id;
    m_nodes.push_back(std::move(node));
    m_order.push_back(id);
    return id;
}

ValueId Graph::findValue(const std::string& valueName) const {
    auto it = m_byName.find(valueName);
    return it == m_byName.end() ? ValueId() : it->second;
}

void Graph::renameValue(ValueId id, const std::string& newName) {
    Value& v = m_values[id.index];
    auto it = m_byName.find(v.name);
    if (it != m_byName.end() && it->second == id) m_byName.erase(it);
    v.name = newName;
    if (!newName.empty()) m_byName[newName] = id;
}

Graph Graph::fromArenas(std::vector<Value> values, std::vector<Node> nodes,
                        std::vector<NodeId> order) {
    Graph g;
    g.m_values = std::move(values);
    g.m_nodes = std::move(nodes);
    g.m_order = std::move(order);
    for (size_t i = 0; i < g.m_values.size(); ++i)
        if (!g.m_values[i].name.empty())
            g.m_byName.emplace(g.m_values[i].name, ValueId(static_cast<uint32_t>(i)));
    return g;
}

std::vector<NodeId> Graph::consumers(ValueId id) const {
    std::vector<NodeId> result;
    for (NodeId n : m_order) {
        for (ValueId in : m_nodes[n.index].inputs) {
            if (in == id) {
                result.push_back(n);
                break;
            }
        }
    }
    return result;
}

int64_t Model::opsetVersion(const std::string& opDomain) const {
    const bool isDefault = opDomain.empty() || opDomain == "ai.onnx";
    for (const auto& [d, v] : opsetImports) {
        if (d == opDomain || (isDefault && (d.empty() || d == "ai.onnx"))) return v;
    }
    return -1;
}

}  // namespace fsc
