#include "compiler/backends/cuda/cuda_provider.h"
#include "app/cli/compile_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "app/cli/cli_app.h"
#include "app/reports/compile_report.h"
#include "app/reports/graph_breaks_report.h"
#include "app/reports/memory_report.h"
#include "app/cli/parallel_step.h"
#include "app/cli/quantize_step.h"
#include "app/common/session.h"
#include "compiler/backends/cuda/generated_kernels.h"
#include "compiler/backends/cuda/nvrtc_compiler.h"
#include "compiler/runtime/capability_table.h"
#include "compiler/pass_manager.h"
#include "compiler/pass_registry.h"
#include "compiler/passes/passes.h"
#include "compiler/pipelines.h"
#include "compiler/runtime/feeds.h"
#include "core/comma_list.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"

namespace fsc::cli {
namespace {

struct CompileArgs {
    std::string model, dumpDir, output, capabilities;
    PipelineChoice pipeline;
    QuantizeArgs quantize;
    ParallelArgs parallel;
    InputChoice input;
    bool explain = false, json = false, verify = false, list = false, showKernels = false, selfContained = false;
    int threads = 0;  // of every check that runs the model (0: automatic)
};

void addOptions(CLI::App& app, CompileArgs& a) {
    app.add_option("MODEL", a.model, "the ONNX model");
    addPipelineOptions(app, a.pipeline, "pipeline (--list-passes shows every step)");
    addQuantizeOptions(app, a.quantize);
    addParallelOptions(app, a.parallel);
    addInputOptions(app, a.input, "inputs of the checks above (accuracy, partitioned against unpartitioned)");
    addThreadsOption(app, a.threads, "inputs of the checks above (accuracy, partitioned against unpartitioned)");  // their runs' threads
    const std::string output = "output";
    app.add_flag("--explain", a.explain, "per pass: what changed and why, what matched but was rejected")->group(output);
    app.add_flag("--json", a.json,
                 "JSON summary (schema fusescope.compile/1): node counts and op histograms\n"
                 "before/after, time and counters per pass")
        ->group(output);
    app.add_option("--dump-dir", a.dumpDir,
                   "DIR/NN-pass-name.onnx after every pass (00-imported.onnx first) and\n"
                   "DIR/trace.json: every change record and the provenance map; the graphs\n"
                   "share one DIR/weights.bin, each weight written once")
        ->type_name("DIR")
        ->group(output);
    app.add_flag("--dump-self-contained", a.selfContained,
                 "each --dump-dir graph with its own copy of the weights (one file each)")
        ->group(output);
    app.add_option("-o,--output", a.output, "write the compiled model")->type_name("OUT.onnx")->group(output);
    app.add_flag("--verify", a.verify, "check the graph's invariants after every pass")->group(output);
    app.add_flag("--show-kernels", a.showKernels,
                 "the CUDA C++ generated for each FusedElementwise node, and whether NVRTC\n"
                 "compiles it to PTX (cached on disk by source hash)")
        ->group(output);
    app.add_option("--capabilities", a.capabilities,
                   "graph breaks against this capability table instead of the built-in CUDA\n"
                   "one (format: compiler/backends/cuda/capabilities.txt)")
        ->type_name("FILE")
        ->group(output);
    app.add_flag("--list-passes", a.list, "the registered passes and the named pipelines")->group(output);
    app.footer("A failed check (accuracy, partitioned against unpartitioned) still writes what was\n"
               "compiled (-o, --dump-dir) and exits 2.");
}

// What the options cannot say alone; empty when all is well.
std::string checkArgs(const CompileArgs& a) {
    if (std::string why = a.pipeline.conflict(); !why.empty()) return why;
    if (a.model.empty() && !a.list) return "compile needs a MODEL";
    if (std::string why = checkQuantizeArgs(a.quantize); !why.empty()) return why;
    if (a.parallel.tp > 1 && a.parallel.pp > 1) return "give --tp or --pp, not both (yet)";
    if (a.selfContained && a.dumpDir.empty()) return "--dump-self-contained needs --dump-dir";
    return {};
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

// The graph after every pass; by default their weights go once into one shared file (a
// 25-pass pipeline on resnet50 once wrote 2.4 GB of copies).
Status writeDumps(const CompileResult& result, const std::string& dir, const std::string& modelPath,
                  const std::string& pipelineName, const nlohmann::json& breaks, bool selfContained) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return {ErrorCode::Io, dir + ": cannot create the folder: " + ec.message()};
    SharedWeightsFile weights(std::filesystem::path(dir) / "weights.bin");
    ExportOptions options;
    if (!selfContained) options.sharedWeights = &weights;
    auto write = [&](const GraphSnapshot& snapshot, const std::string& file) {
        Model m = result.model;
        m.graph = snapshot.materialize();
        return exportModel(m, std::filesystem::path(dir) / file, options);
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

// Prints each distinct generated kernel once, with the nodes that use it, and compiles it with
// NVRTC where NVRTC is present. A kernel NVRTC rejects is our bug: it fails the command.
int showKernels(const Graph& graph, const std::string& model) {
    const std::vector<GeneratedKernel> kernels = generatedCudaKernels(graph);
    // Identical sources (the same chain on the same dtype, at many places in a network) are one
    // kernel: NVRTC compiles it once and the cache holds one PTX.
    struct Group {
        const GeneratedKernel* kernel;
        std::vector<std::string> nodes;
    };
    std::vector<Group> groups;
    std::map<std::string, size_t> bySource;
    for (const GeneratedKernel& k : kernels) {
        const std::string key = k.error.empty() ? k.kernel.source : "\x1f" + k.nodeName;
        auto [at, added] = bySource.try_emplace(key, groups.size());
        if (added) groups.push_back({&k, {}});
        groups[at->second].nodes.push_back(k.nodeName);
    }
    std::string why;
    const bool nvrtc = NvrtcCompiler::available(&why);
    const NvrtcCompiler compiler;
    std::cout << "\n" << groups.size() << " distinct generated CUDA kernel(s) for " << kernels.size() << " node(s); NVRTC "
              << (nvrtc ? NvrtcCompiler::version() + ", PTX cached in " + compiler.cacheDir().string() : "unavailable: " + why)
              << "\n";
    int failures = 0;
    for (const Group& g : groups) {
        const GeneratedKernel& k = *g.kernel;
        if (!k.error.empty()) {
            std::cout << "\n// ---- node '" << k.nodeName << "' (" << dtypeName(k.dtype) << "): no kernel: " << k.error << "\n";
            continue;
        }
        std::cout << "\n// ---- " << k.kernel.name << " (" << dtypeName(k.dtype) << "), "
                  << (g.nodes.size() == 1 ? "node " : std::to_string(g.nodes.size()) + " nodes: ");
        const size_t shown = std::min<size_t>(g.nodes.size(), 4);
        for (size_t i = 0; i < shown; ++i) std::cout << (i ? ", '" : "'") << g.nodes[i] << "'";
        if (g.nodes.size() > shown) std::cout << " and " << g.nodes.size() - shown << " more";
        std::cout << "\n" << k.kernel.source;
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

int compile(const CLI::App& app, const CompileArgs& a) {
    if (std::string why = checkArgs(a); !why.empty()) return usageError(app, why);
    if (a.list) return listPasses();
    auto passes = a.pipeline.resolve();
    if (!passes) return usageError(app, passes.status().message());
    const std::string pipelineName = a.pipeline.name();

    CapabilityTable custom;
    if (!a.capabilities.empty()) {
        auto table = CapabilityTable::load(a.capabilities);
        if (!table) return fail(table.status());
        custom = std::move(*table);
    }
    const CapabilityTable& capabilities = a.capabilities.empty() ? cudaCapabilities() : custom;

    Session session;
    if (Status s = session.open(a.model); !s) return fail(s);
    const Model* model = session.model().get();
    if (Status s = checkDimNames(*model->graph, model->graph->inputs, a.input.dims); !s)
        return fail(a.model + ": " + s.message());
    CompileOptions options;
    options.verifyEachPass = a.verify;
    PipelineSpec spec;
    spec.passes = *passes;
    spec.customPasses = !a.pipeline.passes.empty();  // as run marks it: a pass list runs each pass as registered
    spec.tensorParallel = a.parallel.tp;
    spec.pipelineParallel = a.parallel.pp;
    std::optional<QuantizePlan> quantizePlan;
    if (!a.quantize.kind.empty()) {
        auto plan = planQuantization(a.quantize, a.input, *model, spec);
        if (!plan) return fail(plan.status());
        quantizePlan = std::move(*plan);
    }
    if (Status s = session.compile(spec, options); !s) return fail(s);
    const CompileResult* result = session.compiledResult().get();
    const Graph& compiled = *result->model.graph;
    const GraphBreakReport breaks = findGraphBreaks(compiled, capabilities);
    // What was compiled is written first: a failed check below must not lose it.
    if (!a.dumpDir.empty())
        if (Status s = writeDumps(*result, a.dumpDir, a.model, pipelineName, breaksJson(breaks, compiled), a.selfContained); !s)
            return fail(s);
    if (!a.output.empty())
        if (Status s = exportModel(result->model, a.output); !s) return fail(s);

    Status checkFailed;
    std::optional<QuantizeReport> quantizeReport;
    if (quantizePlan) {
        auto report = measureQuantization(a.quantize, *quantizePlan, *model, *result, [](size_t i, size_t n) {
            std::cerr << "\rsensitivity: layer " << i + 1 << "/" << n << (i + 1 == n ? "\n" : "") << std::flush;
        });
        if (report) quantizeReport = std::move(*report);
        else checkFailed = report.status();
    }
    std::optional<ParallelReport> parallelReport;
    if (a.parallel.any() && checkFailed) {
        auto report = measureParallel(a.parallel, a.input, *model, *result);
        if (report) parallelReport = std::move(*report);
        else checkFailed = report.status();
    }
    // The arena a CPU run of the compiled graph lays out for the inputs run would generate.
    FeedOptions feeds;
    feeds.inputDir = a.input.dir.string();
    feeds.files = a.input.files;
    feeds.dims = a.input.dims;
    const Result<MemoryReport> memory = plannedMemoryReport(result->model, feeds);
    std::string memoryLine = "memory plan: none before a run: " + (memory ? std::string() : memory.status().message());
    if (memory) {
        memoryLine = "memory plan for";
        for (size_t i = 0; i < memory->inputs.size(); ++i) memoryLine += (i ? ", " : " ") + memory->inputs[i];
        memoryLine += ": " + memoryPlanText(memory->plan);
    }
    if (a.json) {
        nlohmann::json summary = compileSummaryJson(*result, a.model, pipelineName);
        summary["graph_breaks"] = breaksJson(breaks, compiled);
        if (memory)
            summary["memory"] = {{"arena_bytes", memory->plan.arenaBytes}, {"naive_bytes", memory->plan.naiveBytes},
                                 {"lower_bound_bytes", memory->plan.lowerBoundBytes}, {"inputs", memory->inputs}};
        else
            summary["memory"] = {{"error", memory.status().message()}};
        if (quantizeReport) summary["quantization"] = quantizeReportJson(*quantizeReport);
        if (parallelReport) summary["parallel"] = parallelReportJson(a.parallel, *parallelReport);
        std::cout << summary.dump(2) << "\n";
    } else if (a.explain) {
        std::cout << explainTrace(result->trace, pipelineName, 25) << "\n" << explainBreaks(breaks, compiled, 25)
                  << memoryLine << "\n";
    } else {
        std::cout << a.model << ": pipeline " << pipelineName << ", " << result->trace.imported->nodeCount()
                  << " -> " << result->model.graph->nodeCount() << " nodes in " << std::fixed
                  << std::setprecision(1) << result->trace.totalMilliseconds << " ms\n";
        for (const PassReport& p : result->trace.passes)
            std::cout << "  " << std::left << std::setw(34) << p.name << std::right << std::setw(6)
                      << p.nodesBefore << " -> " << std::setw(6) << p.nodesAfter << std::setw(9)
                      << p.milliseconds << " ms\n";
        std::cout << breaksSummaryLine(breaks) << "\n" << memoryLine << "\n";
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

}  // namespace

Command compileCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "compile", "run the compiler's passes and show what each did");
    auto args = std::make_shared<CompileArgs>();
    addOptions(*app, *args);
    return {app, [app, args] {
                // One thread count for every check that runs the model.
                args->quantize.threads = args->parallel.threads = args->threads;
                return compile(*app, *args);
            }};
}

}  // namespace fsc::cli
