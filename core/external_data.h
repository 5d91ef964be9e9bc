#pragma once
// Safe access to ONNX external data. A location must be relative, stay inside the
// model's folder after resolving symlinks, and the requested range must lie in the file.
#include <filesystem>
#include <map>
#include <string>

#include "core/buffer.h"
#include "core/status.h"

namespace fsc {

class ExternalDataResolver {
public:
    // `modelDir` empty: the model came from memory and external data cannot be resolved.
    explicit ExternalDataResolver(std::filesystem::path modelDir);

    // The mapped file for `location`, mapped once however many tensors share it.
    Result<BufferPtr> open(const std::string& location);

private:
    std::filesystem::path m_modelDir;
    std::filesystem::path m_canonicalDir;
    std::map<std::string, BufferPtr> m_files;
};

}  // namespace fsc
