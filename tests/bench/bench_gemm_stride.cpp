// sgemm with a constant B read as stored against B kept with unaliasedStride() between its
// rows (what MatMul and Gemm do, relaid_constant.h), on the transformer shapes where the
// stored rows are a multiple of 4 KiB apart, and one where they are not (the control: the
// same stride both ways). B rotates over several copies, as a model's weights come from
// memory, and the two layouts alternate so a busy moment hurts both.
//
//   bench_gemm_stride [--threads N] [--repeats R] [--copies C]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/runtime/thread_pool.h"
#include "tests/bench/bench_timing.h"

namespace {

using fsc::bench::median;
using fsc::bench::nowMs;

struct Shape {
    const char* what;
    int64_t m, k, n;
};

}  // namespace

int main(int argc, char** argv) {
    int threads = 2, repeats = 10, copies = 8;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--threads") threads = std::atoi(argv[i + 1]);
        else if (flag == "--repeats") repeats = std::atoi(argv[i + 1]);
        else if (flag == "--copies") copies = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: bench_gemm_stride [--threads N] [--repeats R] [--copies C]\n");
            return 64;
        }
    }
    fsc::ThreadPool pool(std::max(1, threads));
    pool.applyToCallingThread();
    const Shape shapes[] = {
        {"ViT-B/16 MLP in (197x768x3072)", 197, 768, 3072},
        {"BERT-large MLP in (128x1024x4096)", 128, 1024, 4096},
        {"197x768x1024", 197, 768, 1024},
        {"control: ViT MLP out (197x3072x768)", 197, 3072, 768},
    };
    std::printf("%d thread(s), %d repeats over %d copies of B; ratio = unaliased / as stored\n", threads, repeats,
                copies);
    for (const Shape& s : shapes) {
        const int64_t ld = fsc::cpu::unaliasedStride(s.n);
        std::vector<std::vector<float>> stored(static_cast<size_t>(copies)), padded(static_cast<size_t>(copies));
        for (int c = 0; c < copies; ++c) {
            stored[size_t(c)].resize(size_t(s.k * s.n));
            padded[size_t(c)].assign(size_t(s.k * ld), 0.f);
            for (size_t i = 0; i < stored[size_t(c)].size(); ++i) stored[size_t(c)][i] = float((i * 7 + size_t(c)) % 13) * 0.01f;
            for (int64_t r = 0; r < s.k; ++r)
                std::memcpy(padded[size_t(c)].data() + r * ld, stored[size_t(c)].data() + r * s.n, size_t(s.n) * sizeof(float));
        }
        std::vector<float> a(size_t(s.m * s.k), 0.5f), c1(size_t(s.m * s.n)), c2(size_t(s.m * s.n));
        std::vector<double> asStored, unaliased;
        // One untimed call each: oneDNN generates its kernels on the first.
        fsc::cpu::gemm(false, false, s.m, s.n, s.k, 1.f, a.data(), s.k, stored[0].data(), s.n, 0.f, c1.data(), s.n);
        fsc::cpu::gemm(false, false, s.m, s.n, s.k, 1.f, a.data(), s.k, padded[0].data(), ld, 0.f, c2.data(), s.n);
        for (int r = 0; r < repeats; ++r)
            for (int c = 0; c < copies; ++c) {
                double t0 = nowMs();
                fsc::cpu::gemm(false, false, s.m, s.n, s.k, 1.f, a.data(), s.k, stored[size_t(c)].data(), s.n, 0.f,
                               c1.data(), s.n);
                asStored.push_back(nowMs() - t0);
                t0 = nowMs();
                fsc::cpu::gemm(false, false, s.m, s.n, s.k, 1.f, a.data(), s.k, padded[size_t(c)].data(), ld, 0.f,
                               c2.data(), s.n);
                unaliased.push_back(nowMs() - t0);
            }
        for (size_t i = 0; i < c1.size(); ++i)  // the blocking may differ: not bit for bit
            if (std::abs(c1[i] - c2[i]) > 1e-5f * (1.f + std::abs(c1[i]))) {
                std::fprintf(stderr, "%s: the two layouts gave different products (%g, %g)\n", s.what, c1[i], c2[i]);
                return 1;
            }
        const double a1 = median(asStored), a2 = median(unaliased);
        std::printf("%-38s ld %5lld -> %5lld   %7.3f ms -> %7.3f ms   x%.2f\n", s.what, (long long)s.n, (long long)ld,
                    a1, a2, a2 / a1);
    }
    return 0;
}
