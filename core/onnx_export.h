#pragma once
// ONNX export: IR -> ModelProto -> file. Importing the result gives the same graph.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include "core/graph.h"
#include "core/status.h"

namespace fsc {

// One weights file that many exports point into, each tensor written once: compile
// --dump-dir's graph after every pass shares its weights instead of copying them per pass.
// A tensor is known again by its storage (passes share unchanged initializers) or, failing
// that, by its bytes.
class SharedWeightsFile {
public:
    explicit SharedWeightsFile(std::filesystem::path path) : m_path(std::move(path)) {}
    const std::filesystem::path& path() const { return m_path; }
    // Where the tensor's bytes are in the file (offset, length), written now if new.
    Result<std::pair<uint64_t, uint64_t>> place(const Tensor& tensor);
    uint64_t bytesWritten() const { return m_size; }

private:
    std::filesystem::path m_path;
    std::ofstream m_out;
    uint64_t m_size = 0;
    std::map<std::pair<const void*, uint64_t>, uint64_t> m_byStorage;
    std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> m_byHash;  // (hash, length) -> offsets
};

struct ExportOptions {
    // Initializers of at least this many bytes go to `<model file>.data` beside the model.
    // By default only models too big for one protobuf (2 GB) use external data.
    enum class ExternalData { Auto, Always, Never };
    ExternalData externalData = ExternalData::Auto;
    size_t externalThresholdBytes = 1024;
    // When set, initializers of at least the threshold go to this file (in the model's own
    // folder) instead of `<model file>.data`.
    SharedWeightsFile* sharedWeights = nullptr;
};

Result<std::string> exportModelToBytes(const Model& model);
Status exportModel(const Model& model, const std::filesystem::path& path,
                   const ExportOptions& options = {});

}  // namespace fsc
