#include "core/op_docs.h"

#include <onnx/defs/schema.h>

namespace fsc {

std::optional<OpDoc> findOpDoc(const std::string& domain, const std::string& opType, int64_t opsetVersion) {
    const std::string onnxDomain = domain == "ai.onnx" ? "" : domain;
    const int version = opsetVersion > 0 && opsetVersion < 100000 ? int(opsetVersion) : 100000;
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(opType, version, onnxDomain);
    if (!schema) return std::nullopt;
    OpDoc doc;
    doc.domain = onnxDomain;
    doc.opType = opType;
    doc.sinceVersion = schema->since_version();
    doc.deprecated = schema->deprecated();
    if (schema->doc()) doc.text = schema->doc();
    for (const auto& in : schema->inputs()) doc.inputs.push_back({in.GetName(), in.GetDescription(), in.GetTypeStr()});
    for (const auto& out : schema->outputs())
        doc.outputs.push_back({out.GetName(), out.GetDescription(), out.GetTypeStr()});
    for (const auto& [name, attribute] : schema->attributes())
        doc.attributes.push_back({name, attribute.description, onnx::AttributeProto_AttributeType_Name(attribute.type)});
    return doc;
}

}  // namespace fsc
