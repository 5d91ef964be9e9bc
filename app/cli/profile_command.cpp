#include "compiler/backends/cuda/cuda_provider.h"
#include "app/cli/profile_command.h"


#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "core/parse_int.h"
#include "app/common/build_info.h"
#include "app/reports/graph_svg.h"
#include "app/common/session.h"
#include "app/profiling/profile_session.h"
#include "compiler/graph_breaks.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/runtime/fused_domain.h"
#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "core/comma_list.h"
#include "core/onnx_import.h"
#include "profiler/chrome_trace.h"
#include "profiler/csv_report.h"
#include "profiler/html_report.h"
#include "profiler/run_store.h"

namespace fsc::cli {
namespace {


struct ProfileArgs {
    std::string model, store, tracePath, csvDir, reportPath, backend = "cpu";
    PipelineChoice pipeline;
    int iterations = 20, warmup = 2, threads = 0;
    bool tf32 = false;
    uint64_t seed = 0;
    InputChoice input;
    std::string list;                  // --list RUN.fsdb
    std::vector<std::string> compare;  // --compare RUN.fsdb A B
};

void addOptions(CLI::App& app, ProfileArgs& a) {
    app.add_option("MODEL", a.model, "the ONNX model");
    const std::string outputs = "where the run goes";
    app.add_option("-o,--store", a.store, "add the run to this run store (SQLite; created when missing)")
        ->type_name("RUN.fsdb")
        ->group(outputs);
    app.add_option("--trace", a.tracePath, "Chrome Trace Event JSON (opens in ui.perfetto.dev)")
        ->type_name("T.json")
        ->group(outputs);
    app.add_option("--csv", a.csvDir, "DIR/kernels.csv and DIR/nodes.csv")->type_name("DIR")->group(outputs);
    app.add_option("--report", a.reportPath,
                   "a self-contained HTML report (graph with heat, top nodes and kernels,\n"
                   "graph breaks, memory, roofline, overhead)")
        ->type_name("R.html")
        ->group(outputs);
    const std::string running = "the run";
    addBackendOption(app, a.backend, running, "default cpu (cuda: channels-last lays out half convolutions, float32 ones stay NCHW)");
    addIterationOptions(app, a.iterations, a.warmup, running,
                        "profiled iterations (default 20), each also timed without the profiler\n"
                        "to measure its overhead",
                        "untimed runs first (default 2)");
    addThreadsOption(app, a.threads, running);
    addTf32Option(app, a.tf32, running);
    addPipelineOptions(app, a.pipeline, "compilation (run before profiling)");
    const std::string inputs = "inputs (otherwise random from --seed)";
    addInputOptions(app, a.input, inputs);
    addSeedOption(app, a.seed, inputs);
    const std::string stored = "stored runs (no MODEL)";
    app.add_option("--list", a.list, "the runs stored in RUN.fsdb")->type_name("RUN.fsdb")->group(stored);
    app.add_option("--compare", a.compare, "per node, run B's time against run A's")
        ->type_name("RUN.fsdb A B")
        ->expected(3)
        ->group(stored);
}

int listRuns(const std::string& path) {
    auto store = RunStore::openExisting(path);
    if (!store) return fail(store.status().message());
    auto runs = (*store)->runs();
    if (!runs) return fail(runs.status().message());
    std::cout << "  id  started               backend  pipeline  iterations  median ms  model\n";
    for (const RunSummary& r : *runs)
        std::cout << std::setw(4) << r.id << "  " << std::left << std::setw(21) << r.startedAt << " " << std::setw(8)
                  << r.backend << " " << std::setw(9) << r.pipeline << std::right << std::setw(11) << r.iterations
                  << std::setw(11) << std::fixed << std::setprecision(3) << r.medianMs << "  " << r.model << " ("
                  << r.device << ")\n";
    return kExitOk;
}

int compareRuns(const std::string& path, int64_t a, int64_t b) {
    auto store = RunStore::openExisting(path);
    if (!store) return fail(store.status().message());
    auto deltas = (*store)->compareRuns(a, b);
    if (!deltas) return fail(deltas.status().message());
    // Nodes are matched by name: runs of two models share few, and the table would mislead.
    if (auto runs = (*store)->runs()) {
        std::string modelA, modelB;
        for (const RunSummary& r : *runs) {
            if (r.id == a) modelA = r.model;
            if (r.id == b) modelB = r.model;
        }
        if (!modelA.empty() && !modelB.empty() && modelA != modelB)
            std::cout << "note: run " << a << " is of " << modelA << " and run " << b << " of " << modelB
                      << ": only nodes of the same name are compared\n";
    }
    std::cout << "  run " << a << " ms   run " << b << " ms   delta ms  node\n";
    auto cell = [](double ms) {
        std::ostringstream s;
        if (ms < 0) s << "-";
        else s << std::fixed << std::setprecision(3) << ms;
        return s.str();
    };
    for (const NodeDelta& d : *deltas)
        std::cout << std::setw(11) << cell(d.aMs) << std::setw(11) << cell(d.bMs) << std::setw(11) << std::showpos
                  << std::fixed << std::setprecision(3) << d.deltaMs() << std::noshowpos << "  " << d.name << " ("
                  << d.opType << ")\n";
    return kExitOk;
}

// What the report adds to the trace: the graph with its heat, and the graph breaks a CUDA
// run would meet, each with the time its node took here.
ReportExtras reportExtras(const Trace& trace, const Graph& graph) {
    std::vector<double> share(graph.nodeArenaSize(), 0.0), ms(graph.nodeArenaSize(), 0.0);
    for (const NodeStat& s : computeNodeStats(trace))
        if (s.node >= 0 && size_t(s.node) < share.size()) {
            share[size_t(s.node)] = s.share;
            ms[size_t(s.node)] = double(s.medianNs) / 1e6;
        }
    ReportExtras extras;
    extras.graphSvg = graphHeatSvg(graph, share, ms);
    const GraphBreakReport breaks = findGraphBreaks(graph, cudaCapabilities());
    for (const GraphBreak& b : breaks.breaks) {
        ReportBreak r{breakKindName(b.kind), graph.node(b.node).name, b.reason, -1};
        if (b.kind == BreakKind::UnsupportedOp && b.node.index < ms.size()) r.measuredMs = ms[b.node.index];
        extras.breaks.push_back(std::move(r));
    }
    extras.breaksNote = trace.backend == "cpu"
                            ? "This run used the CPU backend: these are the places a CUDA run would return to the host "
                              "(against the built-in CUDA capability table); an unsupported op shows its node's time here."
                            : "Breaks where execution left the device, with the measured time of the node at each.";
    const BuildInfo build = buildInfo();
    extras.software = {{"Fusescope", build.version + " (commit " + build.commit + ")"}, {"backend", trace.backend}, {"pipeline", trace.pipeline}};
    return extras;
}

int profile(const CLI::App& app, const ProfileArgs& args) {
    if (!args.list.empty()) return listRuns(args.list);
    if (!args.compare.empty()) {
        int64_t ra = 0, rb = 0;
        if (!parseInt(args.compare[1], ra) || !parseInt(args.compare[2], rb))
            return usageError(app, "--compare needs RUN.fsdb A B (run ids)");
        return compareRuns(args.compare[0], ra, rb);
    }
    if (args.model.empty()) return usageError(app, "profile needs a MODEL");
    if (std::string why = args.pipeline.conflict(); !why.empty()) return usageError(app, why);
    if (Status s = checkCudaOnlyFlags(args.backend, args.tf32); !s) return usageError(app, s.message());
    const std::string& model = args.model;
    const std::string &store = args.store, &tracePath = args.tracePath, &csvDir = args.csvDir,
                      &reportPath = args.reportPath, &backend = args.backend;
    const int iterations = args.iterations, warmup = args.warmup, threads = args.threads;
    const InputChoice& input = args.input;
    const FeedOptions feeds = feedOptions(input, args.seed);
    auto target = chooseTarget(model, {.backend = backend, .threads = threads, .tf32 = args.tf32});
    if (!target) return fail(target.status().message());
    auto spec = args.pipeline.spec(*target);
    if (!spec) return usageError(app, spec.status().message());
    Session session;
    if (Status s = session.open(model); !s) return fail(s.message());
    if (Status s = session.compile(*spec); !s) return fail(s.message());
    const CompileResult* compiled = session.compiledResult().get();

    ProfileRequest request = session.profileRequest(compiled->model.graph, *target, args.pipeline.name());
    request.feeds = feeds;
    request.iterations = int(iterations);
    request.warmup = int(warmup);
    auto trace = profileGraph(request);
    if (!trace) return fail(model + ": " + trace.status().message());

    std::cout << model << ": pipeline " << request.pipeline << ", " << trace->nodes.size() << " plan nodes, backend "
              << trace->backend << " (" << trace->device << ")\n";
    std::cout << std::fixed << std::setprecision(3) << "latency: median " << trace->unprofiledMs << " ms unprofiled, "
              << trace->profiledMs << " ms profiled over " << iterations << " iteration(s); profiler "
              << trace->overheadText() << "\n";
    if (!trace->timingWarning.empty()) std::cout << "warning: " << trace->timingWarning << "\n";
    const std::vector<NodeStat> stats = computeNodeStats(*trace);
    std::cout << "\n   median      p90   share   GFLOP/s    GB/s  node (op)       (ms per iteration)\n";
    for (size_t i = 0; i < stats.size() && i < 15; ++i) {
        const NodeStat& s = stats[i];
        const TraceNode* n = trace->findNode(s.node);
        std::cout << std::setw(9) << std::setprecision(3) << double(s.medianNs) / 1e6 << std::setw(9)
                  << double(s.p90Ns) / 1e6 << std::setw(7)
                  << std::setprecision(1) << 100 * s.share << "%" << std::setw(10) << s.flopsPerSecond / 1e9 << std::setw(8)
                  << s.bytesPerSecond / 1e9 << "  " << (n ? n->name + " (" + n->opType + ")" : "?") << "\n";
    }
    if (!store.empty()) {
        auto runStore = RunStore::open(store);
        if (!runStore) return fail(runStore.status().message());
        auto id = (*runStore)->addRun(*trace);
        if (!id) return fail(id.status().message());
        std::cout << "\nstored as run " << *id << " in " << store << "\n";
    }
    if (!tracePath.empty()) {
        if (Status s = writeChromeTrace(*trace, tracePath); !s) return fail(s.message());
        std::cout << "trace: " << tracePath << " (open in ui.perfetto.dev)\n";
    }
    if (!reportPath.empty()) {
        if (Status s = writeHtmlReport(*trace, reportExtras(*trace, *compiled->model.graph), reportPath); !s) return fail(s.message());
        std::cout << "report: " << reportPath << "\n";
    }
    if (!csvDir.empty()) {
        if (Status s = writeCsvReports(*trace, csvDir); !s) return fail(s.message());
        std::cout << "csv: " << csvDir << "/kernels.csv, " << csvDir << "/nodes.csv\n";
    }
    return kExitOk;
}

}  // namespace

Command profileCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "profile",
                           "a profiled run: per-node times, overhead, a run store (.fsdb), Perfetto\n"
                           "trace, CSV, HTML report");
    auto args = std::make_shared<ProfileArgs>();
    addOptions(*app, *args);
    return {app, [app, args] { return profile(*app, *args); }};
}

}  // namespace fsc::cli
