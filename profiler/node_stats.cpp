#include "profiler/node_stats.h"

#include <algorithm>

namespace fsc {

void NodeStatsCollector::add(NodeId id, const std::string& node, const std::string& opType,
                             const std::string& kernelId, int depth, int64_t durationNs) {
    const std::string key = std::to_string(depth) + "\x1f" + node + "\x1f" + kernelId;
    auto [it, inserted] = m_byKey.emplace(key, m_order.size());
    if (inserted) m_order.push_back({id, node, opType, kernelId, depth, 0, 0});
    NodeTime& t = m_order[it->second];
    t.totalNs += durationNs;
    t.launches += 1;
}

std::vector<NodeTime> NodeStatsCollector::sorted() const {
    std::vector<NodeTime> out = m_order;
    std::stable_sort(out.begin(), out.end(),
                     [](const NodeTime& a, const NodeTime& b) { return a.totalNs > b.totalNs; });
    return out;
}

int64_t NodeStatsCollector::topLevelTotalNs() const {
    int64_t total = 0;
    for (const NodeTime& t : m_order)
        if (t.depth == 0) total += t.totalNs;
    return total;
}

}  // namespace fsc
