#include "core/graph_builder.h"

#include <cstring>
#include <stdexcept>

namespace fsc {

namespace {
Attribute named(std::string name, Attribute::Type type) {
    Attribute a;
    a.name = std::move(name);
    a.type = type;
    return a;
}
}  // namespace

Attribute intAttr(std::string name, int64_t value) {
    Attribute a = named(std::move(name), Attribute::Type::Int);
    a.i = value;
    return a;
}

Attribute floatAttr(std::string name, float value) {
    Attribute a = named(std::move(name), Attribute::Type::Float);
    a.f = value;
    return a;
}

Attribute stringAttr(std::string name, std::string value) {
    Attribute a = named(std::move(name), Attribute::Type::String);
    a.s = std::move(value);
    return a;
}

Attribute stringsAttr(std::string name, std::vector<std::string> values) {
    Attribute a = named(std::move(name), Attribute::Type::Strings);
    a.strings = std::move(values);
    return a;
}

Attribute intsAttr(std::string name, std::vector<int64_t> values) {
    Attribute a = named(std::move(name), Attribute::Type::Ints);
    a.ints = std::move(values);
    return a;
}

Attribute floatsAttr(std::string name, std::vector<float> values) {
    Attribute a = named(std::move(name), Attribute::Type::Floats);
    a.floats = std::move(values);
    return a;
}

Attribute tensorAttr(std::string name, Tensor value) {
    Attribute a = named(std::move(name), Attribute::Type::Tensor);
    a.t = std::move(value);
    return a;
}

Attribute graphAttr(std::string name, std::shared_ptr<Graph> value) {
    Attribute a = named(std::move(name), Attribute::Type::Graph);
    a.g = std::move(value);
    return a;
}

template <typename T>
static Tensor makeTensor(std::string name, DType type, std::vector<int64_t> dims,
                         const std::vector<T>& values) {
    std::string bytes(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    const size_t size = bytes.size();
    return Tensor(std::move(name), type, std::move(dims), makeBuffer(std::move(bytes)), 0, size);
}

Tensor floatTensor(std::string name, std::vector<int64_t> dims, const std::vector<float>& values) {
    return makeTensor(std::move(name), DType::Float32, std::move(dims), values);
}

Tensor int64Tensor(std::string name, std::vector<int64_t> dims,
                   const std::vector<int64_t>& values) {
    return makeTensor(std::move(name), DType::Int64, std::move(dims), values);
}

Tensor randomFloatTensor(std::string name, std::vector<int64_t> dims, uint64_t seed, float scale) {
    const int64_t n = checkedProduct(dims).value_or(0);
    std::vector<float> values(static_cast<size_t>(n));
    uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (float& v : values) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const float unit = static_cast<float>(state >> 40) / static_cast<float>(1 << 24);
        v = (unit * 2.0f - 1.0f) * scale;
    }
    return floatTensor(std::move(name), std::move(dims), values);
}

GraphBuilder::GraphBuilder(std::string graphName) : m_graph(std::make_shared<Graph>()) {
    m_graph->name = std::move(graphName);
}

ValueId GraphBuilder::fresh(const std::string& name, Value::Kind kind) {
    if (m_graph->findValue(name).valid())
        throw std::invalid_argument("GraphBuilder: value '" + name + "' defined twice");
    Value v;
    v.name = name;
    v.kind = kind;
    return m_graph->addValue(std::move(v));
}

ValueId GraphBuilder::input(const std::string& name, DType type, Shape shape) {
    ValueId id = fresh(name, Value::Kind::GraphInput);
    m_graph->value(id).isGraphInput = true;
    m_graph->value(id).type = ValueType::tensor(type, std::move(shape));
    m_graph->inputs.push_back(id);
    return id;
}

ValueId GraphBuilder::initializer(Tensor tensor) {
    ValueId id = fresh(tensor.name(), Value::Kind::Initializer);
    m_graph->value(id).type = ValueType::tensor(tensor.dtype(), tensor.shape());
    m_graph->value(id).initializer = std::make_shared<const Tensor>(std::move(tensor));
    m_graph->initializers.push_back(id);
    return id;
}

ValueId GraphBuilder::outerValue(const std::string& name) {
    ValueId existing = m_graph->findValue(name);
    return existing.valid() ? existing : fresh(name, Value::Kind::OuterScope);
}

std::vector<ValueId> GraphBuilder::node(const std::string& opType,
                                        const std::vector<ValueId>& inputs,
                                        const std::vector<std::string>& outputNames,
                                        std::vector<Attribute> attributes, std::string name,
                                        std::string domain) {
    Node n;
    n.opType = opType;
    n.domain = std::move(domain);
    n.name = name.empty() ? opType + "_" + std::to_string(m_graph->nodeCount()) : std::move(name);
    n.scope = scopeFromName(n.name);
    n.inputs = inputs;
    for (const std::string& out : outputNames)
        n.outputs.push_back(out.empty() ? ValueId() : fresh(out, Value::Kind::NodeOutput));
    n.attributes = std::move(attributes);
    std::vector<ValueId> outputs = n.outputs;
    m_graph->addNode(std::move(n));
    return outputs;
}

ValueId GraphBuilder::op(const std::string& opType, const std::vector<ValueId>& inputs,
                         const std::string& outputName, std::vector<Attribute> attributes,
                         std::string name) {
    return node(opType, inputs, {outputName}, std::move(attributes), std::move(name))[0];
}

void GraphBuilder::output(ValueId value, ValueType type) {
    if (type.isKnown()) m_graph->value(value).type = std::move(type);
    m_graph->outputs.push_back(value);
}

Model GraphBuilder::buildModel(int64_t opset, int64_t irVersion) {
    Model m;
    m.irVersion = irVersion;
    m.opsetImports.emplace_back("", opset);
    m.producerName = "fusescope";
    m.producerVersion = "graph-builder";
    m.graph = m_graph;
    return m;
}

}  // namespace fsc
