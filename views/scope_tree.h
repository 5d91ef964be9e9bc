#pragma once
// Groups of a graph by scope path ("encoder/layer.3/attn"), and the graph one sees when
// some groups are collapsed: a collapsed group is one box, edges between boxes are merged.
// Pure data, no Qt: the canvas lays out what visibleGraph() returns.
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

struct ScopeGroup {
    std::string name;   // last segment ("attn"); empty for the root
    std::string path;   // full path ("encoder/layer.3/attn")
    int parent = -1;
    int depth = 0;      // the root is 0
    std::vector<int> children;
    std::vector<NodeId> nodes;  // nodes directly in this group, in graph order
    int totalNodes = 0;         // including descendants
};

class ScopeTree {
public:
    static ScopeTree build(const Graph& graph);
    const std::vector<ScopeGroup>& groups() const { return m_groups; }  // [0] is the root
    int groupOf(NodeId node) const;  // the deepest group holding it
    int find(const std::string& path) const;  // -1 when absent

private:
    std::vector<ScopeGroup> m_groups;
    std::vector<int> m_groupOfNode;  // by node arena index
};

// Per group, the sum of a per-node quantity (by node arena index) over its subtree: what a
// collapsed group shows for the nodes inside it.
std::vector<double> groupTotals(const ScopeTree& tree, const std::vector<double>& byNodeIndex);
// The same with each group's largest value instead of the sum.
std::vector<double> groupMaxima(const ScopeTree& tree, const std::vector<double>& byNodeIndex);

// Which groups are expanded: every group up to `depth` (the root, depth 0, always is).
std::vector<bool> expandedToDepth(const ScopeTree& tree, int depth);

struct VisibleGraph {
    struct Item {
        NodeId node;     // a node, or
        int group = -1;  // a collapsed group
    };
    std::vector<Item> items;                 // in graph order of their first node
    std::vector<std::pair<int, int>> edges;  // item indices, merged, no self loops
    std::vector<int> itemOfNode;             // by node arena index; -1 for hidden nodes
};

// Nodes that only hold a constant: Constant, and Identity of an initializer (exporters
// emit hundreds for shared weights). Hidden on the canvas unless asked for.
bool isConstantLike(const Graph& graph, const Node& node);

// Constant-like nodes are hidden unless `showConstants`.
VisibleGraph visibleGraph(const Graph& graph, const ScopeTree& tree, const std::vector<bool>& expanded,
                          bool showConstants = false);

}  // namespace fsc
