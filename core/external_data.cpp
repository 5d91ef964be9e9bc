#include "core/external_data.h"

namespace fsc {
namespace fs = std::filesystem;

ExternalDataResolver::ExternalDataResolver(fs::path modelDir) : m_modelDir(std::move(modelDir)) {
    std::error_code ec;
    if (!m_modelDir.empty()) m_canonicalDir = fs::canonical(m_modelDir, ec);
}

Result<BufferPtr> ExternalDataResolver::open(const std::string& location) {
    auto cached = m_files.find(location);
    if (cached != m_files.end()) return cached->second;

    if (location.empty()) return invalidModel("external data with an empty location");
    if (location.find('\0') != std::string::npos)
        return invalidModel("external data location contains a NUL byte");
    fs::path relative(location);
    if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory())
        return invalidModel("external data location '" + location +
                            "' is absolute; only paths inside the model's folder are allowed");
    for (const fs::path& part : relative) {
        if (part == "..")
            return invalidModel("external data location '" + location +
                                "' escapes the model's folder with '..'");
    }
    if (m_canonicalDir.empty())
        return invalidModel("external data '" + location +
                            "' cannot be resolved: the model has no folder");

    fs::path full = m_modelDir / relative;
    std::error_code ec;
    if (!fs::exists(full, ec))
        return Status(ErrorCode::NotFound, "external data file '" + location + "' is missing");
    fs::path canonical = fs::canonical(full, ec);
    if (ec) return Status(ErrorCode::Io, "external data file '" + location + "': " + ec.message());
    // A symlink may point anywhere: compare the resolved path with the resolved folder.
    auto [dirEnd, _] = std::mismatch(m_canonicalDir.begin(), m_canonicalDir.end(),
                                     canonical.begin(), canonical.end());
    if (dirEnd != m_canonicalDir.end())
        return invalidModel("external data location '" + location +
                            "' resolves outside the model's folder (to " + canonical.string() +
                            ")");

    Result<BufferPtr> mapped = mapFile(canonical);
    if (!mapped) return mapped.status().withContext("external data file '" + location + "'");
    m_files.emplace(location, *mapped);
    return mapped;
}

}  // namespace fsc
