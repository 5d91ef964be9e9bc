// Compile-time figures per model and pipeline: nodes before/after, the share of nodes cut,
// the pipeline's time (median of --repeats) and its ratio to importing the same file in
// this process (the reference), and the largest fused-op counts.
// usage: bench_compile [--repeats N] MODEL.onnx...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "compiler/pass_manager.h"
#include "compiler/runtime/memory_plan.h"
#include "compiler/pipelines.h"
#include "core/onnx_import.h"
#include "tests/bench/bench_timing.h"

using namespace fsc;
using bench::median;

namespace {

template <typename F>
double timeMs(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    int repeats = 5;
    std::vector<std::string> models;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
        else models.push_back(a);
    }
    if (models.empty()) {
        std::fprintf(stderr, "usage: bench_compile [--repeats N] MODEL.onnx...\n");
        return 64;
    }
    std::printf("%-26s %-4s %7s %7s %6s %10s %10s %8s %9s %9s %9s  fused ops\n", "model", "pipe", "before", "after",
                "cut", "compile ms", "import ms", "ratio", "arena MiB", "naive MiB", "bound MiB");
    for (const std::string& path : models) {
        std::vector<double> importTimes;
        Result<Model> model = Status(ErrorCode::Internal, "not imported");
        for (int r = 0; r < repeats; ++r) importTimes.push_back(timeMs([&] { model = importModel(path); }));
        if (!model) {
            std::fprintf(stderr, "error: %s\n", model.status().message().c_str());
            return 2;
        }
        const double importMs = median(importTimes);
        for (const char* level : {"O0", "O1", "O2", "O3"}) {
            const auto passes = *pipelinePasses(level);
            std::vector<double> times;
            Result<CompileResult> result = Status(ErrorCode::Internal, "not compiled");
            for (int r = 0; r < repeats; ++r) times.push_back(timeMs([&] { result = compileModel(*model, passes); }));
            if (!result) {
                std::fprintf(stderr, "error: %s\n", result.status().message().c_str());
                return 2;
            }
            std::map<std::string, int> fused;
            const Graph& g = *result->model.graph;
            for (NodeId id : g.order()) {
                const Node& n = g.node(id);
                if (n.domain == kFusescopeDomain || n.opType == "LayerNormalization" || n.opType == "Gemm")
                    fused[n.domain.empty() ? n.opType : n.opType]++;
            }
            std::string fusedText;
            for (const auto& [op, count] : fused) fusedText += op + "=" + std::to_string(count) + " ";
            const size_t before = model->graph->nodeCount(), after = g.nodeCount();
            const double ms = median(times);
            // The arena each pipeline's graph needs at batch 1, against the naive sum and
            // the lower bound.
            double arena = -1, naive = -1, bound = -1;
            if (auto lifetimes = computeLifetimes(g, bindAllSymbols(g, 1))) {
                const MemoryPlan plan = planMemory(std::move(*lifetimes));
                arena = double(plan.arenaBytes) / (1 << 20);
                naive = double(plan.naiveBytes) / (1 << 20);
                bound = double(plan.lowerBoundBytes) / (1 << 20);
            }
            std::printf("%-26s %-4s %7zu %7zu %5.1f%% %10.1f %10.1f %7.2fx %9.2f %9.2f %9.2f  %s\n",
                        path.substr(path.find_last_of('/') + 1).c_str(), level, before, after,
                        100.0 * double(before - after) / double(before), ms, importMs, ms / importMs, arena, naive,
                        bound, fusedText.c_str());
        }
    }
    return 0;
}
