#pragma once
// Documentation of an op from ONNX's schema registry (the text ONNX's own docs are built
// from): what it computes, the opset version that defined it, and its inputs, outputs and
// attributes with their descriptions.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fsc {

struct OpDoc {
    struct Param {
        std::string name;
        std::string description;
        std::string type;  // a type constraint ("T") or an attribute's kind
    };
    std::string domain;  // "" for ai.onnx
    std::string opType;
    int sinceVersion = 0;
    std::string text;  // ONNX's description (Markdown)
    std::vector<Param> inputs, outputs, attributes;
    bool deprecated = false;
};

// The schema in force at `opsetVersion` of the domain, or nullopt when the registry has
// none (custom domains, ops newer than the imported opset).
std::optional<OpDoc> findOpDoc(const std::string& domain, const std::string& opType, int64_t opsetVersion);

}  // namespace fsc
