#pragma once
// Builds IR graphs in code: test fixtures, benchmarks and generated samples. Names are
// checked for uniqueness as they are added; output types are left to shape inference.
#include <string>
#include <vector>

#include "core/graph.h"

namespace fsc {

Attribute intAttr(std::string name, int64_t value);
Attribute floatAttr(std::string name, float value);
Attribute stringAttr(std::string name, std::string value);
Attribute intsAttr(std::string name, std::vector<int64_t> values);
Attribute floatsAttr(std::string name, std::vector<float> values);
Attribute stringsAttr(std::string name, std::vector<std::string> values);
Attribute tensorAttr(std::string name, Tensor value);
Attribute graphAttr(std::string name, std::shared_ptr<Graph> value);

// A float32 tensor with the given values (copied).
Tensor floatTensor(std::string name, std::vector<int64_t> dims, const std::vector<float>& values);
Tensor int64Tensor(std::string name, std::vector<int64_t> dims, const std::vector<int64_t>& values);
// Deterministic pseudo-random float32 weights in [-scale, scale].
Tensor randomFloatTensor(std::string name, std::vector<int64_t> dims, uint64_t seed,
                         float scale = 0.1f);

class GraphBuilder {
public:
    explicit GraphBuilder(std::string graphName = "main");

    ValueId input(const std::string& name, DType type, Shape shape);
    ValueId initializer(Tensor tensor);
    // A value defined in an enclosing graph (for building If/Loop bodies).
    ValueId outerValue(const std::string& name);
    // Adds a node; each output name gets a fresh value. Returns the outputs.
    std::vector<ValueId> node(const std::string& opType, const std::vector<ValueId>& inputs,
                              const std::vector<std::string>& outputNames,
                              std::vector<Attribute> attributes = {}, std::string name = {},
                              std::string domain = {});
    // Single-output shortcut.
    ValueId op(const std::string& opType, const std::vector<ValueId>& inputs,
               const std::string& outputName, std::vector<Attribute> attributes = {},
               std::string name = {});
    void output(ValueId value, ValueType type = {});

    Graph& graph() { return *m_graph; }
    std::shared_ptr<Graph> takeGraph() { return std::move(m_graph); }
    // Wraps the graph in a model importing the default domain at `opset`.
    Model buildModel(int64_t opset = 17, int64_t irVersion = 8);

private:
    ValueId fresh(const std::string& name, Value::Kind kind);
    std::shared_ptr<Graph> m_graph;
};

}  // namespace fsc
