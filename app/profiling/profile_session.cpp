#include "app/profiling/profile_session.h"
#include "compiler/runtime/thread_pool.h"

#include "compiler/backends/cuda/device.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>
#include <unordered_map>

#include "app/profiling/device_peaks.h"
#include "app/profiling/device_profiler.h"
#include "app/profiling/trace_recorder.h"
#include "compiler/backends/cuda/device_query.h"
#include "compiler/cost_model.h"
#include "compiler/runtime/executor.h"
#include "core/out_of_memory.h"
#include "profiler/cpu_timer.h"
#include "profiler/cupti/nvtx_range.h"

namespace fsc {
namespace {

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

// The roofline's roofs: the GPU's from its device query; the CPU's, measured, for a CPU run
// or the simulated device (which runs on the CPU).
DevicePeaks peaksFor(const Device* device, const Graph& graph) {
    if (!device || device->simulated()) {
        DevicePeaks peaks = measureCpuPeaks();
        if (device) peaks.source = "the simulated device runs on the CPU: " + peaks.source;
        return peaks;
    }
    const CudaDeviceReport report = queryCudaDevices();
    if (report.devices.empty()) return DevicePeaks{0, 0, "no roofs: " + report.whyNone};
    bool half = false;
    for (uint32_t v = 0; v < graph.valueCount() && !half; ++v) {
        const DType t = graph.value(ValueId{v}).type.elemType;
        half = t == DType::Float16 || t == DType::BFloat16;
    }
    return gpuPeaksFromQuery(report.devices.front(), half);
}

Result<Trace> profileGraphUnguarded(const ProfileRequest& request, const std::atomic<bool>* cancel,
                                    const std::function<void(int, int)>& progress) {
    const ExecutorOptions options = executorOptions(request.target);
    auto executor = Executor::create(request.graph, request.opsets, options);
    if (!executor) return executor.status();
    Executor& exec = **executor;
    auto feeds = buildFeeds(exec, request.feeds);
    if (!feeds) return feeds.status();

    Trace trace;
    trace.model = request.model;
    trace.pipeline = request.pipeline;
    trace.backend = request.target.device ? "cuda" : "cpu";
    trace.device = request.target.device ? request.target.device->name() : cpuName(exec.threadsInUse());
    trace.iterations = request.iterations;
    trace.warmup = request.warmup;
    trace.startedAt = utcNow();
    trace.passes = request.passes;
    for (size_t i = 0; i < feeds->tensors.size(); ++i) {
        const std::string& source = feeds->sources[i];
        trace.inputs.push_back(exec.graph().value(exec.feeds()[i]).name + " " + feeds->tensors[i].typeString() + " (" +
                               (source == "random" ? "random, seed " + std::to_string(request.feeds.seed) : source) + ")");
    }

    // CUDA runs: every unprofiled run first, then CUPTI on for the profiled ones, so the
    // unprofiled times carry none of its cost (CPU runs alternate the two against drift).
    std::unique_ptr<DeviceProfiler> deviceProfiler = request.target.device ? DeviceProfiler::forDevice(request.target.device) : nullptr;
    TraceRecorder recorder(trace, deviceProfiler.get());
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
        if (cancel && cancel->load()) return Status(ErrorCode::Cancelled, "profiling cancelled");
        if (!result) return withSizingHint(result.status(), feeds->sizing);
        if (progress) progress(++done, total);
        return ms;
    };
    for (int i = 0; i < request.warmup; ++i)
        if (auto r = runOnce(without); !r) return r.status();
    std::vector<double> plain, profiled;
    recorder.originNs = TraceRecorder::nowNs();
    auto profiledRun = [&](int i) -> Status {
        recorder.recording = true;
        recorder.iteration = i;
        const std::string label = "iteration " + std::to_string(i);
        nvtxPush(label.c_str());
        const int64_t begin = TraceRecorder::nowNs();
        if (deviceProfiler) deviceProfiler->pushNode(-1, i, 0);  // copies outside any node: still this iteration's
        auto q = runOnce(withProfiler);
        if (deviceProfiler) deviceProfiler->popNode();
        const int64_t end = TraceRecorder::nowNs();
        nvtxPop();
        recorder.recording = false;
        if (!q) return q.status();
        if (deviceProfiler) FSC_RETURN_IF_ERROR(deviceProfiler->drain().withContext("profiled iteration " + std::to_string(i)));
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
        return Status::ok();
    };
    if (deviceProfiler) {
        for (int i = 0; i < request.iterations; ++i) {
            auto p = runOnce(without);
            if (!p) return p.status();
            plain.push_back(*p);
        }
        recorder.originNs = TraceRecorder::nowNs();
        if (Status started = deviceProfiler->start(); !started.isOk())
            return Status(ErrorCode::Unsupported, "no device timings: " + started.message());
        for (int i = 0; i < request.iterations; ++i) FSC_RETURN_IF_ERROR(profiledRun(i));
        deviceProfiler->stop();
    } else {
        // Unprofiled and profiled runs alternate, so drift (clock, cache, other load) hits both.
        for (int i = 0; i < request.iterations; ++i) {
            auto p = runOnce(without);
            if (!p) return p.status();
            plain.push_back(*p);
            FSC_RETURN_IF_ERROR(profiledRun(i));
        }
    }
    const DevicePeaks peaks = peaksFor(request.target.device.get(), exec.graph());  // after the timed runs: they disturb nothing
    trace.peakFlopsPerSecond = peaks.flopsPerSecond;
    trace.peakBytesPerSecond = peaks.bytesPerSecond;
    trace.peaksSource = peaks.source;
    const SampleStats plainStats = computeStats(plain);
    trace.unprofiledMs = plainStats.median;
    trace.timingWarning = plainStats.disturbed;
    if (plainStats.median > 0) trace.unprofiledSpreadPercent = 100.0 * (plainStats.p90 - plainStats.min) / plainStats.median;
    trace.profiledMs = computeStats(profiled).median;
    addPlanNodes(exec, feeds->tensors, trace);
    const Graph& graph = exec.graph();
    // The device's records (after the nodes, which label its allocations), on the same clock.
    const MemoryPlan* plan = exec.lastMemoryPlan();
    if (deviceProfiler) {
        deviceProfiler->finish(trace, recorder.originNs);
        // What CUPTI saw allocated during the runs comes on top of the arena, allocated before.
        for (MemorySample& m : trace.measuredMemory) m.bytes += plan ? int64_t(plan->arenaBytes) : 0;
    }

