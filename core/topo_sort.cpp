#include "core/topo_sort.h"

#include <functional>
#include <queue>

namespace fsc {
namespace {

std::string nodeLabel(const Node& n) {
    return "'" + (n.name.empty() ? std::string("<unnamed>") : n.name) + "' (" + n.opType + ")";
}

}  // namespace

Status topologicallySort(Graph& graph) {
    const std::vector<NodeId> original = graph.order();
    const size_t n = original.size();
    std::unordered_map<uint32_t, size_t> positionOf;
    for (size_t i = 0; i < n; ++i) positionOf[original[i].index] = i;

    // deps[i]: positions of nodes that must run before the node at position i.
    std::vector<std::vector<size_t>> dependents(n);
    std::vector<size_t> pending(n, 0);
    std::vector<std::vector<size_t>> deps(n);
    for (size_t i = 0; i < n; ++i) {
        const Node& node = graph.node(original[i]);
        auto addDep = [&](ValueId v) {
            if (!v.valid()) return;
            NodeId p = graph.value(v).producer;
            if (graph.value(v).kind != Value::Kind::NodeOutput || !p.valid()) return;
            auto it = positionOf.find(p.index);
            if (it != positionOf.end()) deps[i].push_back(it->second);
        };
        for (ValueId in : node.inputs) addDep(in);
        for (const std::string& name : node.capturedNames()) addDep(graph.findValue(name));
        for (size_t d : deps[i]) {
            dependents[d].push_back(i);
            ++pending[i];
        }
    }

    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i)
        if (pending[i] == 0) ready.push(i);
    std::vector<NodeId> sorted;
    sorted.reserve(n);
    while (!ready.empty()) {
        size_t i = ready.top();
        ready.pop();
        sorted.push_back(original[i]);
        for (size_t d : dependents[i])
            if (--pending[d] == 0) ready.push(d);
    }
    if (sorted.size() == n) {
        graph.setOrder(std::move(sorted));
        return Status::ok();
    }

    // Walk backwards through unsorted producers until a node repeats: that loop is a cycle.
    size_t start = 0;
    while (pending[start] == 0) ++start;
    std::vector<size_t> path;
    std::vector<int> seenAt(n, -1);
    size_t cur = start;
    while (seenAt[cur] < 0) {
        seenAt[cur] = static_cast<int>(path.size());
        path.push_back(cur);
        for (size_t d : deps[cur]) {
            if (pending[d] != 0) {
                cur = d;
                break;
            }
        }
    }
    std::string cycle;
    for (size_t k = path.size(); k-- > static_cast<size_t>(seenAt[cur]);) {
        cycle += nodeLabel(graph.node(original[path[k]])) + " -> ";
    }
    cycle += nodeLabel(graph.node(original[path.back()]));
    return invalidModel("graph '" + graph.name + "' has a cycle: " + cycle);
}

}  // namespace fsc
