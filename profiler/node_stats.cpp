#include "profiler/node_stats.h"

#include <algorithm>

namespace fsc {

void NodeStatsCollector::add(NodeId id, const std::string& node, const std::string& opType,
                             const std::string& kernelId, int depth, int64_t durationNs, int iteration) {
    const std::string key = std::to_string(depth) + "\x1f" + node + "\x1f" + kernelId;
    auto [it, inserted] = m_byKey.emplace(key, m_order.size());
    if (inserted) {
        m_order.push_back({id, node, opType, kernelId, depth, 0, 0, 0});
        m_byIteration.emplace_back();
    }
    NodeTime& t = m_order[it->second];
    t.totalNs += durationNs;
    t.launches += 1;
    m_byIteration[it->second][iteration] += durationNs;
    m_iterations = std::max(m_iterations, iteration + 1);
}

int64_t NodeStatsCollector::medianOf(size_t entry) const {
    std::vector<int64_t> ns;
    for (const auto& [iteration, total] : m_byIteration[entry]) ns.push_back(total);
    ns.resize(std::max(ns.size(), size_t(std::max(1, m_iterations))), 0);
    std::sort(ns.begin(), ns.end());
    const size_t n = ns.size();
    return n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2;
}

std::vector<NodeTime> NodeStatsCollector::sorted() const {
    std::vector<NodeTime> out = m_order;
    for (size_t i = 0; i < out.size(); ++i) out[i].medianNs = medianOf(i);
    std::stable_sort(out.begin(), out.end(),
                     [](const NodeTime& a, const NodeTime& b) { return a.medianNs > b.medianNs; });
    return out;
}

int64_t NodeStatsCollector::topLevelMedianNs() const {
    int64_t total = 0;
    for (size_t i = 0; i < m_order.size(); ++i)
        if (m_order[i].depth == 0) total += medianOf(i);
    return total;
}

}  // namespace fsc
