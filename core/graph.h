#pragma once
// The IR graph: nodes and values in arenas addressed by strong ids. Node order (`order()`)
// is topological; the importer sorts files that are not. Values produced outside a
// subgraph are represented inside it as OuterScope values, looked up by name.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/attribute.h"
#include "core/ids.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace fsc {

struct Value {
    enum class Kind { GraphInput, Initializer, NodeOutput, OuterScope };
    std::string name;
    Kind kind = Kind::NodeOutput;
    ValueType type;
    NodeId producer;            // valid for NodeOutput
    bool isGraphInput = false;  // also true for an initializer listed as an input (overridable, IR >= 4)
    std::shared_ptr<const Tensor> initializer;
    std::shared_ptr<const SparseTensor> sparseInitializer;
    std::string docString;
};

struct Node {
    std::string name;
    std::string opType;
    std::string domain;  // "" is the default ONNX domain
    std::vector<ValueId> inputs;   // an invalid id is an omitted optional input
    std::vector<ValueId> outputs;  // an invalid id is an omitted optional output
    std::vector<Attribute> attributes;
    std::string scope;  // "encoder/layer.3/attn" for "/encoder/layer.3/attn/MatMul"
    std::string docString;
    // Provenance: the imported nodes this node was made from (ids in the same arena, which
    // never reuses ids), sorted. Empty for an imported node: it stands for itself.
    std::vector<NodeId> origins;

    const Attribute* attribute(const std::string& attrName) const;
    // Subgraphs held in this node's graph-valued attributes.
    std::vector<std::shared_ptr<Graph>> subgraphs() const;
    // Names its subgraphs (at any depth) read from enclosing graphs, each once: the node
    // depends on them as it does on its inputs.
    std::vector<std::string> capturedNames() const;
};

// The scope path of a node name: its '/'-separated segments without the last one.
std::string scopeFromName(const std::string& nodeName);

class Graph {
public:
    std::string name;
    std::string docString;

    ValueId addValue(Value value);
    NodeId addNode(Node node);  // appended to order(); producers of its outputs are set

    const Value& value(ValueId id) const { return m_values[id.index]; }
    Value& value(ValueId id) { return m_values[id.index]; }
    const Node& node(NodeId id) const { return m_nodes[id.index]; }
    Node& node(NodeId id) { return m_nodes[id.index]; }
    size_t valueCount() const { return m_values.size(); }
    size_t nodeCount() const { return m_order.size(); }  // live nodes
    size_t nodeArenaSize() const { return m_nodes.size(); }  // every id ever handed out

    ValueId findValue(const std::string& valueName) const;
    // The new name must not be taken; the old one becomes free.
    void renameValue(ValueId id, const std::string& newName);

    // A graph rebuilt from arenas (graph snapshots); producers are taken as given.
    static Graph fromArenas(std::vector<Value> values, std::vector<Node> nodes,
                            std::vector<NodeId> order);

    const std::vector<NodeId>& order() const { return m_order; }
    void setOrder(std::vector<NodeId> order) { m_order = std::move(order); }

    std::vector<ValueId> inputs;        // graph inputs in declaration order
    std::vector<ValueId> outputs;       // graph outputs in declaration order
    std::vector<ValueId> initializers;  // dense and sparse, in declaration order

    // Nodes that read a value, in order(); recomputed on each call.
    std::vector<NodeId> consumers(ValueId id) const;

private:
    std::vector<Value> m_values;
    std::vector<Node> m_nodes;
    std::vector<NodeId> m_order;
    std::unordered_map<std::string, ValueId> m_byName;
};

// A model-local function (ONNX FunctionProto), kept so export writes it back.
struct Function {
    std::string name;
    std::string domain;
    std::vector<std::string> attributeNames;
    std::vector<std::pair<std::string, int64_t>> opsetImports;
    std::string docString;
    std::shared_ptr<Graph> body;  // inputs/outputs are the formal parameters
};

struct Model {
    std::string path;  // file it was read from, for messages
    int64_t irVersion = 0;
    std::vector<std::pair<std::string, int64_t>> opsetImports;  // domain -> version
    std::string producerName;
    std::string producerVersion;
    std::string domain;
    int64_t modelVersion = 0;
    std::string docString;
    std::vector<std::pair<std::string, std::string>> metadata;
    std::shared_ptr<Graph> graph;
    std::vector<Function> functions;
    std::vector<std::string> warnings;  // import notes that did not stop it

    // Opset version for a domain ("" and "ai.onnx" are the same), or -1 when not imported.
    int64_t opsetVersion(const std::string& opDomain) const;
};

}  // namespace fsc