    // Timed from the first profiled launch: the timeline starts at 0.
    std::stable_sort(trace.activities.begin(), trace.activities.end(),
                     [](const Activity& a, const Activity& b) { return a.startNs < b.startNs; });
    if (!trace.activities.empty()) {
        const int64_t first = trace.activities.front().startNs;
        for (Activity& a : trace.activities) a.startNs -= first, a.endNs -= first;
        for (MemorySample& m : trace.measuredMemory) m.timeNs = std::max<int64_t>(0, m.timeNs - first);
    }

    // Planned memory: the arena's live bytes at each step of the first profiled iteration,
    // from the step's first activity (a step that launched nothing, an alias, has none).
    if (plan) {
        std::unordered_map<int64_t, int64_t> firstStart;
        for (const Activity& a : trace.activities)
            if (a.kind != ActivityKind::Range && a.iteration == 0 && a.depth == 0 && a.node >= 0) firstStart.try_emplace(a.node, a.startNs);
        for (size_t s = 0; s < exec.plan().steps.size(); ++s) {
            auto at = firstStart.find(int64_t(exec.plan().steps[s].node.index));
            if (at == firstStart.end()) continue;
            int64_t live = 0;
            for (const auto& assignment : plan->assignments)
                if (assignment.buffer.firstStep <= s && s <= assignment.buffer.lastStep) live += int64_t(assignment.buffer.bytes);
            trace.plannedMemory.push_back({at->second, live, exec.plan().steps[s].nodeName});
        }
        std::stable_sort(trace.plannedMemory.begin(), trace.plannedMemory.end(),
                         [](const MemorySample& a, const MemorySample& b) { return a.timeNs < b.timeNs; });
        for (const auto& assignment : plan->assignments)
            trace.plannedBuffers.push_back({graph.value(assignment.buffer.value).name, int64_t(assignment.offset),
                                            int64_t(assignment.buffer.bytes), int64_t(assignment.buffer.firstStep),
                                            int64_t(assignment.buffer.lastStep)});
        // One arena per input-shape signature, allocated once before the timed runs.
        trace.measuredMemory.insert(trace.measuredMemory.begin(), {0, int64_t(plan->arenaBytes), "arena (allocated once)"});
    }
    // An automatic pool chose its threads per run: name what the last runs used.
    if (!request.target.device) trace.device = cpuName(exec.threadsInUse());
    return trace;
}

}  // namespace

Result<Trace> profileGraph(const ProfileRequest& request, const std::atomic<bool>* cancel,
                           const std::function<void(int, int)>& progress) {
    try {
        return profileGraphUnguarded(request, cancel, progress);
    } catch (const std::bad_alloc& e) {  // the peak-bandwidth probe, the trace's buffers
        return outOfMemoryStatus(e).withContext("profiling");
    }
}

}  // namespace fsc
