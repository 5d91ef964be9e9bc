#include "views/group_layout.h"

#include "views/dot_layout.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>

namespace fsc {
namespace {

constexpr double kHeader = 26;   // an expanded group's title bar
constexpr double kPadding = 14;  // around its contents

// How wide an expanded group's frame must be for its title ("name  (count)", 11 pt in
// scene units, about 9 units a character) to fit whole: a narrow group grows rather than
// cut its title.
double titleWidth(const ScopeGroup& group) {
    const size_t chars = group.name.size() + 4 + std::to_string(group.totalNodes).size();
    return 9.0 * double(chars) + 16;
}


// One expanded group's contents, relative to the top-left of its frame.
struct LocalLayout {
    struct Child {
        NodeId node;
        int group = -1;
        bool expanded = false;
        Rect rect;
    };
    std::vector<Child> children;
    std::vector<std::vector<LayoutResult::Point>> edges;
    std::vector<CanvasLayout::EdgeInfo> edgeInfo;  // per edge
    double width = 0, height = 0;
};

struct Builder {
    Builder(const Graph& g, const ScopeTree& t, const std::vector<bool>& e, GroupLayoutCache* c,
            const std::atomic<bool>* x, const CanvasLayoutOptions& o)
        : graph(g), tree(t), expanded(e), cache(c), cancel(x), useDot(o.engine == GroupEngine::DotWhereQuick),
          showConstants(o.showConstants) {}
    const Graph& graph;
    const ScopeTree& tree;
    const std::vector<bool>& expanded;
    GroupLayoutCache* cache;
    const std::atomic<bool>* cancel;
    bool useDot;
    bool showConstants;
    int computed = 0;

    bool hidden(NodeId id) const { return !showConstants && isConstantLike(graph, graph.node(id)); }
    bool cancelled = false;
    std::vector<int> position;  // graph order position by node index

    // The child of `group` on the way to `node`'s group, or -1 when the node sits directly in it.
    int childToward(int group, NodeId node) const {
        int g = tree.groupOf(node);
        if (g == group) return -1;
        while (g >= 0 && tree.groups()[size_t(g)].parent != group) g = tree.groups()[size_t(g)].parent;
        return g;
    }

    bool inSubtree(int group, NodeId node) const {
        for (int g = tree.groupOf(node); g >= 0; g = tree.groups()[size_t(g)].parent)
            if (g == group) return true;
        return false;
    }

    void subtreeNodes(int group, std::vector<NodeId>& out) const {
        const ScopeGroup& g = tree.groups()[size_t(group)];
        out.insert(out.end(), g.nodes.begin(), g.nodes.end());
        for (int c : g.children) subtreeNodes(c, out);
    }

    // What the layout depends on: the subtree's nodes and edges, and what is expanded in it.
    std::string key(int group) const {
        std::vector<NodeId> nodes;
        subtreeNodes(group, nodes);
        std::sort(nodes.begin(), nodes.end(), [&](NodeId a, NodeId b) { return position[a.index] < position[b.index]; });
        std::string k = tree.groups()[size_t(group)].path + (useDot ? "|dot" : "|") + (showConstants ? "|c|" : "|");
        for (NodeId id : nodes) {
            const Node& n = graph.node(id);
            k += n.name + ":" + n.opType + "(";
            for (ValueId in : n.inputs)
                if (in.valid()) k += graph.value(in).name + ",";
            k += ")";
        }
        std::function<void(int)> flags = [&](int g) {
            k += expanded[size_t(g)] ? '+' : '-';
            for (int c : tree.groups()[size_t(g)].children) flags(c);
        };
        flags(group);
        return std::to_string(std::hash<std::string>{}(k)) + "/" + std::to_string(k.size());
    }

    std::shared_ptr<const LocalLayout> layout(int group) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            cancelled = true;
            return std::make_shared<LocalLayout>();
        }
        const std::string k = cache ? key(group) : std::string();
        if (cache)
            if (auto found = cache->find(k)) return std::static_pointer_cast<const LocalLayout>(found);
        auto local = std::make_shared<LocalLayout>();
        const ScopeGroup& g = tree.groups()[size_t(group)];

