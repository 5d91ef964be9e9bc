#pragma once
// What this build is: Fusescope's version, the git commit it was built from, and the versions
// of the engine's libraries in use (ONNX, protobuf, oneDNN, SQLite, CUDA). `--version` of both
// programs and the GUI's About dialog print it.
#include <string>
#include <utility>
#include <vector>

namespace fsc {

struct BuildInfo {
    std::string version;  // "0.1.0"
    std::string commit;   // "04de65c1a2b3", "...-modified", or "unknown"
};

// Constants of this build: cheap.
BuildInfo buildInfo();

// {"oneDNN", "2.6.3"}, ...: asks the loaded libraries, the CUDA driver included when the
// build has CUDA, so call it when asked (--version, About), not at start-up.
std::vector<std::pair<std::string, std::string>> libraryVersions();

// "fusescope-cli 0.1.0 (commit 04de65c1a2b3)": the first line of --version.
std::string versionLine(const std::string& program);

// "ONNX 1.12.0, protobuf 3.21.12, ...": libraryVersions() on one line.
std::string librariesLine();

}  // namespace fsc
