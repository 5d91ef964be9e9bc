// The measurement behind the CPU backend's BLAS choice: single-precision GEMM on the
// shapes that dominate BERT-base (seq 128) and ResNet-50 (im2col and pointwise layers),
// OpenBLAS against oneDNN in the same process, same threads. Prints oneDNN's time over
// OpenBLAS's per shape. Built only where OpenBLAS is installed (it is not a dependency).
//
//   bench_gemm_libraries [--threads N] [--repeats N]
#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

double medianMs(int repeats, const auto& fn) {
    for (int i = 0; i < 3; ++i) fn();
    std::vector<double> samples;
    for (int i = 0; i < repeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        fn();
        samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

struct Shape {
    const char* where;
    int m, n, k;
    bool transB;
};

}  // namespace

int main(int argc, char** argv) {
    int threads = 1, repeats = 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--threads")) threads = std::stoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--repeats")) repeats = std::stoi(argv[i + 1]);
    }
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
    const Shape shapes[] = {
        {"BERT QKV projection", 128, 2304, 768, true},  {"BERT attention out", 128, 768, 768, false},
        {"BERT FFN up", 128, 3072, 768, false},          {"BERT FFN down", 128, 768, 3072, false},
        {"BERT scores Q.K^T (per head)", 128, 128, 64, true}, {"BERT context P.V (per head)", 128, 64, 128, false},
        {"ResNet 3x3 conv im2col, 56x56", 64, 3136, 576, false}, {"ResNet 1x1 conv, 56x56", 256, 3136, 64, false},
        {"ResNet 1x1 conv, 7x7", 512, 49, 2048, false}, {"classifier, batch 1", 1, 1000, 2048, true},
    };
    std::printf("threads %d, median of %d\n%-34s %6s %6s %6s %12s %12s %8s\n", threads, repeats, "shape", "M", "N",
                "K", "OpenBLAS ms", "oneDNN ms", "ratio");
    for (const Shape& s : shapes) {
        std::vector<float> a(size_t(s.m) * s.k, 0.25f), b(size_t(s.k) * s.n, 0.5f), c(size_t(s.m) * s.n);
        const int ldb = s.transB ? s.k : s.n;
        const double openblas = medianMs(repeats, [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, s.transB ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.f,
                        a.data(), s.k, b.data(), ldb, 0.f, c.data(), s.n);
        });
        const double onednn = medianMs(repeats, [&] {
            dnnl_sgemm('N', s.transB ? 'T' : 'N', s.m, s.n, s.k, 1.f, a.data(), s.k, b.data(), ldb, 0.f, c.data(), s.n);
        });
        std::printf("%-34s %6d %6d %6d %12.3f %12.3f %7.2fx\n", s.where, s.m, s.n, s.k, openblas, onednn,
                    onednn / openblas);
    }
    return 0;
}
