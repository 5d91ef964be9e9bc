#include "app/common/walkthrough.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <sstream>

#include "app/common/compile_report.h"
#include "app/common/graph_breaks_report.h"
#include "app/common/summary_json.h"
#include "app/common/trace_recorder.h"
#include "compiler/capability_table.h"
#include "compiler/graph_breaks.h"
#include "compiler/memory_plan.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "core/model_summary.h"
#include "profiler/cpu_timer.h"
#include "profiler/xml_escape.h"

namespace fsc {
namespace {

// Chapter 1: what the file holds, what the IR adds.
WalkthroughChapter modelChapter(const WalkthroughInput& in) {
    const Model& model = *in.session.model();
    const Graph& g = *model.graph;
    WalkthroughChapter c;
    c.paragraphs = {
        "An ONNX file is one protobuf message: a graph of nodes, each naming an operator of a "
        "versioned operator set (ai.onnx for the standard ones, other domains for a vendor's), the "
        "weights as initializers, and the graph's inputs and outputs with their element types and "
        "shapes. An exporter runs or traces the framework's code and writes down the operations it "
        "saw; a dimension it could not fix, such as the batch size or a sequence length, stays a "
        "symbolic name.",
        "The exporter's module path usually survives in the node names (/encoder/layer.0/attention/"
        "MatMul): Fusescope groups nodes by it into scopes, which is how the canvas can show a "
        "transformer as its layers before their operators.",
        "Importing builds Fusescope's IR: the same nodes and values, plus what ONNX leaves "
        "optional. Every intermediate value gets an element type and, where it can be worked out, "
        "a shape (Fusescope's shape inference, with ONNX's where it is available). "
        "The passes and kernels that follow rely on those types and shapes: a fusion checks that "
        "a bias matches its MatMul, the memory planner sizes every buffer from them."};
    c.figures["model"] = summaryToJson(summarizeModel(model), model.path);
    std::set<std::string> symbols;
    for (ValueId v : g.inputs)
        for (const Dim& d : g.value(v).type.shape.dims())
            if (d.isSymbolic()) symbols.insert(d.symbol());
    c.figures["symbolic_dims"] = symbols;
    std::map<std::string, size_t> scopes;  // top-level scope -> nodes in it
    for (NodeId id : g.order()) {
        const std::string& scope = g.node(id).scope;
        if (!scope.empty()) ++scopes[scope.substr(0, scope.find('/'))];
    }
    c.figures["top_level_scopes"] = scopes;
    size_t intermediates = 0, typed = 0, shaped = 0;
    for (NodeId id : g.order())
        for (ValueId v : g.node(id).outputs) {
            if (!v.valid()) continue;
            ++intermediates;
            const ValueType& t = g.value(v).type;
            typed += t.elemType != DType::Undefined;
            bool known = t.shape.rankKnown();
            for (const Dim& d : t.shape.dims()) known = known && !d.isUnknown();
            shaped += known;
        }
    c.figures["node_outputs"] = {{"count", intermediates}, {"with_element_type", typed}, {"with_shape", shaped}};
    return c;
}

// Chapter 3: each pass of the pipeline, what it changed and what it rejected and why.
WalkthroughChapter passesChapter(const WalkthroughInput& in) {
    const CompileResult& compiled = *in.session.compiledResult();
    WalkthroughChapter c;
    c.paragraphs = {
        "A pipeline is an ordered list of passes. Each pass looks for something it can improve "
        "(a constant it can fold, an identity it can drop, a pattern of nodes it can replace with "
        "one fused node) and edits the graph through one rewriter, which records every node it "
        "removed and added and, for each new node, the imported nodes it was made from.",
        "Order matters: clean-up passes run first so that patterns see the graph in a canonical "
        "form; fusions that would hide plain MatMuls run after the passes that need them (INT8 "
        "quantization, tensor parallelism); memory planning runs last, on the final schedule.",
        "A pattern that matched but could not be applied says why (a shape it cannot prove, a "
        "value read elsewhere that fusing would have to duplicate): those rejections are where a "
        "model misses a fusion it looks like it should get."};
    const nlohmann::json summary = compileSummaryJson(compiled, in.session.model()->path, in.pipelineName);
    for (const char* key : {"pipeline", "nodes_before", "nodes_after", "total_ms", "passes"}) c.figures[key] = summary[key];
    nlohmann::json reasons = nlohmann::json::object();  // per pass: reason -> how many matches it stopped
    for (const PassReport& p : compiled.trace.passes) {
        std::map<std::string, int> byReason;
        for (const Rejection& r : p.rejections) ++byReason[r.reason];
        if (!byReason.empty()) reasons[p.name] = byReason;
    }
    c.figures["rejections_by_reason"] = reasons;
    return c;
}

// One side of chapter 2: a model on the CPU with run's generated inputs, its plan's nodes
// with the cost model's work (what profile reports per node), and its iteration times.
struct TimedSide {
    std::unique_ptr<Executor> exec;
    Feeds feeds;
    Trace plan;  // nodes only: flops and bytes per plan node
    std::vector<double> samplesMs;
    int threads = 1;
};

Result<TimedSide> prepareSide(const Model& model) {
    ExecutorOptions options;
    options.threads = int(std::max(1u, std::thread::hardware_concurrency()));
    auto exec = Executor::create(model, options);
    if (!exec) return exec.status();
    auto feeds = buildFeeds(**exec, FeedOptions{});
    if (!feeds) return feeds.status();
    TimedSide side{std::move(*exec), std::move(*feeds), {}, {}, options.threads};
    addPlanNodes(*side.exec, side.feeds.tensors, side.plan);
    return side;
}

// One timed run on the side's inputs; the error says why it did not run.
Result<double> timedRun(TimedSide& side) {
    Stopwatch watch;
    auto out = side.exec->run(side.feeds.tensors);
    if (!out) return Status(out.status().code(), "did not run on generated inputs (" + out.status().message() + ")");
    return watch.elapsedMs();
}

nlohmann::json sideFigures(const TimedSide& side, size_t nodes) {
    double flops = 0, bytes = 0;
    for (const TraceNode& n : side.plan.nodes) flops += n.flops, bytes += n.bytes;
    const SampleStats stats = computeStats(side.samplesMs);
    return {{"nodes", nodes}, {"kernels", side.exec->plan().steps.size()}, {"median_ms", stats.median},
            {"p90_ms", stats.p90}, {"flops", flops}, {"bytes_moved", bytes}};
}

// Chapter 2: the imported graph run node by node against the compiled one, same runtime,
// same inputs, iterations alternating so both see the same machine.
WalkthroughChapter eagerChapter(const WalkthroughInput& in) {
    WalkthroughChapter c;
    c.paragraphs = {
        "Eager execution, a framework's default, runs each operation as the program reaches it: "
        "one kernel per operation, every intermediate written out to memory and read back by the "
        "next one, and nothing known about what comes after. Capturing the whole graph first "
        "(exporting to ONNX, torch.export, torch.compile's graph capture) gives a compiler the "
        "program at once: it can fold what is constant, fuse chains of operations into one kernel "
        "that keeps intermediates in registers or cache, and plan memory for the whole run.",
        "Here the eager side is the imported ONNX graph run node by node by Fusescope's own CPU "
        "runtime, and the compiled side the same model after the pipeline, on the same inputs, "
        "their iterations alternating. That isolates what the compiler gains; a real eager "
        "framework also pays its interpreter's dispatch for every operation, which this leaves out.",
        "Bytes moved come from the cost model (each node reads its inputs once and writes its "
        "outputs once), the same estimate profile reports per node: a fused node moves only what "
        "enters and leaves the group."};
    auto eager = prepareSide(*in.session.model());
    auto compiled = eager ? prepareSide(*in.session.compiledModel()) : Result<TimedSide>(eager.status());
    if (!compiled) {
        c.notApplicable = "The model does not run on the CPU here (" + compiled.status().message() +
                          "), so there is nothing to time; a model of standard ONNX ops would show it.";
        return c;
    }
    constexpr int kWarmup = 2, kIterations = 10;
    for (int i = 0; i < kWarmup + kIterations; ++i)
        for (TimedSide* side : {&*eager, &*compiled}) {
            auto ms = timedRun(*side);
            if (!ms) {
                c.notApplicable = "The model " + ms.status().message() + ", so there is nothing to time.";
                return c;
            }
            if (i >= kWarmup) side->samplesMs.push_back(*ms);
        }
    c.figures["eager"] = sideFigures(*eager, in.session.model()->graph->nodeCount());
    c.figures["compiled"] = sideFigures(*compiled, in.session.compiledModel()->graph->nodeCount());
    const double eagerMs = c.figures["eager"]["median_ms"], compiledMs = c.figures["compiled"]["median_ms"];
    c.figures["speedup"] = compiledMs > 0 ? eagerMs / compiledMs : 0.0;
    c.figures["timing"] = {{"backend", "cpu"}, {"threads", compiled->threads}, {"warmup", kWarmup},
                           {"iterations", kIterations}, {"inputs", "generated, seed 0"}};
    return c;
}

// Chapter 10: the compiled model's first run against warmed ones, and the spread of many.
WalkthroughChapter benchmarkingChapter(const WalkthroughInput& in) {
    WalkthroughChapter c;
    c.paragraphs = {
        "The first run of a model pays for things later runs do not: the memory plan and its "
        "arena, the kernels' own set-up (oneDNN creates its primitives for the shapes it sees), "
        "page faults on fresh memory, cold caches. Fusescope's runtime measures the sizes on a "
        "new input shape's first run and lays its arena out from them, so that run is by far the "
        "slowest, and the one after can still be slower than the rest. Timing them with the rest "
        "inflates the result; warm up first and leave those runs out.",
        "On a GPU, a kernel launch returns before the kernel has run: timing without a "
        "synchronisation (cudaDeviceSynchronize, or an event after the last kernel) measures how "
        "fast the host queues work, not how fast the GPU does it. On the CPU, as here, a run returns "
        "when its outputs are ready, so there is nothing to synchronise.",
        "One number hides the distribution. Report the median with the tail (p90, p99) and the "
        "spread; compare two things on the same inputs, threads and machine, in the same process, "
        "with their runs alternating so that both see the same background load, and with enough "
        "iterations that the tail means something."};
    auto side = prepareSide(*in.session.compiledModel());
    if (!side) {
        c.notApplicable = "The compiled model does not run on the CPU here (" + side.status().message() +
                          "), so there is nothing to time; a model of standard ONNX ops would show it.";
        return c;
    }
    constexpr int kWarmup = 2, kIterations = 30;
    std::vector<double> all;  // the warm-up runs included
    for (int i = 0; i < kWarmup + kIterations; ++i) {
        auto ms = timedRun(*side);
        if (!ms) {
            c.notApplicable = "The compiled model " + ms.status().message() + ", so there is nothing to time.";
            return c;
        }
        all.push_back(*ms);
    }
    const std::vector<double> warmed(all.begin() + kWarmup, all.end());
    const SampleStats cold = computeStats(all), s = computeStats(warmed);
    double mean = 0, variance = 0;
    for (double ms : warmed) mean += ms / double(warmed.size());
    for (double ms : warmed) variance += (ms - mean) * (ms - mean) / double(warmed.size());
    c.figures["warmup_runs_ms"] = std::vector<double>(all.begin(), all.begin() + kWarmup);
    c.figures["without_warmup"] = {{"iterations", all.size()}, {"median_ms", cold.median}, {"max_ms", cold.max}};
    c.figures["with_warmup"] = {{"warmup", kWarmup},          {"iterations", warmed.size()}, {"p50_ms", s.median},
                                {"p90_ms", s.p90},      {"p99_ms", s.p99},            {"min_ms", s.min},
                                {"max_ms", s.max},      {"max_over_min", s.min > 0 ? s.max / s.min : 0.0},
                                {"coefficient_of_variation", mean > 0 ? std::sqrt(variance) / mean : 0.0}};
    constexpr int kBins = 10;  // the warmed runs' histogram, min to max
    std::vector<int> counts(kBins, 0);
    const double width = (s.max - s.min) / kBins;
    for (double ms : warmed) ++counts[size_t(std::clamp(width > 0 ? int((ms - s.min) / width) : 0, 0, kBins - 1))];
    nlohmann::json histogram = nlohmann::json::array();
    for (int b = 0; b < kBins; ++b)
        histogram.push_back({{"from_ms", s.min + b * width}, {"to_ms", s.min + (b + 1) * width}, {"count", counts[size_t(b)]}});
    c.figures["histogram"] = std::move(histogram);
    c.figures["synchronisation"] = "not needed on the CPU: a run returns when its outputs are ready";
    c.figures["timing"] = {{"backend", "cpu"},
                           {"threads", side->threads},
                           {"inputs", "generated, seed 0"},
                           {"warmup_runs", "of a new executor; chapters run before this one in the same process may "
                                           "have warmed the kernels' libraries and caches already"}};
    return c;
}

// Chapter 6: the arena the executor planned for the compiled graph on generated inputs
// (run's inputs: seed 0, the sizes input_sizing picks), against the naive sum and the bound.
WalkthroughChapter memoryChapter(const WalkthroughInput& in) {
    WalkthroughChapter c;
    c.paragraphs = {
        "Every intermediate tensor is needed from the node that produces it to the last node that "
        "reads it. Giving each its own allocation costs the sum of all of them: the naive figure "
        "below. The planner instead lays every intermediate out in one arena, each at an offset "
        "chosen so that tensors alive at the same time never overlap (largest first, as TensorFlow "
        "Lite's arena planner does), and tensors whose lives do not overlap share bytes.",
        "No plan can use less than the most bytes alive at any one step: the lower bound. The gap "
        "between the arena and the bound is fragmentation; the gap between the naive sum and the "
        "arena is what planning saves. The schedule decides the bound itself: running a branch to "
        "its end before starting the next keeps fewer tensors alive (the O3 pipeline reorders for "
        "that).",
        "The curve is the arena's live bytes at each step of the schedule, the same the Memory dock "
        "draws; its peak is the bound."};
    ExecutorOptions options;
    auto executor = Executor::create(*in.session.compiledModel(), options);
    if (!executor) {
        c.notApplicable = "The compiled model does not run on the CPU here (" + executor.status().message() +
                          "), so there is no plan to show; a model of standard ONNX ops would show one.";
        return c;
    }
    auto feeds = buildFeeds(**executor, FeedOptions{});
    auto ran = feeds ? (*executor)->run(feeds->tensors) : Result<std::vector<RtTensor>>(feeds.status());
    const MemoryPlan* plan = ran ? (*executor)->lastMemoryPlan() : nullptr;
    if (!plan) {
        c.notApplicable = "The compiled model did not run on generated inputs (" +
                          (ran ? std::string("no plan was made") : ran.status().message()) +
                          "), so there is no plan to show; a model of standard ONNX ops would show one.";
        return c;
    }
    c.figures["arena_bytes"] = plan->arenaBytes;
    c.figures["naive_bytes"] = plan->naiveBytes;
    c.figures["lower_bound_bytes"] = plan->lowerBoundBytes;
    c.figures["intermediates"] = plan->assignments.size();
    const auto& steps = (*executor)->plan().steps;
    nlohmann::json curve = nlohmann::json::array();  // live bytes at each step
    for (size_t s = 0; s < steps.size(); ++s) {
        size_t live = 0;
        for (const auto& a : plan->assignments)
            if (a.buffer.firstStep <= s && s <= a.buffer.lastStep) live += a.buffer.bytes;
        curve.push_back({{"step", s}, {"node", steps[s].nodeName}, {"live_bytes", live}});
    }
    c.figures["live_bytes_by_step"] = std::move(curve);
    return c;
}

// Chapter 7: where the compiled graph leaves the GPU, on the CUDA capability table.
WalkthroughChapter breaksChapter(const WalkthroughInput& in) {
    const Graph& g = *in.session.compiledModel()->graph;
    WalkthroughChapter c;
    c.paragraphs = {
        "A backend says which operators (and element types) it runs in a capability table. A node "
        "the CUDA table does not claim, a vendor op or an exotic data type, runs on the host: "
        "execution leaves the GPU, the values that cross are copied over PCIe, the GPU waits for "
        "the host and then for the copy back. That is a graph break. It also cuts the graph into "
        "regions, and Fusescope replays a run as one CUDA Graph only when every node is on the "
        "device: with a break, every kernel is launched one by one, so a break costs launches as "
        "well as copies.",
        "Shape arithmetic (Shape, then Gather and Concat on the result, feeding a Reshape) is done "
        "by the host from the shapes it already knows: it needs no data from the GPU and causes no "
        "break. The fix for a real break is a device kernel for the op, or an export that avoids it.",
        "The figures below are the analysis compile --json reports: which nodes run where, each "
        "break with its reason and the bytes that cross. What those copies cost is measured by "
        "running on a GPU (fusescope-cli run --backend cuda); this chapter does not run the model."};
    const GraphBreakReport report = findGraphBreaks(g, CapabilityTable::cuda());
    c.figures["graph_breaks"] = breaksJson(report, g);
    int64_t copied = 0;
    std::map<std::string, int> hostOps;  // what falls back, by op
    for (const GraphBreak& b : report.breaks) copied += std::max<int64_t>(0, b.bytes);
    for (const GraphRegion& region : report.regions)
        if (region.placement == Placement::Host)
            for (NodeId id : region.nodes) ++hostOps[g.node(id).opType];
    c.figures["bytes_crossing_per_run"] = copied;
    c.figures["host_ops"] = hostOps;
    if (report.breaks.empty())
        c.notApplicable = "Every node of this model runs on the GPU: there is no break to show. A model with a "
                          "vendor op the CUDA table does not claim (an exporter's com.microsoft op, for one) "
                          "would show them.";
    return c;
}

std::string scalarText(const nlohmann::json& j) {
    return j.is_string() ? j.get<std::string>() : j.dump();
}

// Figures as HTML: an object as a two-column table, an array of objects as one table with a
// column per key, anything else as text.
void writeFigures(std::ostringstream& out, const nlohmann::json& j) {
    if (j.is_object()) {
        out << "<table>";
        for (const auto& [key, value] : j.items()) {
            out << "<tr><th>" << escapeXml(key) << "</th><td>";
            writeFigures(out, value);
            out << "</td></tr>";
        }
        out << "</table>";
    } else if (j.is_array() && !j.empty() && j.front().is_object()) {
        std::vector<std::string> columns;
        for (const auto& row : j)
            for (const auto& [key, value] : row.items())
                if (std::find(columns.begin(), columns.end(), key) == columns.end()) columns.push_back(key);
        out << "<table><tr>";
        for (const std::string& col : columns) out << "<th>" << escapeXml(col) << "</th>";
        out << "</tr>";
        for (const auto& row : j) {
            out << "<tr>";
            for (const std::string& col : columns) {
                out << "<td>";
                if (row.contains(col)) writeFigures(out, row[col]);
                out << "</td>";
            }
            out << "</tr>";
        }
        out << "</table>";
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) out << (i ? ", " : "") << escapeXml(scalarText(j[i]));
    } else {
        out << escapeXml(scalarText(j));
    }
}

}  // namespace

