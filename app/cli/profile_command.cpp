#include "app/cli/profile_command.h"

#include "app/cli/input_options.h"

#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "app/cli/input_options.h"
#include "core/parse_int.h"
#include "app/common/build_info.h"
#include "app/common/graph_svg.h"
#include "app/common/profile_session.h"
#include "compiler/graph_breaks.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/fused_domain.h"
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

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitUsage = 64;

const char* kProfileUsage = R"(usage: fusescope-cli profile MODEL [options]

  -o, --store RUN.fsdb   add the run to this run store (SQLite; created when missing)
  --trace T.json         Chrome Trace Event JSON (opens in ui.perfetto.dev)
  --csv DIR              DIR/kernels.csv and DIR/nodes.csv
  --report R.html        a self-contained HTML report (graph with heat, top nodes and
                         kernels, graph breaks, memory, roofline, overhead)
  --backend cpu|cuda     default cpu
  --iterations N         profiled iterations (default 20), each also timed without the
                         profiler to measure its overhead
  --warmup N             untimed runs first (default 2)
  --pipeline O0..O3      compiler pipeline (default O2); --passes a,b,c / --disable a,b
  --threads N            CPU worker threads (default: all cores)
  --input-dir DIR        inputs from DIR/input_N.pb; otherwise random from --seed N
  --input NAME=FILE      one input from a .pb or .npy file (repeatable)
  --dim NAME=VALUE       size of a symbolic dim (default: 224 for an image's height and
                         width, 1024 for a 1-D signal's length, else 1)
  --list RUN.fsdb        the runs stored in RUN.fsdb
  --compare RUN.fsdb A B per node, run B's time against run A's
)";

int usage(const std::string& message) {
    std::cerr << "fusescope-cli profile: " << message << "\n" << kProfileUsage;
    return kExitUsage;
}

int fail(const std::string& message) {
    std::cerr << "error: " << message << "\n";
    return kExitBadInput;
}

int listRuns(const std::string& path) {
    auto store = RunStore::open(path);
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
    auto store = RunStore::open(path);
    if (!store) return fail(store.status().message());
    auto deltas = (*store)->compareRuns(a, b);
    if (!deltas) return fail(deltas.status().message());
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
            ms[size_t(s.node)] = double(s.totalNs) / 1e6 / std::max(1, trace.iterations);
        }
    ReportExtras extras;
    extras.graphSvg = graphHeatSvg(graph, share, ms);
    const GraphBreakReport breaks = findGraphBreaks(graph, CapabilityTable::cuda());
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

}  // namespace