        // Children: direct nodes and child groups, ordered by their first node.
        struct Item {
            int first;
            NodeId node;
            int group;
        };
        std::vector<Item> items;
        for (NodeId id : g.nodes)
            if (!hidden(id)) items.push_back({position[id.index], id, -1});
        for (int c : g.children) {
            std::vector<NodeId> nodes;
            subtreeNodes(c, nodes);
            int first = INT32_MAX, shown = 0;
            NodeId only;
            for (NodeId id : nodes)
                if (!hidden(id)) {
                    first = std::min(first, position[id.index]);
                    ++shown;
                    only = id;
                }
            // A group around a single node (exporters name each module) is just the node.
            if (shown == 1) items.push_back({first, only, -1});
            else if (shown > 1) items.push_back({first, NodeId{}, c});
        }
        std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.first < b.first; });

        LayoutInput in;
        std::vector<std::shared_ptr<const LocalLayout>> inner(items.size());
        std::map<uint32_t, int> itemOfNode;
        std::map<int, int> itemOfGroup;
        for (size_t i = 0; i < items.size(); ++i) {
            if (items[i].group < 0) {
                in.nodes.push_back(nodeBox(graph.node(items[i].node)));
                itemOfNode[items[i].node.index] = int(i);
                continue;
            }
            const int c = items[i].group;
            itemOfGroup[c] = int(i);
            if (expanded[size_t(c)]) {
                inner[i] = layout(c);
                in.nodes.push_back({std::max(inner[i]->width + 2 * kPadding, titleWidth(tree.groups()[size_t(c)])),
                                    inner[i]->height + kHeader + kPadding});
            } else {
                const ScopeGroup& cg = tree.groups()[size_t(c)];
                in.nodes.push_back({std::max(120.0, 8.0 * double(cg.name.size()) + 56), 44});
            }
        }
        // Edges between this group's items, from the subtree's nodes.
        std::vector<NodeId> nodes;
        subtreeNodes(group, nodes);
        auto itemOf = [&](NodeId id) {
            if (auto direct = itemOfNode.find(id.index); direct != itemOfNode.end()) return direct->second;
            const int c = childToward(group, id);
            if (c < 0) {
                auto it = itemOfNode.find(id.index);
                return it == itemOfNode.end() ? -1 : it->second;
            }
            auto it = itemOfGroup.find(c);
            return it == itemOfGroup.end() ? -1 : it->second;
        };
        std::map<std::pair<int, int>, size_t> edgeOf;
        std::set<std::pair<size_t, uint32_t>> counted;  // (edge, value) pairs already counted
        for (NodeId id : nodes) {
            if (hidden(id)) continue;
            const int to = itemOf(id);
            for (ValueId v : graph.node(id).inputs) {
                if (!v.valid()) continue;
                const Value& value = graph.value(v);
                if (value.kind != Value::Kind::NodeOutput || !value.producer.valid()) continue;
                if (hidden(value.producer) || !inSubtree(group, value.producer)) continue;
                const int from = itemOf(value.producer);
                if (from < 0 || to < 0 || from == to) continue;
                auto [at, added] = edgeOf.emplace(std::pair{from, to}, in.edges.size());
                if (added) {
                    in.edges.push_back({from, to});
                    local->edgeInfo.push_back({v, id, 0});
                }
                if (counted.insert({at->second, v.index}).second) ++local->edgeInfo[at->second].values;
            }
        }
        // dot reads best where it is quick; our layered layout takes the rest (or a dot failure).
        LayoutResult r;
        if (useDot && int(in.nodes.size()) <= kDotMaxNodes) r = dotLayout(in);
        if (r.centers.size() != in.nodes.size()) r = layeredLayout(in, {}, cancel);
        if (r.cancelled) {
            cancelled = true;
            return local;
        }
        ++computed;
        for (size_t i = 0; i < items.size(); ++i) {
            const auto& box = in.nodes[i];
            LocalLayout::Child child{items[i].node, items[i].group, items[i].group >= 0 && expanded[size_t(items[i].group)],
                                     {r.centers[i].x - box.width / 2, r.centers[i].y - box.height / 2, box.width, box.height}};
            local->children.push_back(child);
        }
        local->edges = r.edgePaths;
        local->width = r.width;
        local->height = r.height;
        if (cache) cache->put(k, local);
        return local;
    }

    void place(const LocalLayout& local, double ox, double oy, CanvasLayout& out) {
        for (size_t e = 0; e < local.edges.size(); ++e) {
            const auto& path = local.edges[e];
            if (path.empty()) continue;
            std::vector<LayoutResult::Point> moved;
            for (const auto& p : path) moved.push_back({p.x + ox, p.y + oy});
            out.edges.push_back(std::move(moved));
            out.edgeInfo.push_back(local.edgeInfo[e]);
        }
        for (const auto& child : local.children) {
            Rect rect = child.rect;
            rect.x += ox;
            rect.y += oy;
            out.boxes.push_back({child.node, child.group, child.expanded, rect});
            if (!child.expanded) continue;
            const auto inner = layout(child.group);  // centred in a frame widened for its title
            place(*inner, rect.x + (rect.width - inner->width) / 2, rect.y + kHeader, out);
        }
    }
};

}  // namespace

LayoutInput::Box nodeBox(const Node& node) {
    return {std::max(80.0, 8.0 * double(node.opType.size()) + 32), 36};
}

std::shared_ptr<const void> GroupLayoutCache::find(const std::string& key) const {
    auto it = m_entries.find(key);
    return it == m_entries.end() ? nullptr : it->second;
}

void GroupLayoutCache::put(const std::string& key, std::shared_ptr<const void> layout) {
    m_entries[key] = std::move(layout);
}

CanvasLayout layoutCanvas(const Graph& graph, const ScopeTree& tree, const std::vector<bool>& expanded,
                          GroupLayoutCache* cache, const std::atomic<bool>* cancel, const CanvasLayoutOptions& options) {
    // Without a caller's cache, one for this call still spares place() a second layout.
    GroupLayoutCache local;
    Builder b{graph, tree, expanded, cache ? cache : &local, cancel, options};
    b.position.assign(graph.nodeArenaSize(), 0);
    for (size_t i = 0; i < graph.order().size(); ++i) b.position[graph.order()[i].index] = int(i);
    CanvasLayout out;
    auto root = b.layout(0);
    b.place(*root, 0, 0, out);
    out.width = root->width;
    out.height = root->height;
    out.groupsLaidOut = b.computed;
    out.cancelled = b.cancelled;
    return out;
}

}  // namespace fsc
