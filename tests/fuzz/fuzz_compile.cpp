// libFuzzer target for the compiler: the bytes pick a random valid graph (random_graph.h)
// and a random order of passes. Every pass must leave a graph the verifier accepts; the
// compiled model must export to ONNX the checker accepts and import again; and on the CPU
// runtime it must compute what the graph as built computes: within float32 rounding, or
// within the narrowed precision's after fp16, bf16 or INT8 (see tolerance()). A pass may
// refuse a graph as unsupported, with a reason; anything else aborts with the graph's recipe.
// Each input's outcome is counted (FscFuzzSummary) so a replay can say what it checked.
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "compiler/target.h"
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
    auto exec = Executor::create(model, cpuExecutorOptions());
    if (!exec) return exec.status();
    auto feeds = feedsFor(**exec, symbolSizes);
    if (!feeds) return feeds.status();
    return (*exec)->run(std::move(*feeds));
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

const std::vector<std::string> kNarrowing = {"int8-quantization", "bf16-conversion", "fp16-conversion"};

// How far the compiled model may drift from the built one, relative to the largest output
// of the graph as built: float32 rounding, or the narrowest precision a pass of the order
// gives the graph. A narrowed order also gets, element by element, four times what the
// narrowing passes alone change there (narrowedReference): in a random order a narrowing
// can run before the fusions and narrow a written-out LayerNorm's difference of nearly equal
// values, whose error is then large for reasons of precision, not of a wrong edge.
double tolerance(const std::vector<std::string>& passes) {
    if (contains(passes, "int8-quantization")) return 0.1;
    if (contains(passes, "bf16-conversion")) return 4e-2;
    if (contains(passes, "fp16-conversion")) return 1e-2;
    return 1e-3;
}

// What happened to each input: the outputs compared, or a pass refused the graph.
struct Outcomes {
    long long compared = 0, comparedNarrowed = 0, refused = 0, narrowingAloneRefused = 0;
};
Outcomes g_outcomes;

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
    // The narrowing passes of the order alone, in the same order: what precision costs here.
    std::vector<std::string> narrowingOnly;
    for (const std::string& p : passes)
        if (contains(kNarrowing, p)) narrowingOnly.push_back(p);
    std::vector<RtTensor> narrowed;
    if (!narrowingOnly.empty()) {
        auto alone = compileModel(m.model, narrowingOnly, {});
        if (!alone) {
            if (alone.status().code() != ErrorCode::Unsupported)
                finding(m, narrowingOnly, "compile failed: " + alone.status().message());
            ++g_outcomes.narrowingAloneRefused;
            return;
        }
        auto ran = runOnCpu(alone->model, m.symbolSizes);
        if (!ran) finding(m, narrowingOnly, "the narrowed graph does not run: " + ran.status().message());
        if (ran->size() != expected->size()) finding(m, narrowingOnly, "the narrowed graph has another number of outputs");
        narrowed = std::move(*ran);
    }
    for (size_t o = 0; o < expected->size(); ++o) {
        const RtTensor &want = (*expected)[o], &got = (*actual)[o];
        const std::string output = "output " + std::to_string(o);
        if (want.dims != got.dims) finding(m, passes, output + " has other dims");
        if (want.dtype != got.dtype)
            finding(m, passes, output + " is " + std::string(dtypeName(got.dtype)) + ", built as " + std::string(dtypeName(want.dtype)));
        double scale = 1e-3;
        for (int64_t i = 0; i < want.numel(); ++i)
            if (const double a = elementAsDouble(want, i); std::isfinite(a)) scale = std::max(scale, std::abs(a));
        // The largest change narrowing alone makes to this output. Fusing changes where the
        // narrowed values round (a fused GELU rounds once where its written-out form rounded
        // seven times), so an element that narrowing alone left close may move as far as
        // another one moved; normalizations over few elements amplify both alike.
        double narrowingMoves = 0;
        for (int64_t i = 0; !narrowed.empty() && i < want.numel(); ++i) {
            const double a = elementAsDouble(want, i), n = elementAsDouble(narrowed[o], i);
            if (std::isfinite(a) && std::isfinite(n)) narrowingMoves = std::max(narrowingMoves, std::abs(n - a));
        }
        for (int64_t i = 0; i < want.numel(); ++i) {
            const double a = elementAsDouble(want, i), b = elementAsDouble(got, i);
            auto element = [&] {
                return output + " element " + std::to_string(i) + " is " + std::to_string(b) + ", built as " + std::to_string(a);
            };
            double precision = 0;  // what narrowing alone changes in this output
            if (!narrowed.empty()) {
                const double n = elementAsDouble(narrowed[o], i);
                precision = std::isfinite(n) ? 4 * narrowingMoves : INFINITY;
            }
            if (!std::isfinite(a)) {
                // NaN where the graph as built gives NaN, the same infinity where it gives one.
                if (!(std::isnan(a) ? std::isnan(b) : a == b) && std::isfinite(precision)) finding(m, passes, element());
                continue;
            }
            const double d = std::isfinite(b) ? std::abs(a - b) : INFINITY;
            if (!(d <= allowed * scale + precision))
                finding(m, passes, element() + " (largest " + std::to_string(scale) + ", allowed " +
                                       std::to_string(allowed) + " of it and " + std::to_string(precision) + ")");
        }
    }
    ++g_outcomes.compared;
    g_outcomes.comparedNarrowed += allowed > 1e-3;
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
        // A pass may refuse a graph it does not support, saying why; a graph the verifier
        // rejects, an error of another kind or one without a reason is a bug.
        if (s.code() != ErrorCode::Unsupported || s.message().find("after pass") != std::string::npos ||
            s.message().empty())
            finding(*generated, passes, "compile failed: " + s.message());
        if (std::getenv("FSC_FUZZ_VERBOSE")) std::fprintf(stderr, "refused: %s\n", s.message().c_str());
        ++g_outcomes.refused;
        return 0;
    }
    checkExport(*generated, passes, compiled->model);
    checkNumerics(*generated, passes, compiled->model);
    return 0;
}

// Called by replay_main.cpp after its inputs: prints what was checked and fails (non-zero)
// when fewer than half the inputs had their outputs compared, as a generator or a pass that
// refused everything would make every input pass unchecked.
extern "C" int FscFuzzSummary(long long inputs) {
    std::printf("%lld inputs: %lld compiled and compared (%lld of them after fp16, bf16 or INT8), %lld refused by a "
                "pass, %lld not compared (the narrowing passes alone refused the graph)\n",
                inputs, g_outcomes.compared, g_outcomes.comparedNarrowed, g_outcomes.refused,
                g_outcomes.narrowingAloneRefused);
    const long long accounted = g_outcomes.compared + g_outcomes.refused + g_outcomes.narrowingAloneRefused;
    if (accounted != inputs) {
        std::printf("FAIL: %lld inputs have no outcome\n", inputs - accounted);
        return 1;
    }
    if (2 * g_outcomes.compared < inputs) {
        std::printf("FAIL: fewer than half the inputs were compared\n");
        return 1;
    }
    return 0;
}
