#pragma once
// The only way a pass edits a graph. Edits accumulate into an open change; commit() closes
// it as one ChangeRecord (pattern, removed and added nodes, reason). The rewriter keeps a
// use list, so "who reads this value" is a lookup, and tracks which nodes and values were
// touched, so the pass manager snapshots only those. Nodes added or removed take their
// place in graph().order() when finish() runs (the pass manager calls it after each pass
// and sweep); until then the arena holds them and isLive() tells which are in.
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph.h"

namespace fsc {

struct ChangeRecord {
    std::string pass;
    std::string pattern;
    std::string reason;
    std::vector<NodeId> removed;
    std::vector<NodeId> added;
};

class Rewriter {
public:
    Rewriter(Graph& graph, std::string passName);

    const Graph& graph() const { return m_graph; }
    const std::string& passName() const { return m_pass; }

    // --- queries
    bool isLive(NodeId id) const { return id.index < m_live.size() && m_live[id.index]; }
    // Live nodes reading the value as an input or from inside a subgraph, each once.
    const std::vector<NodeId>& users(ValueId id) const;
    bool isGraphOutput(ValueId id) const;
    // Read by name from inside a subgraph: the name must survive.
    bool isCaptured(ValueId id) const;
    // The live node producing the value, or an invalid id (inputs, constants).
    NodeId producer(ValueId id) const;
    // The tensor of an initializer, or null.
    const Tensor* constant(ValueId id) const;
    // The value's single reader when it has exactly one and is not a graph output.
    NodeId soleUser(ValueId id) const;

    // --- edits
    std::string uniqueName(const std::string& hint);
    // A new initializer holding `tensor` (renamed to a unique name).
    ValueId addConstant(Tensor tensor, const std::string& nameHint);
    // A new intermediate value of `type`, for a node about to be added to produce it.
    ValueId addIntermediate(ValueType type, const std::string& nameHint);
    // Adds a node that will sit just before `anchor` in the order; its provenance is the
    // union of the origins of `madeFrom`. Producers of its outputs are set to it.
    NodeId addNode(Node node, NodeId anchor, const std::vector<NodeId>& madeFrom);
    // Takes a live node out. Its outputs must have no readers left (graph outputs and
    // captured names count as readers).
    void removeNode(NodeId id);
    // Every reader of `from` reads `to` instead. A graph output or a captured name keeps
    // its name: `to` takes it when it is a plain node output, otherwise an Identity from
    // `to` produces it.
    void replaceAllUses(ValueId from, ValueId to);
    void setInput(NodeId node, size_t index, ValueId value);
    // Replaces the schedule (after finish()); `order` must list every live node once, each
    // after the producers of its inputs.
    Status setSchedule(std::vector<NodeId> order);

    // Closes the open change. Returns false (and records nothing) when nothing changed.
    bool commit(const std::string& pattern, const std::string& reason);
    // Puts added nodes into the order and drops removed ones. Order stays topological:
    // an added node sits before its anchor, which read values produced earlier.
    void finish();

    const std::vector<ChangeRecord>& changes() const { return m_changes; }
    std::vector<uint32_t> takeTouchedNodes();
    std::vector<uint32_t> takeTouchedValues();

private:
    void addUse(ValueId value, NodeId node);
    void dropUse(ValueId value, NodeId node);
    void touchNode(NodeId id);
    void touchValue(ValueId id);
    void insertIdentity(ValueId keep, ValueId source);

    Graph& m_graph;
    std::string m_pass;
    std::vector<bool> m_live;
    std::vector<std::vector<NodeId>> m_users;  // by value index
    std::vector<bool> m_captured;               // by value index
    std::unordered_map<uint32_t, std::vector<NodeId>> m_insertBefore;  // anchor -> new nodes
    std::unordered_map<uint32_t, std::vector<NodeId>> m_appendAfter;
    std::vector<NodeId> m_prepend;  // nodes that go first (Identity of an input)
    bool m_orderDirty = false;
    int m_nameCounter = 0;
    ChangeRecord m_open;
    bool m_openModified = false;
    std::vector<ChangeRecord> m_changes;
    std::vector<uint32_t> m_touchedNodes, m_touchedValues;
    std::vector<bool> m_nodeTouched, m_valueTouched;
};

}  // namespace fsc
