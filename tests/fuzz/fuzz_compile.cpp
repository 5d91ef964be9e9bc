// libFuzzer target for the compiler: the bytes pick a random valid graph (random_graph.h)
// and a random order of passes. Every pass must leave a graph the verifier accepts; the
// compiled model must export to ONNX the checker accepts and import again; and on the CPU
// runtime it must compute what the graph as built computes, within float32 rounding (not
// compared after fp16, bf16 or INT8: see tolerance()). A pass
// may refuse a graph with a reason; anything else aborts with the graph's recipe.
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "compiler/pass_manager.h"
#include "compiler/runtime/executor.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/text_printer.h"
#include "random_graph.h"

using namespace fsc;

namespace {

std::string joined(const std::vector<std::string>& parts) {
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : ", ") + p;
    return s;
}

[[noreturn]] void finding(const fuzz::RandomModel& m, const std::vector<std::string>& passes, const std::string& what) {
    std::fprintf(stderr, "fuzz_compile: %s\n  graph: %s\n  passes: %s\n%s\n", what.c_str(), joined(m.steps).c_str(),
                 joined(passes).c_str(), printModel(m.model).c_str());
    std::abort();
}

// The same values for an input of the same name in both models.
Result<std::vector<RtTensor>> feedsFor(const Executor& exec, const std::map<std::string, int64_t>& symbolSizes) {
    std::vector<RtTensor> feeds;
    for (ValueId id : exec.feeds()) {
        const Value& v = exec.graph().value(id);
        if (v.type.elemType != DType::Float32) return Status(ErrorCode::Unsupported, "input " + v.name + " is not float32");
        std::vector<int64_t> dims;
        for (const Dim& d : v.type.shape.dims()) {
            auto it = symbolSizes.find(d.isSymbolic() ? d.symbol() : "");
            dims.push_back(d.isKnown() ? d.size() : it != symbolSizes.end() ? it->second : 1);
        }
        std::mt19937 rng(uint32_t(std::hash<std::string>()(v.name)));
        std::uniform_real_distribution<float> real(-1.0f, 1.0f);
        RtTensor x = allocateTensor(DType::Float32, dims);
        for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = real(rng);
        feeds.push_back(std::move(x));
    }
    return feeds;
}

Result<std::vector<RtTensor>> runOnCpu(const Model& model, const std::map<std::string, int64_t>& symbolSizes) {
    auto exec = Executor::create(model, {});
    if (!exec) return exec.status();
    auto feeds = feedsFor(**exec, symbolSizes);
    if (!feeds) return feeds.status();
    return (*exec)->run(std::move(*feeds));
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// How far the compiled model may drift from the built one, relative to the largest output.
// After fp16, bf16 or INT8 the outputs are not compared: in a random order those passes
// can run before the fusions, narrowing a written-out LayerNorm of nearly equal values,
// whose error then is as large as a wrong edge's. tst_precision_passes and
// tst_quantization measure their error on the orders the pipelines use.
double tolerance(const std::vector<std::string>& passes) {
    for (const char* narrowing : {"int8-quantization", "bf16-conversion", "fp16-conversion"})
        if (contains(passes, narrowing)) return INFINITY;
    return 1e-3;
}

void checkExport(const fuzz::RandomModel& m, const std::vector<std::string>& passes, const Model& compiled) {
    auto bytes = exportModelToBytes(compiled);
    if (!bytes) finding(m, passes, "the compiled model does not export: " + bytes.status().message());
    onnx::ModelProto proto;
    if (!proto.ParseFromString(*bytes)) finding(m, passes, "the exported bytes do not parse");
    try {
        onnx::checker::check_model(proto);
    } catch (const std::exception& e) {
        finding(m, passes, std::string("the ONNX checker refuses the compiled model: ") + e.what());
    }
    auto again = importModelFromBytes(bytes->data(), bytes->size(), "compiled.onnx");
    if (!again) finding(m, passes, "the compiled model does not import again: " + again.status().message());
}

void checkNumerics(const fuzz::RandomModel& m, const std::vector<std::string>& passes, const Model& compiled) {
    auto expected = runOnCpu(m.model, m.symbolSizes);
    if (!expected) finding(m, passes, "the graph as built does not run: " + expected.status().message());
    auto actual = runOnCpu(compiled, m.symbolSizes);
    if (!actual) finding(m, passes, "the compiled graph does not run: " + actual.status().message());
    if (actual->size() != expected->size()) finding(m, passes, "the compiled graph has another number of outputs");
    const double allowed = tolerance(passes);
    for (size_t o = 0; o < expected->size(); ++o) {
        const RtTensor &want = (*expected)[o], &got = (*actual)[o];
        if (want.dims != got.dims) finding(m, passes, "output " + std::to_string(o) + " has other dims");
        if (std::isinf(allowed)) continue;
        double diff = 0, scale = 1e-3;
        for (int64_t i = 0; i < want.numel(); ++i) {
            const double a = elementAsDouble(want, i), b = elementAsDouble(got, i);
            if (!std::isfinite(a)) continue;
            diff = std::max(diff, std::isfinite(b) ? std::abs(a - b) : INFINITY);
            scale = std::max(scale, std::abs(a));
        }
        if (diff > allowed * scale)
            finding(m, passes, "output " + std::to_string(o) + " differs by " + std::to_string(diff) + " (largest " +
                                   std::to_string(scale) + ", allowed " + std::to_string(allowed) + " of it)");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::ByteSource bytes(data, size);
    auto generated = fuzz::randomModel(bytes);
    if (!generated) {
        std::fprintf(stderr, "fuzz_compile: the generator built a graph ONNX refuses: %s\n",
                     generated.status().message().c_str());
        std::abort();
    }
    const std::vector<std::string> passes = fuzz::randomPassOrder(bytes);
    if (std::getenv("FSC_FUZZ_VERBOSE"))
        std::fprintf(stderr, "graph: %s\npasses: %s\n", joined(generated->steps).c_str(), joined(passes).c_str());
    CompileOptions options;
    options.verifyEachPass = true;
    auto compiled = compileModel(generated->model, passes, options);
    if (!compiled) {
        const Status& s = compiled.status();
        // A pass may refuse a graph (an order it does not support, say) with a reason; a graph
        // the verifier rejects or an internal error is a bug.
        if (s.code() == ErrorCode::Internal || s.message().find("after pass") != std::string::npos ||
            s.message().empty())
            finding(*generated, passes, "compile failed: " + s.message());
        if (std::getenv("FSC_FUZZ_VERBOSE")) std::fprintf(stderr, "refused: %s\n", s.message().c_str());
        return 0;
    }
    checkExport(*generated, passes, compiled->model);
    checkNumerics(*generated, passes, compiled->model);
    return 0;
}
