#include "app/reports/summary_json.h"

namespace fsc {
namespace {

// Known dims as numbers, symbolic dims as their name, unknown dims as null; an unknown
// rank makes the whole shape null.
nlohmann::json shapeToJson(const Shape& shape) {
    if (!shape.rankKnown()) return nullptr;
    nlohmann::json dims = nlohmann::json::array();
    for (const Dim& d : shape.dims()) {
        if (d.isKnown()) dims.push_back(d.size());
        else if (d.isSymbolic()) dims.push_back(d.symbol());
        else dims.push_back(nullptr);
    }
    return dims;
}

nlohmann::json portToJson(const ModelSummary::Port& port) {
    const ValueType& t = port.type;
    const bool tensorLike =
        t.kind == ValueType::Kind::Tensor || t.kind == ValueType::Kind::SparseTensor;
    nlohmann::json j;
    j["name"] = port.name;
    j["dtype"] = tensorLike && t.elemType != DType::Undefined
                     ? nlohmann::json(std::string(dtypeName(t.elemType)))
                     : nlohmann::json(nullptr);
    j["shape"] = tensorLike ? shapeToJson(t.shape) : nlohmann::json(nullptr);
    j["type"] = t.toString();
    return j;
}

}  // namespace

nlohmann::json summaryToJson(const ModelSummary& s, const std::string& file) {
    nlohmann::json j;
    j["schema"] = kInspectSchema;
    j["file"] = file;
    j["ir_version"] = s.irVersion;
    j["opsets"] = nlohmann::json::array();
    for (const auto& [domain, version] : s.opsets)
        j["opsets"].push_back({{"domain", domain.empty() ? "ai.onnx" : domain}, {"version", version}});
    j["producer"] = {{"name", s.producerName}, {"version", s.producerVersion}};
    j["inputs"] = nlohmann::json::array();
    for (const auto& p : s.inputs) j["inputs"].push_back(portToJson(p));
    j["outputs"] = nlohmann::json::array();
    for (const auto& p : s.outputs) j["outputs"].push_back(portToJson(p));
    j["nodes"] = {{"top_level", s.nodeCount}, {"total", s.totalNodeCount}};
    j["op_histogram"] = nlohmann::json::object();
    for (const auto& [op, count] : s.opHistogram) j["op_histogram"][op] = count;
    j["parameters"] = {{"count", s.parameterCount},
                       {"bytes", s.parameterBytes},
                       {"initializers", s.initializerCount},
                       {"constant_nodes", s.constantNodeCount}};
    j["subgraphs"] = {{"count", s.subgraphCount}, {"max_depth", s.maxSubgraphDepth}};
    j["functions"] = s.functionCount;
    j["unknown_shape_values"] = s.unknownShapeValues;
    j["unknown_rank_values"] = s.unknownRankValues;
    j["unnamed_dim_values"] = s.unnamedDimValues;
    j["warnings"] = s.warnings;
    return j;
}

}  // namespace fsc
