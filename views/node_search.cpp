#include "views/node_search.h"

#include <algorithm>
#include <cctype>

#include "views/scope_tree.h"

namespace fsc {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

}  // namespace

std::vector<NodeId> findNodes(const Graph& graph, const std::string& query) {
    std::vector<NodeId> found;
    const std::string q = lower(query);
    if (q.empty()) return found;
    auto has = [&](const std::string& text) { return lower(text).find(q) != std::string::npos; };
    for (NodeId id : graph.order()) {
        const Node& n = graph.node(id);
        if (isConstantLike(graph, n)) continue;
        bool match = has(n.name) || has(n.opType);
        for (const auto* list : {&n.inputs, &n.outputs})
            for (ValueId v : *list) match = match || (v.valid() && has(graph.value(v).name));
        if (match) found.push_back(id);
    }
    return found;
}

}  // namespace fsc
