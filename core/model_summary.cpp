#include "core/model_summary.h"

namespace fsc {
namespace {

ModelSummary::Port portOf(const Value& v) {
    return {v.name, v.type};
}

void countTensor(const Tensor& t, ModelSummary& s) {
    s.parameterCount += t.numElements();
    s.parameterBytes += static_cast<int64_t>(t.byteSize());
}

// Constant's value may be given as a tensor or as the scalar/list shortcuts of opset 12.
void countConstant(const Node& n, ModelSummary& s) {
    for (const Attribute& a : n.attributes) {
        if (a.name == "value") countTensor(a.t, s);
        else if (a.name == "sparse_value") countTensor(a.sparse.values, s);
        else if (a.name == "value_float" || a.name == "value_int") {
            s.parameterCount += 1;
            s.parameterBytes += a.name == "value_float" ? 4 : 8;
        } else if (a.name == "value_floats") {
            s.parameterCount += static_cast<int64_t>(a.floats.size());
            s.parameterBytes += static_cast<int64_t>(a.floats.size() * 4);
        } else if (a.name == "value_ints") {
            s.parameterCount += static_cast<int64_t>(a.ints.size());
            s.parameterBytes += static_cast<int64_t>(a.ints.size() * 8);
        }
    }
}

bool shapeUnknown(const ValueType& t) {
    switch (t.kind) {
        case ValueType::Kind::Unknown: return true;
        case ValueType::Kind::Tensor:
        case ValueType::Kind::SparseTensor: return !t.shapeFullyKnown();
        default: return false;  // containers: their element shapes vary by design
    }
}

void noteUnknown(const ValueType& t, const std::string& name, ModelSummary& s) {
    if (!shapeUnknown(t)) return;
    s.unknownShapeValues.push_back(name);
    if (!t.isKnown() || !t.shape.rankKnown()) ++s.unknownRankValues;
    else ++s.unnamedDimValues;
}

void walk(const Graph& g, int depth, const std::string& path, ModelSummary& s) {
    s.totalNodeCount += g.nodeCount();
    for (ValueId id : g.initializers) {
        const Value& v = g.value(id);
        ++s.initializerCount;
        if (v.initializer) countTensor(*v.initializer, s);
        if (v.sparseInitializer) countTensor(v.sparseInitializer->values, s);
    }
    for (ValueId id : g.inputs)
        if (!g.value(id).initializer) noteUnknown(g.value(id).type, path + g.value(id).name, s);
    for (NodeId nid : g.order()) {
        const Node& n = g.node(nid);
        const bool defaultDomain = n.domain.empty() || n.domain == "ai.onnx";
        ++s.opHistogram[defaultDomain ? n.opType : n.domain + "::" + n.opType];
        if (n.opType == "Constant" && defaultDomain) {
            ++s.constantNodeCount;
            countConstant(n, s);
        }
        for (ValueId out : n.outputs)
            if (out.valid()) noteUnknown(g.value(out).type, path + g.value(out).name, s);
        for (const auto& sub : n.subgraphs()) {
            ++s.subgraphCount;
            s.maxSubgraphDepth = std::max(s.maxSubgraphDepth, depth + 1);
            walk(*sub, depth + 1, path + (n.name.empty() ? n.opType : n.name) + "/" + sub->name + ":", s);
        }
    }
}

}  // namespace

ModelSummary summarizeModel(const Model& model) {
    ModelSummary s;
    s.irVersion = model.irVersion;
    s.opsets = model.opsetImports;
    s.producerName = model.producerName;
    s.producerVersion = model.producerVersion;
    s.functionCount = model.functions.size();
    s.warnings = model.warnings;
    if (!model.graph) return s;
    const Graph& g = *model.graph;
    for (ValueId id : g.inputs)
        if (!g.value(id).initializer && !g.value(id).sparseInitializer)
            s.inputs.push_back(portOf(g.value(id)));
    for (ValueId id : g.outputs) s.outputs.push_back(portOf(g.value(id)));
    s.nodeCount = g.nodeCount();
    walk(g, 0, "", s);
    return s;
}

}  // namespace fsc
