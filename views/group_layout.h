#pragma once
// The canvas's layout: every expanded group is laid out on its own (its direct nodes and
// its child groups as boxes), inside out, so a collapsed subtree costs nothing and a group
// whose contents did not change can reuse its layout. Small groups use Graphviz dot, large
// ones our layered layout; the result is absolute geometry for the painter. No Qt.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "views/layered_layout.h"
#include "views/scope_tree.h"

namespace fsc {

struct Rect {
    double x = 0, y = 0, width = 0, height = 0;  // top-left and size
    double centerX() const { return x + width / 2; }
    double bottom() const { return y + height; }
};

struct CanvasLayout {
    struct Box {
        NodeId node;     // a node, or
        int group = -1;  // a group: a collapsed box, or the frame of an expanded one
        bool expanded = false;
        Rect rect;
    };
    std::vector<Box> boxes;  // frames of expanded groups come before their contents
    std::vector<std::vector<LayoutResult::Point>> edges;  // polylines in canvas coordinates
    // Per edge, what it carries: the first value found between its two boxes, the node that
    // reads it, and how many distinct values the edge stands for (collapsed groups merge them).
    struct EdgeInfo {
        ValueId value;
        NodeId target;
        int values = 1;
    };
    std::vector<EdgeInfo> edgeInfo;
    double width = 0, height = 0;
    int groupsLaidOut = 0;  // how many group layouts were computed (not reused)
    bool cancelled = false;
};

// A node's box size: wide enough for its op type.
LayoutInput::Box nodeBox(const Node& node);

// Keeps each group's layout by a key of what it holds, across snapshots of one model.
class GroupLayoutCache {
public:
    std::shared_ptr<const void> find(const std::string& key) const;
    void put(const std::string& key, std::shared_ptr<const void> layout);
    size_t size() const { return m_entries.size(); }

private:
    std::map<std::string, std::shared_ptr<const void>> m_entries;
};

// How each group is laid out: Graphviz dot for groups of up to kDotMaxNodes boxes and the
// layered layout for larger ones, or the layered layout everywhere.
enum class GroupEngine { DotWhereQuick, LayeredOnly };

struct CanvasLayoutOptions {
    GroupEngine engine = GroupEngine::DotWhereQuick;
    bool showConstants = false;  // Constant nodes and Identities of weights (hidden by default)
};

CanvasLayout layoutCanvas(const Graph& graph, const ScopeTree& tree, const std::vector<bool>& expanded,
                          GroupLayoutCache* cache = nullptr, const std::atomic<bool>* cancel = nullptr,
                          const CanvasLayoutOptions& options = {});

}  // namespace fsc
