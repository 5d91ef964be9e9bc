// Opens the device the CUDA backend runs on. The real device lives in a plugin,
// libfsc_cuda_device.so, built when the CUDA toolkit is found and linked against its
// libraries (cudart, cuBLASLt), so that fusescope-cli itself starts, and runs on the CPU,
// on machines without them. FUSESCOPE_DEVICE=simulated selects the simulated device.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "compiler/backends/cuda/device.h"
#include "compiler/backends/cuda/device_query.h"

namespace fsc {
namespace {

using CreateFn = int (*)(int index, CudaDevice** out, char* error, size_t errorBytes);

std::vector<std::filesystem::path> pluginCandidates() {
    std::vector<std::filesystem::path> paths;
    if (const char* env = std::getenv("FUSESCOPE_CUDA_PLUGIN")) paths.emplace_back(env);
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        paths.push_back(exe.parent_path() / "libfsc_cuda_device.so");
        paths.push_back(exe.parent_path() / "lib" / "libfsc_cuda_device.so");
        paths.push_back(exe.parent_path().parent_path() / "lib" / "libfsc_cuda_device.so");
        paths.push_back(exe.parent_path().parent_path() / "lib" / "fusescope" / "libfsc_cuda_device.so");
    }
#ifdef FSC_CUDA_PLUGIN_BUILD_PATH
    paths.emplace_back(FSC_CUDA_PLUGIN_BUILD_PATH);
#endif
    return paths;
}

}  // namespace

Result<std::shared_ptr<CudaDevice>> openCudaDevice() {
    if (const char* which = std::getenv("FUSESCOPE_DEVICE"); which && std::string(which) == "simulated")
        return makeSimulatedGpu();
    const CudaDeviceReport report = queryCudaDevices();
    if (!report.builtWithCuda)
        return Status(ErrorCode::Unsupported, "this build has no CUDA backend (built without the CUDA toolkit)");
    if (report.devices.empty()) return Status(ErrorCode::Unsupported, "no CUDA device (" + report.whyNone + ")");
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    std::string tried;
    for (const auto& path : pluginCandidates()) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) continue;
        void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = dlerror();
            return Status(ErrorCode::Unsupported, "cannot load the CUDA device plugin " + path.string() + ": " +
                                                      (why ? why : "unknown error") +
                                                      " (are the CUDA 13 libraries, cuBLASLt included, on the loader's path?)");
        }
        auto create = reinterpret_cast<CreateFn>(dlsym(lib, "fscCreateCudaDevice"));
        if (!create) return Status(ErrorCode::Unsupported, path.string() + " is not a Fusescope CUDA device plugin");
        CudaDevice* device = nullptr;
        char error[512] = {};
        if (create(0, &device, error, sizeof error) != 0 || !device)
            return Status(ErrorCode::Unsupported, error[0] ? error : "the CUDA device could not be opened");
        return std::shared_ptr<CudaDevice>(device);
    }
    return Status(ErrorCode::Unsupported, "the CUDA device plugin (libfsc_cuda_device.so) is not installed beside fusescope-cli");
}

}  // namespace fsc
