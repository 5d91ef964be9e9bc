#pragma once
// An immutable picture of a graph after a compiler pass. Snapshots share structure: nodes
// and values sit in chunked tables of shared pointers, and a snapshot taken after a pass
// copies only the entries that pass touched (and the chunks holding them), so 20
// snapshots of a large graph cost little more than one copy of it.
#include <memory>
#include <vector>

#include "core/graph.h"

namespace fsc {

// A read-only array of T whose unchanged chunks are shared with the table it came from.
template <typename T>
class SharedTable {
public:
    static constexpr size_t kChunk = 64;

    size_t size() const { return m_size; }
    const T& operator[](size_t i) const { return *(*m_chunks[i / kChunk])[i % kChunk]; }

    // A table holding `source`'s entries: those listed in `changed` (and any beyond
    // `previous`'s size) are copied, the rest are shared with `previous`.
    template <typename Get>
    static SharedTable derive(const SharedTable* previous, size_t size,
                              const std::vector<uint32_t>& changed, Get&& get) {
        SharedTable t;
        t.m_size = size;
        const size_t chunks = (size + kChunk - 1) / kChunk;
        std::vector<bool> dirty(chunks, previous == nullptr);
        std::vector<bool> dirtyEntry(size, previous == nullptr);
        for (uint32_t i : changed)
            if (i < size) dirty[i / kChunk] = dirtyEntry[i] = true;
        if (previous)
            for (size_t i = previous->m_size; i < size; ++i) dirty[i / kChunk] = dirtyEntry[i] = true;
        t.m_chunks.resize(chunks);
        for (size_t c = 0; c < chunks; ++c) {
            if (!dirty[c]) {
                t.m_chunks[c] = previous->m_chunks[c];
                continue;
            }
            auto chunk = std::make_shared<Chunk>();
            const size_t end = std::min(size, (c + 1) * kChunk);
            for (size_t i = c * kChunk; i < end; ++i) {
                const bool keep = previous && !dirtyEntry[i] && i < previous->m_size;
                chunk->push_back(keep ? (*previous->m_chunks[c])[i % kChunk]
                                      : std::make_shared<const T>(get(i)));
            }
            t.m_chunks[c] = std::move(chunk);
        }
        return t;
    }

private:
    using Chunk = std::vector<std::shared_ptr<const T>>;
    std::vector<std::shared_ptr<const Chunk>> m_chunks;
    size_t m_size = 0;
};

class GraphSnapshot {
public:
    // Captures `graph`. With a previous snapshot of the same graph, only the nodes and
    // values listed as changed since then (or added) are copied.
    static std::shared_ptr<const GraphSnapshot> capture(const Graph& graph,
                                                        const GraphSnapshot* previous = nullptr,
                                                        const std::vector<uint32_t>& changedNodes = {},
                                                        const std::vector<uint32_t>& changedValues = {});

    const Node& node(NodeId id) const { return m_nodes[id.index]; }
    const Value& value(ValueId id) const { return m_values[id.index]; }
    size_t nodeArenaSize() const { return m_nodes.size(); }
    size_t valueArenaSize() const { return m_values.size(); }
    const std::vector<NodeId>& order() const { return m_order; }
    size_t nodeCount() const { return m_order.size(); }
    const std::vector<ValueId>& inputs() const { return m_inputs; }
    const std::vector<ValueId>& outputs() const { return m_outputs; }
    const std::vector<ValueId>& initializers() const { return m_initializers; }

    // A mutable graph equal to the one captured (same ids).
    std::shared_ptr<Graph> materialize() const;

private:
    SharedTable<Node> m_nodes;
    SharedTable<Value> m_values;
    std::vector<NodeId> m_order;
    std::vector<ValueId> m_inputs, m_outputs, m_initializers;
    std::string m_name, m_docString;
};

}  // namespace fsc
