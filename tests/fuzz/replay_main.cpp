// Runs a libFuzzer target without libFuzzer, for builds made with GCC (the ASan preset):
// every file named on the command line, then --random N byte strings drawn from --seed S.
// A fixed seed makes the run the same every time; a finding aborts as under libFuzzer.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// A target may count what its inputs did and judge the run (fuzz_compile.cpp does).
extern "C" [[gnu::weak]] int FscFuzzSummary(long long inputs);

namespace {

// The input under test, written to ./fuzz-finding.bin when the target aborts or crashes, so the
// finding can be replayed and kept (tests/fuzz/compile_findings/).
const std::vector<uint8_t>* g_current = nullptr;

void saveFinding(int signal) {
    if (g_current) {
        const int fd = ::open("fuzz-finding.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            [[maybe_unused]] ssize_t n = ::write(fd, g_current->data(), g_current->size());
            ::close(fd);
        }
        static const char note[] = "the input was saved as fuzz-finding.bin\n";
        [[maybe_unused]] ssize_t n = ::write(2, note, sizeof note - 1);
    }
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

}  // namespace

int main(int argc, char** argv) {
    long long randomInputs = 0;
    unsigned long long seed = 20261124;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--random" || arg == "--seed") && i + 1 < argc) {
            char* end = nullptr;
            const unsigned long long n = std::strtoull(argv[++i], &end, 10);
            if (!end || *end) {
                std::fprintf(stderr, "usage: %s [--random N] [--seed S] [FILE...]\n", argv[0]);
                return 64;
            }
            if (arg == "--random") randomInputs = (long long)n;
            else seed = n;
        } else {
            files.push_back(arg);
        }
    }
    for (const std::string& path : files) {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "%s: cannot read\n", path.c_str());
            return 2;
        }
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        g_current = &bytes;
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    }
    for (int signal : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(signal, saveFinding);
    std::mt19937_64 rng(seed);
    for (long long i = 0; i < randomInputs; ++i) {
        std::vector<uint8_t> bytes(16 + rng() % 240);
        for (uint8_t& b : bytes) b = uint8_t(rng());
        g_current = &bytes;
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    }
    std::printf("%zu files and %lld random inputs (seed %llu): no finding\n", files.size(), randomInputs, seed);
    if (FscFuzzSummary) return FscFuzzSummary((long long)files.size() + randomInputs);
    return 0;
}
