#include "app/cli/compile_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "app/cli/compile_report.h"
#include "app/cli/graph_breaks_report.h"
#include "app/cli/input_options.h"
#include "app/cli/parallel_step.h"
#include "app/cli/quantize_step.h"
#include "compiler/backends/cuda/generated_kernels.h"
#include "compiler/backends/cuda/nvrtc_compiler.h"
#include "compiler/capability_table.h"
#include "compiler/pass_manager.h"
#include "compiler/pass_registry.h"
#include "compiler/passes/passes.h"
#include "compiler/pipelines.h"
#include "core/comma_list.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"

namespace fsc::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitUsage = 64;

const char* kCompileUsage = R"(usage: fusescope-cli compile MODEL [options]

pipeline:
  --pipeline O0|O1|O2|O3   named pipeline (default O2); --list-passes shows every step
  --passes a,b,c           run exactly these passes, in this order
  --disable a,b            leave these passes out
precision (each prints its error against the float32 model, measured):
  --quantize fp16|bf16     store float32 work in float16 / bfloat16 after the fusions (before
                           the memory passes); Casts only at region boundaries
  --keep-fp32 Op,Op        ops fp16/bf16 leave in float32 (default: norms, Softmax,
                           LogSoftmax, reductions, CumSum; 'none' narrows everything)
  --quantize int8          post-training INT8 after the clean-up and conv-bn folding: QDQ
                           form (int8-quantization), then integer ops (qdq-folding)
  --calibration DIR        inputs: DIR/<set>/input_K.pb|.npy, DIR/input_K.pb, or DIR/*.npy
                           for a one-input model; a quarter is held back to measure accuracy
                           (default: generated samples, said so in every output)
  --calibration-samples N  how many to generate without --calibration (default 16)
  --calibrator NAME        minmax (default), percentile (99.99%) or entropy (KL)
  --per-channel            one weight scale per output channel (default: per tensor)
  --symmetric-activations  int8 activations with zero point 0 (default: asymmetric uint8)
  --exclude PATTERN        keep nodes in float by name, op type or scope (globs; repeatable)
  --no-sensitivity         skip the per-layer sensitivity table (one run per layer)
parallel partitioning (on one device every shard runs here and the result is checked
against the unpartitioned graph; the multi-device timeline is simulated):
  --tp N                   tensor parallel over N devices: linear-layer pairs split by
                           columns then rows (attention by heads), one AllReduce per pair
  --pp N                   pipeline parallel: N stages of equal estimated time, Send/Recv of
                           every activation crossing a cut
  --microbatches M         micro-batches for --pp (default 1)
  --schedule gpipe|1f1b    pipeline schedule (default 1f1b)
  --interconnect NAME      nvlink4 (default), pcie5 or ndr for the simulation
inputs of the checks above (accuracy, partitioned against unpartitioned):
  --dim NAME=VALUE         size of a symbolic dim (default: 224 for an image's height and
                           width, 1024 for a 1-D signal's length, else 1)
  --input-dir DIR          check on DIR's inputs (input_K.pb|.npy, or folders of them)
  --input NAME=FILE        one input from a .pb or .npy file (repeatable)
  a failed check still writes what was compiled (-o, --dump-dir) and exits 2
output:
  --explain                per pass: what changed and why, what matched but was rejected
  --json                   JSON summary (schema fusescope.compile/1): node counts and op
                           histograms before/after, time and counters per pass
  --dump-dir DIR           DIR/NN-pass-name.onnx after every pass (00-imported.onnx first)
                           and DIR/trace.json: every change record and the provenance map
  -o, --output OUT.onnx    write the compiled model
  --verify                 check the graph's invariants after every pass
  --show-kernels           the CUDA C++ generated for each FusedElementwise node, and
                           whether NVRTC compiles it to PTX (cached on disk by source hash)
  --capabilities FILE      graph breaks against this capability table instead of the
                           built-in CUDA one (format: compiler/backends/cuda/capabilities.txt)
  --list-passes            the registered passes and the named pipelines
)";

struct CompileArgs {
    std::string model, pipeline, passes, dumpDir, output, capabilities;
    std::vector<std::string> disabled;
    QuantizeArgs quantize;
    ParallelArgs parallel;
    InputChoice input;
    bool explain = false, json = false, verify = false, list = false, showKernels = false;
};

int usage(const std::string& message) {
    std::cerr << "fusescope-cli compile: " << message << "\n" << kCompileUsage;
    return kExitUsage;
}

int fail(const Status& status) {
    std::cerr << "error: " << status.message() << "\n";
    return kExitBadInput;
}

int parse(int argc, char** argv, int first, CompileArgs& a) {
    for (int i = first; i < argc; ++i) {
        const std::string s = argv[i];
        auto value = [&](std::string& out) {
            if (i + 1 >= argc) return false;
            out = argv[++i];
            return true;
        };
        std::string v;
        if (s == "--help" || s == "-h") {
            std::cout << kCompileUsage;
            return kExitOk;
        }
        if (s == "--explain") a.explain = true;
        else if (s == "--show-kernels") a.showKernels = true;
        else if (s == "--json") a.json = true;
        else if (s == "--verify") a.verify = true;
        else if (s == "--list-passes") a.list = true;
        else if (s == "--pipeline") { if (!value(a.pipeline)) return usage("--pipeline needs O0..O3"); }
        else if (s == "--passes") { if (!value(a.passes) || a.passes.empty()) return usage("--passes needs a,b,c"); }
        else if (s == "--capabilities") { if (!value(a.capabilities)) return usage("--capabilities needs FILE"); }
        else if (s == "--dump-dir") { if (!value(a.dumpDir)) return usage("--dump-dir needs DIR"); }
        else if (s == "-o" || s == "--output") { if (!value(a.output)) return usage(s + " needs OUT.onnx"); }
        else if (std::string error; int taken = parseQuantizeOption(argc, argv, i, a.quantize, error)) {
            if (taken < 0) return usage(error);
        } else if (std::string error; int taken = parseParallelOption(argc, argv, i, a.parallel, error)) {
            if (taken < 0) return usage(error);
        } else if (std::string error; int taken = parseInputOption(argc, argv, i, a.input, error)) {
            if (taken < 0) return usage(error);
        } else if (s == "--disable") {
            if (!value(v)) return usage("--disable needs a,b");
            for (std::string& name : splitCommaList(v)) a.disabled.push_back(std::move(name));
        } else if (s.rfind("-", 0) == 0) return usage("unknown option " + s);
        else if (a.model.empty()) a.model = s;
        else return usage("unexpected argument '" + s + "'");
    }
    if (!a.passes.empty() && !a.pipeline.empty()) return usage("give --pipeline or --passes, not both");
    if (a.model.empty() && !a.list) return usage("compile needs a MODEL");
    const QuantizeArgs& q = a.quantize;
    if (q.keepFp32 && q.kind != "fp16" && q.kind != "bf16") return usage("--keep-fp32 goes with --quantize fp16|bf16");
    if (!q.calibrationDir.empty() && q.kind.empty()) return usage("--calibration goes with --quantize");
    const bool int8Options = q.calibrator != "minmax" || q.perChannel ||
                             q.symmetricActivations || !q.exclude.empty() || !q.sensitivity;
    if (int8Options && q.kind != "int8") return usage("calibration options go with --quantize int8");
    if (a.parallel.tp > 1 && a.parallel.pp > 1) return usage("give --tp or --pp, not both (yet)");
    return -1;
}

int listPasses() {
    std::cout << "passes:\n";
    for (const PassInfo& p : PassRegistry::builtin().passes())
        std::cout << "  " << std::left << std::setw(34) << p.name << p.description << "\n";
    for (const char* level : {"O0", "O1", "O2", "O3"}) {
        std::cout << "\n" << level << ":";
        auto passes = pipelinePasses(level);
        if (passes->empty()) std::cout << " (import only)";
        std::cout << "\n";
        for (const PipelineStep& step : pipelineSteps())
            if (step.level <= level[1] - '0')
                std::cout << "  " << std::left << std::setw(34) << step.pass << step.why << "\n";
    }
    return kExitOk;
}

std::string twoDigits(size_t i) {
    std::ostringstream s;
    s << std::setw(2) << std::setfill('0') << i;
    return s.str();
}

Status writeDumps(const CompileResult& result, const std::string& dir, const std::string& modelPath,
                  const std::string& pipelineName, const nlohmann::json& breaks) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return {ErrorCode::Io, dir + ": cannot create the folder: " + ec.message()};
    auto write = [&](const GraphSnapshot& snapshot, const std::string& file) {
        Model m = result.model;
        m.graph = snapshot.materialize();
        return exportModel(m, std::filesystem::path(dir) / file);
    };
    FSC_RETURN_IF_ERROR(write(*result.trace.imported, "00-imported.onnx"));
    for (size_t i = 0; i < result.trace.passes.size(); ++i) {
        const PassReport& p = result.trace.passes[i];
        if (p.snapshot) FSC_RETURN_IF_ERROR(write(*p.snapshot, twoDigits(i + 1) + "-" + p.name + ".onnx"));
    }
    const auto tracePath = std::filesystem::path(dir) / "trace.json";
    std::ofstream out(tracePath);
    nlohmann::json trace = traceJson(result, modelPath, pipelineName);
    trace["graph_breaks"] = breaks;
    out << trace.dump(1) << "\n";
    if (!out) return {ErrorCode::Io, tracePath.string() + ": cannot write"};
    return Status::ok();
}

// Prints each generated kernel and compiles it with NVRTC where NVRTC is present. A kernel
// NVRTC rejects is our bug: it fails the command.
int showKernels(const Graph& graph, const std::string& model) {
    const std::vector<GeneratedKernel> kernels = generatedCudaKernels(graph);
    std::string why;
    const bool nvrtc = NvrtcCompiler::available(&why);
    const NvrtcCompiler compiler;
    std::cout << "\n" << kernels.size() << " generated CUDA kernel(s); NVRTC "
              << (nvrtc ? NvrtcCompiler::version() + ", PTX cached in " + compiler.cacheDir().string() : "unavailable: " + why)
              << "\n";
    int failures = 0;
    for (const GeneratedKernel& k : kernels) {
        std::cout << "\n// ---- node '" << k.nodeName << "' (" << dtypeName(k.dtype) << ")";
        if (!k.error.empty()) {
            std::cout << ": no kernel: " << k.error << "\n";
            continue;
        }
        std::cout << ": " << k.kernel.name << "\n" << k.kernel.source;
        if (!nvrtc) continue;
        auto ptx = compiler.compile(k.kernel.name, k.kernel.source);
        if (!ptx) {
            std::cerr << "error: " << model << ": " << ptx.status().message() << "\n";
            ++failures;
            continue;
        }
        std::cout << "// NVRTC: " << ptx->ptx.size() << " bytes of PTX for compute_90"
                  << (ptx->fromCache ? " (from the cache)" : "") << ", " << ptx->cacheFile.string() << "\n";
    }
    return failures ? kExitBadInput : kExitOk;
}

}  // namespace

int compileCommand(int argc, char** argv, int first) {
    CompileArgs a;
    if (int rc = parse(argc, argv, first, a); rc >= 0) return rc;
    if (a.list) return listPasses();
    auto passes = resolvePipeline(a.pipeline, a.passes, a.disabled);
    if (!passes) return usage(passes.status().message());
    const std::string pipelineName = !a.passes.empty() ? "custom" : a.pipeline.empty() ? "O2" : a.pipeline;

    CapabilityTable custom;
    if (!a.capabilities.empty()) {
        auto table = CapabilityTable::load(a.capabilities);
        if (!table) return fail(table.status());
        custom = std::move(*table);
    }
    const CapabilityTable& capabilities = a.capabilities.empty() ? CapabilityTable::cuda() : custom;

    auto model = importModel(a.model);
    if (!model) return fail(model.status());
    CompileOptions options;
    options.verifyEachPass = a.verify;
    PipelineSpec spec;
    spec.passes = *passes;
    spec.tensorParallel = a.parallel.tp;
    spec.pipelineParallel = a.parallel.pp;
    std::optional<QuantizePlan> quantizePlan;
    if (!a.quantize.kind.empty()) {
        auto plan = planQuantization(a.quantize, a.input, *model, spec);
        if (!plan) return fail(plan.status());
        quantizePlan = std::move(*plan);
    }
    auto pipeline = buildPipeline(spec);
    if (!pipeline) return fail(pipeline.status());
    auto result = compileModel(*model, std::move(*pipeline), options);
    if (!result) return fail(result.status().withContext(a.model));
    const Graph& compiled = *result->model.graph;
    const GraphBreakReport breaks = findGraphBreaks(compiled, capabilities);
    // What was compiled is written first: a failed check below must not lose it.
    if (!a.dumpDir.empty())
        if (Status s = writeDumps(*result, a.dumpDir, a.model, pipelineName, breaksJson(breaks, compiled)); !s)
            return fail(s);
    if (!a.output.empty())
        if (Status s = exportModel(result->model, a.output); !s) return fail(s);

    Status checkFailed;
    std::optional<QuantizeReport> quantizeReport;
    if (quantizePlan) {
        auto report = measureQuantization(a.quantize, *quantizePlan, *model, *result);
        if (report) quantizeReport = std::move(*report);
        else checkFailed = report.status();
    }
    std::optional<ParallelReport> parallelReport;
    if (a.parallel.any() && checkFailed) {
        auto report = measureParallel(a.parallel, a.input, *model, *result);
        if (report) parallelReport = std::move(*report);
        else checkFailed = report.status();
    }
    if (a.json) {
        nlohmann::json summary = compileSummaryJson(*result, a.model, pipelineName);
        summary["graph_breaks"] = breaksJson(breaks, compiled);
        if (quantizeReport) summary["quantization"] = quantizeReportJson(*quantizeReport);
        if (parallelReport) summary["parallel"] = parallelReportJson(a.parallel, *parallelReport);
        std::cout << summary.dump(2) << "\n";
    } else if (a.explain) {
        std::cout << explainTrace(result->trace, pipelineName, 25) << "\n" << explainBreaks(breaks, compiled, 25);
    } else {
        std::cout << a.model << ": pipeline " << pipelineName << ", " << result->trace.imported->nodeCount()
                  << " -> " << result->model.graph->nodeCount() << " nodes in " << std::fixed
                  << std::setprecision(1) << result->trace.totalMilliseconds << " ms\n";
        for (const PassReport& p : result->trace.passes)
            std::cout << "  " << std::left << std::setw(34) << p.name << std::right << std::setw(6)
                      << p.nodesBefore << " -> " << std::setw(6) << p.nodesAfter << std::setw(9)
                      << p.milliseconds << " ms\n";
        std::cout << breaksSummaryLine(breaks) << "\n";
    }
    if (quantizeReport && !a.json) std::cout << quantizeReportText(*quantizeReport, 15);
    if (parallelReport && !a.json) std::cout << parallelReportText(a.parallel, *parallelReport);
    if (!checkFailed) {
        std::string kept = a.output.empty() ? "" : a.output;
        if (!a.dumpDir.empty()) kept += (kept.empty() ? "" : " and ") + a.dumpDir;
        return fail(checkFailed.withContext(a.model + ": check failed" +
                                            (kept.empty() ? "" : " (the compiled graph was written to " + kept + ")")));
    }
    if (a.showKernels) return showKernels(compiled, a.model);
    return kExitOk;
}

}  // namespace fsc::cli