int profileCommand(int argc, char** argv, int first) {
    std::string model, store, tracePath, csvDir, reportPath, backend = "cpu", pipeline, passList;
    std::vector<std::string> disabled;
    int64_t iterations = 20, warmup = 2, threads = 0;
    FeedOptions feeds;
    InputChoice input;
    for (int i = first; i < argc; ++i) {
        const std::string s = argv[i];
        auto value = [&](std::string& out) {
            if (i + 1 >= argc) return false;
            out = argv[++i];
            return true;
        };
        std::string v;
        int64_t n = 0;
        if (s == "--help" || s == "-h") {
            std::cout << kProfileUsage;
            return kExitOk;
        }
        if (s == "-o" || s == "--store") { if (!value(store)) return usage(s + " needs RUN.fsdb"); }
        else if (s == "--trace") { if (!value(tracePath)) return usage("--trace needs T.json"); }
        else if (s == "--csv") { if (!value(csvDir)) return usage("--csv needs DIR"); }
        else if (s == "--report") { if (!value(reportPath)) return usage("--report needs R.html"); }
        else if (s == "--pipeline") { if (!value(pipeline)) return usage("--pipeline needs O0..O3"); }
        else if (s == "--passes") { if (!value(passList) || passList.empty()) return usage("--passes needs a,b,c"); }
        else if (s == "--disable") {
            if (!value(v)) return usage("--disable needs a,b");
            for (std::string& name : splitCommaList(v)) disabled.push_back(std::move(name));
        } else if (s == "--backend") {
            if (!value(backend) || (backend != "cpu" && backend != "cuda")) return usage("--backend must be cpu or cuda");
        } else if (s == "--iterations") {
            if (!value(v) || !parseInt(v, iterations) || iterations < 1) return usage("--iterations needs a number >= 1");
        } else if (s == "--warmup") {
            if (!value(v) || !parseInt(v, warmup) || warmup < 0) return usage("--warmup needs a number >= 0");
        } else if (s == "--threads") {
            if (!value(v) || !parseInt(v, threads) || threads < 1 || threads > 1024) return usage("--threads needs a number >= 1");
        } else if (s == "--seed") {
            if (!value(v) || !parseInt(v, n)) return usage("--seed needs a number");
            feeds.seed = uint64_t(n);
        } else if (std::string error; int taken = parseInputOption(argc, argv, i, input, error)) {
            if (taken < 0) return usage(error);
        } else if (s == "--list") {
            if (!value(v)) return usage("--list needs RUN.fsdb");
            return listRuns(v);
        } else if (s == "--compare") {
            std::string path, a, b;
            int64_t ra = 0, rb = 0;
            if (!value(path) || !value(a) || !value(b) || !parseInt(a, ra) || !parseInt(b, rb))
                return usage("--compare needs RUN.fsdb A B (run ids)");
            return compareRuns(path, ra, rb);
        } else if (s.rfind("-", 0) == 0) {
            return usage("unknown option " + s);
        } else if (model.empty()) {
            model = s;
        } else {
            return usage("unexpected argument '" + s + "'");
        }
    }
    if (model.empty()) return usage("profile needs a MODEL");
    std::shared_ptr<Device> device;
    if (backend == "cuda") {
        auto opened = openCudaDevice();
        if (!opened) return fail(model + ": --backend cuda: " + opened.status().message() + "; use --backend cpu");
        device = *opened;
    }
    auto passes = resolvePipeline(pipeline, passList, disabled);
    if (!passes) return usage(passes.status().message());
    auto imported = importModel(model);
    if (!imported) return fail(imported.status().message());
    auto compiled = compileModel(*imported, *passes);
    if (!compiled) return fail(compiled.status().withContext(model).message());

    ProfileRequest request;
    request.graph = compiled->model.graph;
    request.opsets = compiled->model.opsetImports;
    feeds.inputDir = input.dir.string();
    feeds.files = input.files;
    feeds.dims = input.dims;
    request.feeds = feeds;
    request.device = device;
    request.iterations = int(iterations);
    request.warmup = int(warmup);
    request.threads = int(threads);
    request.model = model;
    request.pipeline = !passList.empty() ? "custom" : pipeline.empty() ? "O2" : pipeline;
    for (const PassReport& p : compiled->trace.passes) {
        int64_t rejected = 0;
        rejected = int64_t(p.rejections.size());
        request.passes.push_back({p.name, int64_t(p.nodesBefore), int64_t(p.nodesAfter), p.milliseconds,
                                  int64_t(p.changes.size()), rejected});
    }
    auto trace = profileGraph(request);
    if (!trace) return fail(model + ": " + trace.status().message());

    std::cout << model << ": pipeline " << request.pipeline << ", " << trace->nodes.size() << " plan nodes, backend "
              << trace->backend << " (" << trace->device << ")\n";
    std::cout << std::fixed << std::setprecision(3) << "latency: median " << trace->unprofiledMs << " ms unprofiled, "
              << trace->profiledMs << " ms profiled over " << iterations << " iteration(s); profiler overhead "
              << std::setprecision(1) << trace->overheadPercent() << "%\n";
    const std::vector<NodeStat> stats = computeNodeStats(*trace);
    std::cout << "\n  ms/iter   share   GFLOP/s    GB/s  node (op)\n";
    for (size_t i = 0; i < stats.size() && i < 15; ++i) {
        const NodeStat& s = stats[i];
        const TraceNode* n = trace->findNode(s.node);
        std::cout << std::setw(9) << std::setprecision(3) << double(s.totalNs) / 1e6 / double(iterations) << std::setw(7)
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

}  // namespace fsc::cli
