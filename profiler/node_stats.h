#pragma once
// Per-node time over one or more runs: the CPU backend's stand-in for a kernel trace.
// Fed by the app (which adapts the executor's launch events); knows nothing of plans.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ids.h"

namespace fsc {

struct NodeTime {
    NodeId id;  // in the graph that ran; for nested launches, in their subgraph
    std::string node;
    std::string opType;
    std::string kernelId;
    int depth = 0;        // 0 for the main graph, +1 per enclosing control-flow node
    int64_t totalNs = 0;  // summed over every launch
    int64_t launches = 0;
    int64_t medianNs = 0;  // per iteration, over the iterations seen (one it did not run in counts 0)
};

class NodeStatsCollector {
public:
    void add(NodeId id, const std::string& node, const std::string& opType, const std::string& kernelId,
             int depth, int64_t durationNs, int iteration = 0);
    void clear() { m_byKey.clear(); m_order.clear(); m_byIteration.clear(); m_iterations = 0; }
    // Sorted by median per iteration, largest first. Shares are of the top-level (depth 0)
    // medians' sum, so nested launches (already inside their If/Loop/Scan's time) are not
    // counted twice.
    std::vector<NodeTime> sorted() const;
    int64_t topLevelMedianNs() const;

private:
    std::map<std::string, size_t> m_byKey;
    std::vector<NodeTime> m_order;
    std::vector<std::map<int, int64_t>> m_byIteration;  // per entry of m_order
    int m_iterations = 0;
    int64_t medianOf(size_t entry) const;
};

}  // namespace fsc
