#include "views/scope_tree.h"

#include <algorithm>
#include <map>
#include <set>

namespace fsc {

ScopeTree ScopeTree::build(const Graph& graph) {
    ScopeTree tree;
    tree.m_groups.push_back({});
    std::map<std::string, int> byPath{{"", 0}};
    auto groupFor = [&](const std::string& path) {
        // Creates the path's groups from the outside in.
        int current = 0;
        size_t start = 0;
        while (start < path.size()) {
            size_t slash = path.find('/', start);
            if (slash == std::string::npos) slash = path.size();
            const std::string prefix = path.substr(0, slash);
            auto it = byPath.find(prefix);
            if (it == byPath.end()) {
                ScopeGroup g;
                g.name = path.substr(start, slash - start);
                g.path = prefix;
                g.parent = current;
                g.depth = tree.m_groups[size_t(current)].depth + 1;
                const int id = int(tree.m_groups.size());
                tree.m_groups.push_back(std::move(g));
                tree.m_groups[size_t(current)].children.push_back(id);
                it = byPath.emplace(prefix, id).first;
            }
            current = it->second;
            start = slash + 1;
        }
        return current;
    };
    tree.m_groupOfNode.assign(graph.nodeArenaSize(), 0);
    for (NodeId id : graph.order()) {
        const int g = groupFor(graph.node(id).scope);
        tree.m_groups[size_t(g)].nodes.push_back(id);
        tree.m_groupOfNode[id.index] = g;
        for (int p = g; p >= 0; p = tree.m_groups[size_t(p)].parent) tree.m_groups[size_t(p)].totalNodes++;
    }
    return tree;
}

int ScopeTree::groupOf(NodeId node) const {
    return node.index < m_groupOfNode.size() ? m_groupOfNode[node.index] : 0;
}

int ScopeTree::find(const std::string& path) const {
    for (size_t i = 0; i < m_groups.size(); ++i)
        if (m_groups[i].path == path) return int(i);
    return -1;
}

std::vector<bool> expandedToDepth(const ScopeTree& tree, int depth) {
    std::vector<bool> expanded(tree.groups().size());
    for (size_t i = 0; i < expanded.size(); ++i) expanded[i] = tree.groups()[i].depth <= depth;
    return expanded;
}

std::vector<double> groupTotals(const ScopeTree& tree, const std::vector<double>& byNodeIndex) {
    const auto& groups = tree.groups();
    std::vector<double> total(groups.size(), 0.0);
    for (size_t g = 0; g < groups.size(); ++g)
        for (NodeId id : groups[g].nodes)
            if (id.index < byNodeIndex.size()) total[g] += byNodeIndex[id.index];
    // Children come after their parents in the tree: fold them up from the end.
    for (size_t g = groups.size(); g-- > 1;)
        if (groups[g].parent >= 0) total[size_t(groups[g].parent)] += total[g];
    return total;
}

std::vector<double> groupMaxima(const ScopeTree& tree, const std::vector<double>& byNodeIndex) {
    const auto& groups = tree.groups();
    std::vector<double> largest(groups.size(), 0.0);
    for (size_t g = 0; g < groups.size(); ++g)
        for (NodeId id : groups[g].nodes)
            if (id.index < byNodeIndex.size()) largest[g] = std::max(largest[g], byNodeIndex[id.index]);
    for (size_t g = groups.size(); g-- > 1;)
        if (groups[g].parent >= 0) largest[size_t(groups[g].parent)] = std::max(largest[size_t(groups[g].parent)], largest[g]);
    return largest;
}

bool isConstantLike(const Graph& graph, const Node& n) {
    if (!n.domain.empty()) return false;
    if (n.opType == "Constant") return true;
    return n.opType == "Identity" && n.inputs.size() == 1 && n.inputs[0].valid() &&
           graph.value(n.inputs[0]).kind == Value::Kind::Initializer;
}

VisibleGraph visibleGraph(const Graph& graph, const ScopeTree& tree, const std::vector<bool>& expanded,
                          bool showConstants) {
    VisibleGraph v;
    v.itemOfNode.assign(graph.nodeArenaSize(), -1);
    std::vector<int> itemOfGroup(tree.groups().size(), -1);
    for (NodeId id : graph.order()) {
        const Node& n = graph.node(id);
        if (!showConstants && isConstantLike(graph, n)) continue;
        // The outermost collapsed group on the way from the root, if any.
        std::vector<int> chain;
        for (int g = tree.groupOf(id); g > 0; g = tree.groups()[size_t(g)].parent) chain.push_back(g);
        int collapsed = -1;
        for (auto it = chain.rbegin(); it != chain.rend() && collapsed < 0; ++it)
            if (!expanded[size_t(*it)]) collapsed = *it;
        if (collapsed < 0) {
            v.itemOfNode[id.index] = int(v.items.size());
            v.items.push_back({id, -1});
        } else {
            if (itemOfGroup[size_t(collapsed)] < 0) {
                itemOfGroup[size_t(collapsed)] = int(v.items.size());
                v.items.push_back({NodeId{}, collapsed});
            }
            v.itemOfNode[id.index] = itemOfGroup[size_t(collapsed)];
        }
    }
    std::set<std::pair<int, int>> seen;
    for (NodeId id : graph.order()) {
        const int to = v.itemOfNode[id.index];
        if (to < 0) continue;
        for (ValueId in : graph.node(id).inputs) {
            if (!in.valid()) continue;
            const Value& value = graph.value(in);
            if (value.kind != Value::Kind::NodeOutput || !value.producer.valid()) continue;
            const int from = v.itemOfNode[value.producer.index];
            if (from < 0 || from == to || !seen.insert({from, to}).second) continue;
            v.edges.push_back({from, to});
        }
    }
    return v;
}

}  // namespace fsc
