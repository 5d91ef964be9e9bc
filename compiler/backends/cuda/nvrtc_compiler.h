#pragma once
// Compiles generated CUDA C++ to PTX with NVRTC at run time, and keeps the PTX on disk by a
// hash of the source, the options and the NVRTC version, so a kernel is compiled once per
// machine. NVRTC is loaded when first needed (dlopen), so binaries start, and everything
// but this works, on machines without the CUDA toolkit; compiling needs no GPU.
#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace fsc {

struct PtxKernel {
    std::string name;
    std::string ptx;
    std::string log;  // NVRTC's warnings, if any
    std::filesystem::path cacheFile;
    bool fromCache = false;
};

class NvrtcCompiler {
public:
    // `cacheDir` empty: $FUSESCOPE_KERNEL_CACHE, else $XDG_CACHE_HOME/fusescope/kernels, else
    // ~/.cache/fusescope/kernels.
    explicit NvrtcCompiler(std::filesystem::path cacheDir = {});

    // Whether NVRTC could be loaded, and if not, why (one line).
    static bool available(std::string* why = nullptr);
    static std::string version();  // "13.0", or "" without NVRTC

    // `arch` as NVRTC takes it: "compute_90" (H100/H200), "sm_90", ... A compile error
    // returns NVRTC's log in the message.
    Result<PtxKernel> compile(const std::string& name, const std::string& source,
                              const std::string& arch = "compute_90") const;

    const std::filesystem::path& cacheDir() const { return m_cacheDir; }

private:
    std::filesystem::path m_cacheDir;
};

}  // namespace fsc
