#include "compiler/backends/cuda/nvrtc_compiler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/fnv1a.h"

namespace fsc {
namespace {

// NVRTC's C API, declared here so that no toolkit header is needed to build: an opaque
// program handle and int results (0 is NVRTC_SUCCESS).
using Program = struct NvrtcProgramOpaque*;
struct Api {
    int (*version)(int*, int*) = nullptr;
    int (*createProgram)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
    int (*compileProgram)(Program, int, const char* const*) = nullptr;
    int (*getPTXSize)(Program, size_t*) = nullptr;
    int (*getPTX)(Program, char*) = nullptr;
    int (*getProgramLogSize)(Program, size_t*) = nullptr;
    int (*getProgramLog)(Program, char*) = nullptr;
    int (*destroyProgram)(Program*) = nullptr;
    const char* (*getErrorString)(int) = nullptr;
    std::string whyMissing;
    bool loaded() const { return compileProgram != nullptr; }
};

// libnvrtc opens libnvrtc-builtins.so.X.Y by name when it compiles, which fails where the
// toolkit's folder is not on the loader's path (a toolkit installed without an ld.so.conf
// entry, as on a fresh machine). Loading it first from libnvrtc's own folder satisfies that
// lookup: the loader matches an already loaded library by its soname.
void preloadBuiltins(void* nvrtc) {
    char origin[4096] = {};
    if (dlinfo(nvrtc, RTLD_DI_ORIGIN, origin) != 0) return;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(origin, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("libnvrtc-builtins.so.", 0) == 0 && dlopen(entry.path().c_str(), RTLD_NOW | RTLD_GLOBAL)) return;
    }
}

const Api& api() {
    static Api a;
    static std::once_flag once;
    std::call_once(once, [] {
        std::vector<std::string> names;
        if (const char* path = std::getenv("FUSESCOPE_NVRTC")) names.push_back(path);
        for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13",
                              "/usr/local/cuda/lib64/libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"})
            names.push_back(n);
        void* lib = nullptr;
        for (const std::string& name : names)
            if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
        if (!lib) {
            a.whyMissing = "NVRTC (libnvrtc.so) was not found: install the CUDA toolkit or set FUSESCOPE_NVRTC";
            return;
        }
        preloadBuiltins(lib);
        auto load = [&](auto& fn, const char* symbol) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
            return fn != nullptr;
        };
        const bool ok = load(a.version, "nvrtcVersion") && load(a.createProgram, "nvrtcCreateProgram") &&
                        load(a.getPTXSize, "nvrtcGetPTXSize") && load(a.getPTX, "nvrtcGetPTX") &&
                        load(a.getProgramLogSize, "nvrtcGetProgramLogSize") && load(a.getProgramLog, "nvrtcGetProgramLog") &&
                        load(a.destroyProgram, "nvrtcDestroyProgram") && load(a.getErrorString, "nvrtcGetErrorString") &&
                        load(a.compileProgram, "nvrtcCompileProgram");
        if (!ok) {
            a.compileProgram = nullptr;
            a.whyMissing = "the NVRTC library found lacks the functions Fusescope needs";
        }
    });
    return a;
}

std::filesystem::path defaultCacheDir() {
    if (const char* dir = std::getenv("FUSESCOPE_KERNEL_CACHE"); dir && *dir) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "fusescope" / "kernels";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".cache" / "fusescope" / "kernels";
    return std::filesystem::temp_directory_path() / "fusescope-kernels";
}

}  // namespace

NvrtcCompiler::NvrtcCompiler(std::filesystem::path cacheDir)
    : m_cacheDir(cacheDir.empty() ? defaultCacheDir() : std::move(cacheDir)) {}

bool NvrtcCompiler::available(std::string* why) {
    if (!api().loaded() && why) *why = api().whyMissing;
    return api().loaded();
}

std::string NvrtcCompiler::version() {
    if (!api().loaded()) return {};
    int major = 0, minor = 0;
    api().version(&major, &minor);
    return std::to_string(major) + "." + std::to_string(minor);
}

Result<PtxKernel> NvrtcCompiler::compile(const std::string& name, const std::string& source, const std::string& arch) const {
    std::string why;
    if (!available(&why)) return Status(ErrorCode::Unsupported, why);
    std::vector<std::string> options = {"--gpu-architecture=" + arch, "--std=c++17", "-default-device"};
    // The toolkit's headers (cuda_fp16.h, cuda_bf16.h) when NVRTC does not carry them built in.
    if (std::filesystem::exists("/usr/local/cuda/include/cuda_fp16.h")) options.push_back("-I/usr/local/cuda/include");
    std::string key = source + "|" + version();
    for (const std::string& o : options) key += "|" + o;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(key)));

    PtxKernel out;
    out.name = name;
    out.cacheFile = m_cacheDir / (name + "-" + arch + "-" + hash + ".ptx");
    if (std::ifstream cached{out.cacheFile, std::ios::binary}) {
        std::ostringstream text;
        text << cached.rdbuf();
        out.ptx = text.str();
        if (!out.ptx.empty()) {
            out.fromCache = true;
            return out;
        }
    }

    const Api& a = api();
    Program program = nullptr;
    if (int rc = a.createProgram(&program, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr); rc != 0)
        return Status(ErrorCode::Internal, name + ": NVRTC could not create the program: " + a.getErrorString(rc));
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    const int rc = a.compileProgram(program, int(argv.size()), argv.data());
    size_t logSize = 0;
    a.getProgramLogSize(program, &logSize);
    out.log.assign(logSize, '\0');
    if (logSize) a.getProgramLog(program, out.log.data());
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
    if (rc != 0) {
        a.destroyProgram(&program);
        std::string log = out.log;  // an error is one line: the log's lines joined
        for (char& c : log)
            if (c == '\n' || c == '\r') c = ' ';
        return Status(ErrorCode::Internal, name + ": NVRTC " + version() + " rejected the generated kernel (" +
                                               a.getErrorString(rc) + "): " + log);
    }
    size_t ptxSize = 0;
    a.getPTXSize(program, &ptxSize);
    out.ptx.assign(ptxSize, '\0');
    a.getPTX(program, out.ptx.data());
    a.destroyProgram(&program);
    while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();

    // Written to a temporary name first: a reader never sees half a file.
    std::error_code ec;
    std::filesystem::create_directories(m_cacheDir, ec);
    const std::filesystem::path temp = out.cacheFile.string() + ".tmp" + std::to_string(::getpid());
    if (std::ofstream file{temp, std::ios::binary}; file && file.write(out.ptx.data(), std::streamsize(out.ptx.size())))
        std::filesystem::rename(temp, out.cacheFile, ec);
    return out;
}

}  // namespace fsc