const std::vector<ChapterEntry>& walkthroughContents() {
    static const std::vector<ChapterEntry> contents = {
        {1, "From framework to ONNX to IR", true},
        {2, "Eager vs compiled", true},
        {3, "The passes, one by one", true},
        {4, "Fusion", false},
        {5, "Lowering and kernels", false},
        {6, "Memory planning", true},
        {7, "Graph breaks", true},
        {8, "Quantization", false},
        {9, "Tensor vs pipeline parallelism", false},
        {10, "Benchmarking honestly", true},
    };
    return contents;
}

Result<WalkthroughChapter> walkthroughChapter(int id, const WalkthroughInput& input) {
    const auto& contents = walkthroughContents();
    auto entry = std::find_if(contents.begin(), contents.end(), [id](const ChapterEntry& e) { return e.id == id; });
    if (entry == contents.end())
        return Status(ErrorCode::InvalidArgument, "there is no chapter " + std::to_string(id) + " (1 to 10)");
    if (!entry->written)
        return Status(ErrorCode::InvalidArgument,
                      "chapter " + std::to_string(id) + " (" + entry->title + ") is not in this build yet");
    if (!input.session.model() || !input.session.compiledResult())
        return Status(ErrorCode::InvalidArgument, "the walkthrough needs a model opened and compiled");
    WalkthroughChapter chapter = id == 1   ? modelChapter(input)
                                 : id == 2 ? eagerChapter(input)
                                 : id == 3 ? passesChapter(input)
                                 : id == 6 ? memoryChapter(input)
                                 : id == 7 ? breaksChapter(input)
                                           : benchmarkingChapter(input);
    chapter.id = id;
    chapter.title = entry->title;
    return chapter;
}

