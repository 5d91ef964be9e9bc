// Latency and weight bytes of a model's INT8 and float16 graphs against its float32 graph
// (all at O2), measured in this process on the same inputs, runs interleaved so that load
// on the machine hits all alike. Prints ratios to the float32 run. --reduce-range adds an INT8
// graph of 7-bit weights (`--reduce-range`), with its accuracy against float32 beside each.
//   bench_quantized MODEL [--iterations N] [--per-channel] [--reduce-range]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "compiler/target.h"
#include "compiler/pass_manager.h"
#include "compiler/runtime/thread_pool.h"
#include "compiler/pass_registry.h"
#include "compiler/passes/passes.h"
#include "compiler/pipelines.h"
#include "compiler/quantization/accuracy.h"
#include "compiler/quantization/calibration_data.h"
#include "compiler/runtime/executor.h"
#include "core/onnx_import.h"
#include "tests/bench/bench_timing.h"

using namespace fsc;
using bench::median;

namespace {

// O2 at the given precision, the passes placed by buildPipeline as the CLI places them.
std::vector<std::unique_ptr<Pass>> o2At(Precision precision, const Int8Options& int8 = {}) {
    PipelineSpec spec;
    spec.passes = *pipelinePasses("O2");
    spec.precision = precision;
    spec.int8 = int8;
    return std::move(*buildPipeline(spec));
}

double weightBytes(const Graph& g) {
    double b = 0;
    for (ValueId id : g.initializers)
        if (g.value(id).initializer) b += double(g.value(id).initializer->numElements()) * dtypeBits(g.value(id).initializer->dtype()) / 8;
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_quantized MODEL [--iterations N] [--per-channel] [--reduce-range]\n");
        return 64;
    }
    int iterations = 10;
    bool perChannel = false, reduceRange = false;
    for (int i = 2; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--per-channel")) perChannel = true;
        else if (!std::strcmp(argv[i], "--reduce-range")) reduceRange = true;
    }
    auto model = importModel(argv[1]);
    if (!model) {
        std::fprintf(stderr, "error: %s\n", model.status().message().c_str());
        return 2;
    }
    CompileOptions options;
    options.keepSnapshots = false;
    Int8Options int8;
    int8.perChannel = perChannel;
    int8.calibration = std::make_shared<CalibrationData>(generateCalibrationData(*model->graph, 8, 1));
    struct Variant {
        const char* name;
        std::vector<std::unique_ptr<Pass>> passes;
        std::unique_ptr<Executor> exec;
        std::vector<double> ms;
        double weights = 0;
        std::optional<Model> compiled;
    };
    std::vector<Variant> variants;
    variants.push_back({"float32", o2At(Precision::Float32), {}, {}, 0});
    variants.push_back({"int8", o2At(Precision::Int8, int8), {}, {}, 0});
    if (reduceRange) {
        Int8Options int8Narrow = int8;
        int8Narrow.reduceRange = true;
        variants.push_back({"int8-7bit", o2At(Precision::Int8, int8Narrow), {}, {}, 0});
    }
    variants.push_back({"float16", o2At(Precision::Float16), {}, {}, 0});
    const ExecutorOptions exec = cpuExecutorOptions(ThreadPool::kAutomatic);
    for (Variant& v : variants) {
        auto compiled = compileModel(*model, std::move(v.passes), options);
        if (!compiled) {
            std::fprintf(stderr, "error: %s: %s\n", v.name, compiled.status().message().c_str());
            return 2;
        }
        v.weights = weightBytes(*compiled->model.graph);
        v.compiled = compiled->model;
        auto e = Executor::create(compiled->model, exec);
        if (!e) {
            std::fprintf(stderr, "error: %s: %s\n", v.name, e.status().message().c_str());
            return 2;
        }
        v.exec = std::move(*e);
    }
    const CalibrationData input = generateCalibrationData(*model->graph, 1, 99);
    for (int it = -1; it < iterations; ++it)  // the first round warms up
        for (Variant& v : variants) {
            const auto start = std::chrono::steady_clock::now();
            auto out = v.exec->run(input.samples[0]);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            if (!out) {
                std::fprintf(stderr, "error: %s: %s\n", v.name, out.status().message().c_str());
                return 2;
            }
            if (it >= 0) v.ms.push_back(ms);
        }
    const double base = median(variants[0].ms);
    std::printf("%s: %d interleaved runs each, %d threads, int8 weights %s\n", argv[1], iterations, exec.threads,
                perChannel ? "per channel" : "per tensor");
    // Accuracy on samples the calibration did not see (generated: no labels, so top-1 is
    // agreement with float32, not correctness).
    const CalibrationData held = generateCalibrationData(*model->graph, 8, 7);
    for (const Variant& v : variants) {
        std::printf("  %-9s median %9.2f ms  (x%.2f of float32)   weights %8.1f MB  (x%.2f)", v.name, median(v.ms),
                    median(v.ms) / base, v.weights / 1e6, v.weights / variants[0].weights);
        if (&v != &variants[0]) {
            auto error = compareOutputs(*variants[0].compiled, *v.compiled, held);
            if (!error) {
                std::fprintf(stderr, "error: %s: %s\n", v.name, error.status().message().c_str());
                return 2;
            }
            std::printf("   cosine %.5f", error->cosine);
            if (error->top1Rows) std::printf(", top-1 %d/%d", error->top1Agree, error->top1Rows);
        }
        std::printf("\n");
    }
    return 0;
}
