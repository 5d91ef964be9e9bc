#pragma once
// ONNX import: file -> validated, topologically sorted IR with inferred shapes.
// Every failure is one line: "<file>: <where>: <cause>".
#include <cstddef>
#include <filesystem>
#include <string>

#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct ImportOptions {
    bool inferShapes = true;
    // Subgraph nesting (If inside Loop inside ...) beyond this is refused as malformed.
    int maxSubgraphDepth = 20;
};

// The supported IR versions.
constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 10;

Result<Model> importModel(const std::filesystem::path& path, const ImportOptions& options = {});

// `displayName` names the model in messages; `baseDir` resolves external data (empty:
// external data is an error).
Result<Model> importModelFromBytes(const void* data, size_t size, const std::string& displayName,
                                   const std::filesystem::path& baseDir = {},
                                   const ImportOptions& options = {});

}  // namespace fsc
