// The exact int8 GEMM routes for CPUs without VNNI, on the products of ResNet-50's and the
// ConvInteger segmentation model's convolutions (A the weights, B the im2col columns) and a
// BERT-base MatMul: A split into 7-bit halves for two oneDNN u8 x s8 GEMMs against both
// operands widened to int16 (our AVX2 kernel), alternating, same threads; and, with A halved
// to 7 bits (`--reduce-range` weights), the narrow kernel (A multiplied as bytes) against the
// widened one on that A. Prints the median of each, widened / split and narrow / widened,
// and gemmS8S8 as dispatched here. Where the CPU has AVX-VNNI, also our kernel of vpdpbusd
// (8-bit A, kept packed) against oneDNN's s8s8s32 GEMM with the same zero points and
// against its u8s8s32 GEMM without any (not the same product: the least oneDNN could take).
// Run it with ONEDNN_MAX_CPU_ISA=AVX2 to see oneDNN as an AVX2 machine would run it, and
// with AVX2_VNNI as an Intel client core (Alder Lake and later) would.
//
//   bench_int8_gemm [--threads N] [--repeats R] [--only TEXT]   (TEXT: part of a shape's name)
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/packed_rows_cache.h"
#include "tests/bench/bench_timing.h"

namespace {

using fsc::bench::median;
using fsc::bench::nowMs;

struct Shape {
    const char* what;
    int64_t m, n, k;
};

}  // namespace

