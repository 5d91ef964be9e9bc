#include "app/common/build_info.h"

#include "compiler/backends/cpu/onednn_version.h"
#include "compiler/backends/cuda/device_query.h"
#include "core/library_versions.h"
#include "fusescope_build_info.h"  // generated: FUSESCOPE_VERSION_STRING, FUSESCOPE_GIT_COMMIT
#include "profiler/run_store.h"

namespace fsc {
namespace {

// CUDA encodes 13.0 as 13000.
std::string cudaVersion(int encoded) {
    return std::to_string(encoded / 1000) + "." + std::to_string(encoded % 1000 / 10);
}

std::string cudaDescription() {
    const CudaDeviceReport cuda = queryCudaDevices();
    if (!cuda.builtWithCuda) return "not built in (CPU backend only)";
    std::string text = "runtime " + cudaVersion(cuda.runtimeVersion);
    text += cuda.driverVersion ? " (driver " + cudaVersion(cuda.driverVersion) + ")" : std::string(" (no driver)");
    return text;
}

}  // namespace

BuildInfo buildInfo() { return {FUSESCOPE_VERSION_STRING, FUSESCOPE_GIT_COMMIT}; }

std::vector<std::pair<std::string, std::string>> libraryVersions() {
    return {{"ONNX", onnxLibraryVersion()},
            {"protobuf", protobufLibraryVersion()},
            {"oneDNN", oneDnnVersion()},
            {"SQLite", sqliteLibraryVersion()},
            {"CUDA", cudaDescription()}};
}

std::string versionLine(const std::string& program) {
    const BuildInfo info = buildInfo();
    return program + " " + info.version + " (commit " + info.commit + ")";
}

std::string librariesLine() {
    std::string line;
    for (const auto& [name, version] : libraryVersions()) {
        if (!line.empty()) line += ", ";
        line += name + " " + version;
    }
    return line;
}

}  // namespace fsc
