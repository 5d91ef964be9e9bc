#include "app/common/profile_session.h"

#include "compiler/backends/cuda/device.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "app/common/device_peaks.h"
#include "compiler/cost_model.h"
#include "compiler/runtime/executor.h"
#include "profiler/cpu_timer.h"
#include "profiler/cupti/nvtx_range.h"

namespace fsc {
namespace {

// Records each launch of the profiled runs as an activity, times from the trace's start.
class TraceRecorder : public ExecutionListener {
public:
    explicit TraceRecorder(Trace& trace) : m_trace(trace) {}
    void onBegin(const LaunchEvent& e) override {
        if (recording) nvtxPush(e.nodeName->c_str());  // Nsight Systems sees the same nodes
    }
    void onLaunch(const LaunchEvent& e) override {
        if (!recording) return;
        nvtxPop();
        Activity a;
        a.kind = ActivityKind::Kernel;
        a.name = *e.kernelId;
        a.startNs = e.startNs - originNs;
        a.endNs = e.endNs - originNs;
        a.stream = e.stream;
        a.node = e.depth == 0 ? int64_t(e.node.index) : -1;  // nested ids belong to subgraphs
        a.depth = e.depth;
        a.iteration = iteration;
        if (e.depth > 0) a.name += " (" + *e.nodeName + ")";
        m_trace.activities.push_back(std::move(a));
    }
    bool recording = false;
    int iteration = 0;
    int64_t originNs = 0;

private:
    Trace& m_trace;
};

int64_t steadyNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

std::string cpuName(int threads) {
    std::ifstream info("/proc/cpuinfo");
    std::string line, model = "CPU";
    while (std::getline(info, line))
        if (line.rfind("model name", 0) == 0) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    return model + ", " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s");
}

// Symbol values from the feeds actually given: the cost model sizes with them.
DimBindings bindingsFrom(const Executor& exec, const std::vector<RtTensor>& feeds) {
    DimBindings bindings;
    for (size_t i = 0; i < feeds.size() && i < exec.feeds().size(); ++i) {
        const auto& dims = exec.graph().value(exec.feeds()[i]).type.shape.dims();
        for (size_t d = 0; d < dims.size() && d < feeds[i].dims.size(); ++d)
            if (!dims[d].isKnown() && !dims[d].symbol().empty()) bindings[dims[d].symbol()] = feeds[i].dims[d];
    }
    return bindings;
}

}  // namespace

Result<Trace> profileGraph(const ProfileRequest& request, const std::atomic<bool>* cancel,
                           const std::function<void(int, int)>& progress) {
    ExecutorOptions options;
    options.threads = request.threads > 0 ? request.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    if (request.device) {
        options.backend = Backend::Cuda;
        options.device = request.device;
    }
    auto executor = Executor::create(request.graph, request.opsets, options);
    if (!executor) return executor.status();
    Executor& exec = **executor;
    auto feeds = buildFeeds(exec, request.feeds);
    if (!feeds) return feeds.status();

    Trace trace;
    trace.model = request.model;
    trace.pipeline = request.pipeline;
    trace.backend = request.device ? "cuda" : "cpu";
    trace.device = request.device ? request.device->name() : cpuName(options.threads);
    trace.iterations = request.iterations;
    trace.warmup = request.warmup;
    trace.startedAt = utcNow();
    trace.passes = request.passes;
    for (size_t i = 0; i < feeds->tensors.size(); ++i) {
        const std::string& source = feeds->sources[i];
        trace.inputs.push_back(exec.graph().value(exec.feeds()[i]).name + " " + feeds->tensors[i].typeString() + " (" +
                               (source == "random" ? "random, seed " + std::to_string(request.feeds.seed) : source) + ")");
    }

    TraceRecorder recorder(trace);
    RunOptions withProfiler;
    withProfiler.listener = &recorder;
    withProfiler.cancel = cancel;
    RunOptions without;
    without.cancel = cancel;
    const int total = request.warmup + 2 * request.iterations;
    int done = 0;
    auto runOnce = [&](const RunOptions& options) -> Result<double> {
        Stopwatch watch;
        auto result = exec.run(feeds->tensors, options);
        const double ms = watch.elapsedMs();
        if (cancel && cancel->load()) return Status(ErrorCode::InvalidArgument, "profiling cancelled");
        if (!result) return result.status();
        if (progress) progress(++done, total);
        return ms;
    };
    for (int i = 0; i < request.warmup; ++i)
        if (auto r = runOnce(without); !r) return r.status();
    // Unprofiled and profiled runs alternate, so drift (clock, cache, other load) hits both.
    std::vector<double> plain, profiled;
    recorder.originNs = steadyNowNs();
    for (int i = 0; i < request.iterations; ++i) {
        auto p = runOnce(without);
        if (!p) return p.status();
        plain.push_back(*p);
        recorder.recording = true;
        recorder.iteration = i;
        const std::string label = "iteration " + std::to_string(i);
        nvtxPush(label.c_str());
        const int64_t begin = steadyNowNs();
        auto q = runOnce(withProfiler);
        const int64_t end = steadyNowNs();
        nvtxPop();
        recorder.recording = false;
        if (!q) return q.status();
        profiled.push_back(*q);
        // The host's view of each profiled iteration: a range on its own lane, as NVTX shows it.
        Activity range;
        range.kind = ActivityKind::Range;
        range.name = label;
        range.startNs = begin - recorder.originNs;
        range.endNs = end - recorder.originNs;
        range.stream = -1;
        range.iteration = i;
        trace.activities.push_back(std::move(range));
    }
    const DevicePeaks peaks = measureCpuPeaks();  // the roofline's roofs, after the timed runs so they disturb nothing
    trace.peakFlopsPerSecond = peaks.flopsPerSecond;
    trace.peakBytesPerSecond = peaks.bytesPerSecond;
    trace.peaksSource = peaks.source;
    trace.unprofiledMs = computeStats(plain).median;
    trace.profiledMs = computeStats(profiled).median;
    // Timed from the first profiled launch: the timeline starts at 0.
    std::stable_sort(trace.activities.begin(), trace.activities.end(),
                     [](const Activity& a, const Activity& b) { return a.startNs < b.startNs; });
    if (!trace.activities.empty()) {
        const int64_t first = trace.activities.front().startNs;
        for (Activity& a : trace.activities) a.startNs -= first, a.endNs -= first;
    }

    // Plan nodes: provenance and cost-model work per execution.
    const Graph& graph = exec.graph();
    const DimBindings bindings = bindingsFrom(exec, feeds->tensors);
    for (const PlanStep& step : exec.plan().steps) {
        const Node& n = graph.node(step.node);
        TraceNode t;
        t.id = step.node.index;
        t.name = n.name;
        t.opType = n.domain.empty() ? n.opType : n.domain + "::" + n.opType;
        t.kernelId = step.kernelId;
        for (NodeId o : n.origins)
            if (o.index < graph.nodeArenaSize()) t.origins.push_back(graph.node(o).name);
        if (t.origins.empty()) t.origins.push_back(n.name);
        const NodeCost cost = estimateNodeCost(graph, n, bindings);
        t.flops = cost.flops;
        t.bytes = cost.bytes;
        trace.nodes.push_back(std::move(t));
    }

    // Planned memory: the arena's live bytes at each step of the first profiled iteration.
    if (const MemoryPlan* plan = exec.lastMemoryPlan()) {
        std::vector<int64_t> stepStart;
        for (const Activity& a : trace.activities)
            if (a.kind == ActivityKind::Kernel && a.iteration == 0 && a.depth == 0) stepStart.push_back(a.startNs);
        for (size_t s = 0; s < stepStart.size(); ++s) {
            int64_t live = 0;
            for (const auto& assignment : plan->assignments)
                if (assignment.buffer.firstStep <= s && s <= assignment.buffer.lastStep) live += int64_t(assignment.buffer.bytes);
            const std::string label = s < exec.plan().steps.size() ? exec.plan().steps[s].nodeName : std::string();
            trace.plannedMemory.push_back({stepStart[s], live, label});
        }
        for (const auto& assignment : plan->assignments)
            trace.plannedBuffers.push_back({graph.value(assignment.buffer.value).name, int64_t(assignment.offset),
                                            int64_t(assignment.buffer.bytes), int64_t(assignment.buffer.firstStep),
                                            int64_t(assignment.buffer.lastStep)});
        // The CPU executor allocates one arena per input-shape signature, once.
        trace.measuredMemory.push_back({0, int64_t(plan->arenaBytes), "arena (allocated once)"});
    }
    return trace;
}

}  // namespace fsc