int main(int argc, char** argv) {
    int threads = 2, repeats = 10;
    std::string only;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--threads")
            threads = std::max(1, std::atoi(argv[i + 1]));
        else if (flag == "--repeats")
            repeats = std::max(1, std::atoi(argv[i + 1]));
        else if (flag == "--only")
            only = argv[i + 1];
        else {
            std::fprintf(stderr, "usage: bench_int8_gemm [--threads N] [--repeats R] [--only TEXT]\n");
            return 64;
        }
    }
    {
        const int8_t one = 1;
        int32_t product = 0;
        if (!fsc::cpu::gemmS8S8ByWidening(false, false, 1, 1, 1, &one, 1, 0, &one, 1, 0, &product,
                                          1)) {
            std::printf("the widened kernel does not run here (it needs x86 with AVX2)\n");
            return 0;
        }
    }
    omp_set_num_threads(threads);
    const Shape shapes[] = {
        {"segmentation atrous 3x3, 64 ch, 128x128", 64, 16384, 576},
        {"segmentation stem 3x3 s2, 3->16, 512x512", 16, 262144, 27},
        {"resnet50 layer1 1x1, 64 ch, 56x56", 64, 3136, 64},
        {"resnet50 layer1 3x3, 64 ch, 56x56", 64, 3136, 576},
        {"resnet50 layer3 3x3, 256 ch, 14x14", 256, 196, 2304},
        {"resnet50 layer4 3x3, 512 ch, 7x7", 512, 49, 4608},
        {"resnet50 layer4 1x1, 512->2048, 7x7", 2048, 49, 512},
        {"BERT-base MatMul 128x768x768", 128, 768, 768},
        {"resnet50 fc at batch 1, 2048->1000", 1, 1000, 2048},
    };
    std::printf("%d thread(s), %d repeats; ratios: widened / split, narrow / widened, AVX-VNNI / oneDNN\n", threads, repeats);
    std::mt19937 rng(3);
    for (const Shape& s : shapes) {
        if (std::string(s.what).find(only) == std::string::npos) continue;
        std::vector<int8_t> a(size_t(s.m * s.k)), b(size_t(s.k * s.n));
        for (auto& v : a) v = int8_t(int(rng() % 256) - 128);
        for (auto& v : b) v = int8_t(int(rng() % 256) - 128);
        // The weights' own zero point, and uint8 activations' zero point shifted to int8.
        const int8_t aZero = 3, bZero = -128;
        std::vector<int8_t> a7(a.size());
        for (size_t i = 0; i < a.size(); ++i) a7[i] = int8_t(a[i] / 2);
        std::vector<int32_t> split(size_t(s.m * s.n)), widened(split.size()), onednn(split.size());
        std::vector<int32_t> narrow(split.size()), widened7(split.size());
        // A convolution's weights are packed once (PackedRowsCache), so these two keep A's.
        fsc::cpu::PackedRowsCache narrowRows, widenedRows;
        auto runSplit = [&] {
            fsc::cpu::gemmS8S8BySplitting(false, false, s.m, s.n, s.k, a.data(), s.k, aZero,
                                          b.data(), s.n, bZero, split.data(), s.n);
        };
        auto runWidened = [&] {
            fsc::cpu::gemmS8S8ByWidening(false, false, s.m, s.n, s.k, a.data(), s.k, aZero,
                                         b.data(), s.n, bZero, widened.data(), s.n);
        };
        auto runOneDnn = [&] {
            fsc::cpu::gemmS8S8(false, false, s.m, s.n, s.k, a.data(), s.k, aZero, b.data(), s.n,
                               bZero, onednn.data(), s.n);
        };
        auto runNarrow = [&] {
            fsc::cpu::gemmS8S8WithNarrowA(false, false, s.m, s.n, s.k, a7.data(), s.k, 0,
                                          b.data(), s.n, bZero, narrow.data(), s.n, &narrowRows);
        };
        auto runWidened7 = [&] {
            fsc::cpu::gemmS8S8ByWidening(false, false, s.m, s.n, s.k, a7.data(), s.k, 0,
                                         b.data(), s.n, bZero, widened7.data(), s.n, &widenedRows);
        };
        runSplit(), runWidened(), runOneDnn();  // oneDNN generates its kernels on the first call
        runNarrow(), runWidened7();
        std::vector<int32_t> vnni(split.size()), onednnS8(split.size()), onednnU8(split.size());
        std::vector<uint8_t> aShifted(a.size());
        for (size_t i = 0; i < a.size(); ++i) aShifted[i] = uint8_t(a[i] + 128);
        fsc::cpu::PackedRowsCache vnniRows;
        auto runVnni = [&] {
            return fsc::cpu::gemmS8S8WithAvxVnni(false, false, s.m, s.n, s.k, a.data(), s.k, aZero,
                                                 b.data(), s.n, bZero, vnni.data(), s.n, &vnniRows);
        };
        const int32_t noOffset = 0;
        auto runOneDnnS8 = [&] {
            dnnl_gemm_s8s8s32('N', 'N', 'F', s.m, s.n, s.k, 1.0f, a.data(), s.k, aZero, b.data(),
                              s.n, bZero, 0.0f, onednnS8.data(), s.n, &noOffset);
        };
        auto runOneDnnU8 = [&] {
            dnnl_gemm_u8s8s32('N', 'N', 'F', s.m, s.n, s.k, 1.0f, aShifted.data(), s.k, 0, b.data(),
                              s.n, 0, 0.0f, onednnU8.data(), s.n, &noOffset);
        };
        const bool hasVnni = runVnni();
        if (hasVnni) runOneDnnS8(), runOneDnnU8();
        std::vector<double> splitMs, widenedMs, onednnMs, narrowMs, widened7Ms, vnniMs, onednnS8Ms, onednnU8Ms;
        for (int r = 0; r < repeats; ++r) {
            double t0 = nowMs();
            runSplit();
            splitMs.push_back(nowMs() - t0);
            t0 = nowMs();
            runWidened();
            widenedMs.push_back(nowMs() - t0);
            t0 = nowMs();
            runOneDnn();
            onednnMs.push_back(nowMs() - t0);
            t0 = nowMs();
            runNarrow();
            narrowMs.push_back(nowMs() - t0);
            t0 = nowMs();
            runWidened7();
            widened7Ms.push_back(nowMs() - t0);
            if (!hasVnni) continue;
            t0 = nowMs();
            runVnni();
            vnniMs.push_back(nowMs() - t0);
            t0 = nowMs();
            runOneDnnS8();
            onednnS8Ms.push_back(nowMs() - t0);
            t0 = nowMs();
            runOneDnnU8();
            onednnU8Ms.push_back(nowMs() - t0);
        }
        if (split != widened || split != onednn || narrow != widened7 || (hasVnni && (vnni != split || onednnS8 != split))) {
            std::fprintf(stderr, "%s: the routes gave different products\n", s.what);
            return 1;
        }
        std::printf(
            "%-42s split %8.3f ms  widened %8.3f ms  x%.2f   gemmS8S8 as dispatched %8.3f ms\n"
            "%-42s 7-bit A, kept packed: widened %8.3f ms  narrow %8.3f ms  x%.2f\n",
            s.what, median(splitMs), median(widenedMs), median(widenedMs) / median(splitMs),
            median(onednnMs), "", median(widened7Ms), median(narrowMs),
            median(narrowMs) / median(widened7Ms));
        if (hasVnni)
            std::printf("%-42s AVX-VNNI kernel %8.3f ms  oneDNN s8s8s32 %8.3f ms  x%.2f   u8s8s32 without zero points %8.3f ms  x%.2f\n",
                        "", median(vnniMs), median(onednnS8Ms), median(vnniMs) / median(onednnS8Ms),
                        median(onednnU8Ms), median(vnniMs) / median(onednnU8Ms));
    }
    return 0;
}