nlohmann::json walkthroughJson(const std::vector<WalkthroughChapter>& chapters, const std::string& model) {
    nlohmann::json j;
    j["schema"] = kWalkthroughSchema;
    j["model"] = model;
    j["chapters"] = nlohmann::json::array();
    for (const WalkthroughChapter& c : chapters) {
        nlohmann::json cj = {{"id", c.id}, {"title", c.title}, {"paragraphs", c.paragraphs}, {"figures", c.figures}};
        if (!c.notApplicable.empty()) cj["not_applicable"] = c.notApplicable;
        j["chapters"].push_back(std::move(cj));
    }
    return j;
}

std::string walkthroughHtml(const std::vector<WalkthroughChapter>& chapters, const std::string& model) {
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Walkthrough: " << escapeXml(model)
        << "</title>\n<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.45}"
           "table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #ccc;padding:2px 6px;"
           "text-align:left;vertical-align:top;font-size:90%}th{background:#f2f2f2}"
           "h2{border-bottom:1px solid #ddd;margin-top:2em}.na{color:#a33}</style></head><body>\n"
        << "<h1>From model to kernels: " << escapeXml(model) << "</h1>\n<ol>";
    for (const WalkthroughChapter& c : chapters)
        out << "<li value=\"" << c.id << "\"><a href=\"#chapter-" << c.id << "\">" << escapeXml(c.title) << "</a></li>";
    out << "</ol>\n";
    for (const WalkthroughChapter& c : chapters) {
        out << "<h2 id=\"chapter-" << c.id << "\">" << c.id << ". " << escapeXml(c.title) << "</h2>\n";
        for (const std::string& p : c.paragraphs) out << "<p>" << escapeXml(p) << "</p>\n";
        if (!c.notApplicable.empty()) out << "<p class=\"na\">" << escapeXml(c.notApplicable) << "</p>\n";
        out << "<h3>This model</h3>\n";
        writeFigures(out, c.figures);
        out << "\n";
    }
    out << "</body></html>\n";
    return out.str();
}

}  // namespace fsc
