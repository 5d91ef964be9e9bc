#include "core/provenance.h"

#include <algorithm>

namespace fsc {

std::vector<NodeId> linkedNodes(const Graph& from, NodeId node, const Graph& to) {
    std::vector<NodeId> linked;
    if (!node.valid() || node.index >= from.nodeArenaSize()) return linked;
    auto originsOf = [](const Graph& g, NodeId n) {
        const Node& x = g.node(n);
        return x.origins.empty() ? std::vector<NodeId>{n} : x.origins;
    };
    const std::vector<NodeId> mine = originsOf(from, node);
    for (NodeId m : to.order())
        for (NodeId o : originsOf(to, m))
            if (std::find(mine.begin(), mine.end(), o) != mine.end()) {
                linked.push_back(m);
                break;
            }
    return linked;
}

std::vector<std::string> ownAndOriginNames(const Graph& graph, NodeId node) {
    const Node& n = graph.node(node);
    std::vector<std::string> names{n.name};
    for (NodeId origin : n.origins)
        if (origin.index < graph.nodeArenaSize()) names.push_back(graph.node(origin).name);
    return names;
}

}  // namespace fsc
