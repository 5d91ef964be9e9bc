// Our Winograd convolutions, F(2x2, 3x3) and F(4x4, 3x3), against oneDNN's kernel for the
// same 3x3 layer (NHWC in and out, bias and ReLU inside, weights kept between calls), on
// ResNet-50's 3x3 layers and a few wider and narrower ones. Alternating, same threads; prints
// the median of each, the ratios to oneDNN's, and each result's largest difference from
// oneDNN's relative to the largest output. oneDNN takes its own Winograd kernel where it has
// one (AVX-512), so run it under `tests/bench/cpu_as.sh BUILD avx2` (or with
// ONEDNN_MAX_CPU_ISA=AVX2) to see what an AVX2 machine gets, where our route is taken.
//
//   bench_winograd [--threads N] [--repeats R] [--only TEXT]   (TEXT: part of a layer's name)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "compiler/backends/cpu/conv_onednn.h"
#include "compiler/backends/cpu/conv_winograd.h"
#include "compiler/runtime/rt_tensor.h"
#include "compiler/runtime/thread_pool.h"
#include "tests/bench/bench_timing.h"

using namespace fsc;
using bench::median;
using bench::nowMs;

namespace {

struct Layer {
    const char* what;
    int64_t side, c, k;
};

RtTensor randomTensor(std::vector<int64_t> dims, std::mt19937& rng, float scale) {
    RtTensor t = allocateTensor(DType::Float32, std::move(dims));
    std::uniform_real_distribution<float> u(-scale, scale);
    for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = u(rng);
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 2, repeats = 20;
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
            std::fprintf(stderr,
                         "usage: bench_winograd [--threads N] [--repeats R] [--only TEXT]\n");
            return 2;
        }
    }
    const Layer layers[] = {
        {"resnet50 layer1 56x56 64", 56, 64, 64},
        {"resnet50 layer2 28x28 128", 28, 128, 128},
        {"resnet50 layer3 14x14 256", 14, 256, 256},
        {"resnet50 layer4 7x7 512", 7, 512, 512},
        {"unet 112x112 64", 112, 64, 64},
        {"unet 224x224 32", 224, 32, 32},
        {"narrow 56x56 16", 56, 16, 16},
        {"wide 28x28 256 to 512", 28, 256, 512},
    };
    ThreadPool pool(threads);
    pool.applyToCallingThread();
    std::mt19937 rng(7);
    cpu::Activation relu;
    relu.kind = cpu::Activation::Kind::Relu;
    std::printf("%d thread(s); our route is taken here: %s\n", threads,
                cpu::WinogradConv::tileFor({1, 64, 56, 56, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1}, 64, 1)
                    ? "yes"
                    : "no");
    std::printf("%-28s %10s %10s %10s %8s %8s %10s %10s\n", "layer", "oneDNN ms", "F2x2 ms",
                "F4x4 ms", "F2/dnn", "F4/dnn", "F2 error", "F4 error");
    for (const Layer& l : layers) {
        if (!only.empty() && std::string(l.what).find(only) == std::string::npos) continue;
        const RtTensor x = randomTensor({1, l.side, l.side, l.c}, rng, 1.f);
        const RtTensor w = randomTensor({l.k, l.c, 3, 3}, rng, 1.f / std::sqrt(float(9 * l.c)));
        const RtTensor b = randomTensor({l.k}, rng, 0.1f);
        RtTensor reference = allocateTensor(DType::Float32, {1, l.side, l.side, l.k});
        RtTensor ours[2] = {allocateTensor(DType::Float32, {1, l.side, l.side, l.k}),
                            allocateTensor(DType::Float32, {1, l.side, l.side, l.k})};
        cpu::ConvGeometry g;
        g.in = {l.side, l.side};
        g.kernel = {3, 3};
        g.strides = {1, 1};
        g.dilations = {1, 1};
        g.padBegin = {1, 1};
        g.out = {l.side, l.side};
        g.channels = l.c;
        cpu::OneDnnConv direct;
        direct.setActivation(relu);
        cpu::WinogradConv wino[2];
        const cpu::NhwcWindow s{1, l.c, l.side, l.side, l.side, l.side, 3, 3, 1, 1, 1, 1, 1, 1};
        std::vector<double> times[3];
        for (int r = 0; r < repeats + 2; ++r) {  // the first two make primitives and weights
            const double t0 = nowMs();
            if (!direct.run(g, 1, x, w, &b, nullptr, true, true, true, reference).ran) {
                std::fprintf(stderr, "oneDNN has no kernel for %s\n", l.what);
                return 1;
            }
            if (r >= 2) times[0].push_back(nowMs() - t0);
            for (int f = 0; f < 2; ++f) {
                const double t1 = nowMs();
                if (!wino[f].run(pool, s, l.k, f ? 4 : 2, x.as<float>(), w.as<float>(), true,
                                 b.as<float>(), nullptr, ours[f].as<float>(), relu)) {
                    std::fprintf(stderr, "this CPU has no AVX2 and FMA: nothing to compare\n");
                    return 0;
                }
                if (r >= 2) times[1 + f].push_back(nowMs() - t1);
            }
        }
        double largest = 0, error[2] = {0, 0};
        for (int64_t i = 0; i < reference.numel(); ++i) {
            largest = std::max(largest, double(std::abs(reference.as<float>()[i])));
            for (int f = 0; f < 2; ++f)
                error[f] = std::max(
                    error[f], double(std::abs(ours[f].as<float>()[i] - reference.as<float>()[i])));
        }
        const double dnn = median(times[0]), f2 = median(times[1]), f4 = median(times[2]);
        std::printf("%-28s %10.3f %10.3f %10.3f %7.2fx %7.2fx %10.2e %10.2e\n", l.what, dnn, f2, f4,
                    f2 / dnn, f4 / dnn, error[0] / largest, error[1] / largest);
    }
    return 0;
}
