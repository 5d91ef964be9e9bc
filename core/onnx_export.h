#pragma once
// ONNX export: IR -> ModelProto -> file. Importing the result gives the same graph.
#include <filesystem>
#include <string>

#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct ExportOptions {
    // Initializers of at least this many bytes go to `<model file>.data` beside the model.
    // By default only models too big for one protobuf (2 GB) use external data.
    enum class ExternalData { Auto, Always, Never };
    ExternalData externalData = ExternalData::Auto;
    size_t externalThresholdBytes = 1024;
};

Result<std::string> exportModelToBytes(const Model& model);
Status exportModel(const Model& model, const std::filesystem::path& path,
                   const ExportOptions& options = {});

}  // namespace fsc
