#include <map>
#include <set>

#include "compiler/target.h"
#include "app/walkthrough/walkthrough_chapters.h"
#include "app/reports/compile_report.h"
#include "app/reports/graph_breaks_report.h"
#include "app/reports/summary_json.h"
#include "compiler/runtime/capability_table.h"
#include "compiler/graph_breaks.h"
#include "compiler/runtime/memory_plan.h"
#include "core/model_summary.h"
#include "profiler/report_charts.h"

namespace fsc {

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
        "quantization, tensor parallelism); the memory-aware schedule comes last, on the nodes that will really run.",
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
    auto executor = Executor::create(*in.session.compiledModel(), cpuExecutorOptions());
    if (!executor) {
        c.notApplicable = "The compiled model does not run on the CPU here (" + executor.status().message() +
                          "), so there is no plan to show; a model of standard ONNX ops would show one.";
        return c;
    }
    auto feeds = buildFeeds(**executor, in.feeds());
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
    std::vector<double> live;
    for (const auto& step : curve) live.push_back(step["live_bytes"].get<double>());
    c.figures["live_bytes_by_step"] = std::move(curve);
    std::vector<PlannedBuffer> buffers;
    for (const auto& a : plan->assignments)
        buffers.push_back({in.session.compiledModel()->graph->value(a.buffer.value).name, int64_t(a.offset),
                           int64_t(a.buffer.bytes), int64_t(a.buffer.firstStep), int64_t(a.buffer.lastStep)});
    c.charts.push_back({"The plan: each intermediate a block from the step that writes it to the last that reads it, at "
                        "its offset in the arena; blocks that never live at once share bytes",
                        arenaLayoutSvg(buffers, int64_t(steps.size()), int64_t(plan->arenaBytes))});
    c.charts.push_back({"Live bytes at each step of the schedule (the arena's occupancy; its peak is the lower bound)",
                        columnChartSvg(live, "schedule step", "bytes")});
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
        "running on a GPU (fusescope-cli run --backend cuda); this chapter does not run the model.",
        "In an interview, \"graph break\" usually means something earlier: PyTorch's compiler "
        "(TorchDynamo) traces Python into a graph and breaks it where it cannot follow the code: "
        "control flow that depends on a tensor's values, a .item() or print() that needs a value "
        "on the host, a call into a library it does not understand. Each break ends one compiled "
        "graph and falls back to eager Python until the next one starts, so fusions cannot cross "
        "it. An ONNX file is what an exporter captured with no such breaks left: data-dependent "
        "branches became If or Loop nodes (or were traced down one path), so the breaks above are "
        "the second kind, between a backend's capabilities and the ops in the file. "
        "torch._dynamo.explain lists the first kind; this chapter lists the second."};
    const GraphBreakReport report = findGraphBreaks(g, cudaCapabilities());
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

}  // namespace fsc
