#include <algorithm>
#include <cmath>
#include <thread>

#include "app/walkthrough/walkthrough_chapters.h"
#include "app/walkthrough/walkthrough_figures.h"
#include "compiler/runtime/thread_pool.h"
#include "app/profiling/trace_recorder.h"
#include "profiler/cpu_timer.h"
#include "profiler/report_charts.h"

namespace fsc {

const char* backendOf(const WalkthroughInput& in) {
    return in.target().name();
}

Result<TimedSide> prepareSide(const Model& model, const WalkthroughInput& in) {
    auto variant = prepareVariant(model, in.target(), in.feeds());
    if (!variant) return variant.status();
    TimedSide side;
    static_cast<TimedVariant&>(side) = std::move(*variant);
    side.threads = side.exec->threadsInUse();
    addPlanNodes(*side.exec, side.feeds, side.plan);
    return side;
}

Status alternateRuns(const std::vector<TimedSide*>& sides, int warmup, int iterations,
                     const std::atomic<bool>* cancel) {
    const std::vector<TimedVariant*> variants(sides.begin(), sides.end());
    Status ran = alternateRounds(variants, warmup, iterations, 1, cancel);
    if (ran || ran.code() == ErrorCode::Cancelled) return ran;
    return Status(ran.code(), "did not run on generated inputs (" + ran.message() + ")");
}

Result<const CompiledLatency*> compiledLatency(const WalkthroughInput& in, TimedSide* alongside) {
    CompiledLatency& record = *in.compiledLatency;
    const std::lock_guard lock(record.mutex);
    if (record.measured) return &record;
    auto compiled = prepareSide(*in.session.compiledModel(), in);
    if (!compiled) return compiled.status();
    const int warmup = in.warmupOr(2), iterations = in.iterationsOr(30);
    std::vector<TimedSide*> sides{&*compiled};
    if (alongside) sides.push_back(alongside);
    if (in.progress)
        in.progress("timing the compiled model: " + std::to_string(iterations) + " runs after " + std::to_string(warmup) +
                    " warm-ups" + (alongside ? ", the imported graph's alternating" : ""));
    if (Status ran = alternateRuns(sides, warmup, iterations, in.cancel); !ran) return ran;
    record.warmupMs = std::move(compiled->warmupMs);
    record.samplesMs = std::move(compiled->samplesMs);
    record.threads = compiled->threads;
    record.method = std::to_string(iterations) + " runs of a new executor after " + std::to_string(warmup) +
                    " warm-ups" + (alongside ? ", alternating with the imported graph's (chapter 2)" : "") +
                    "; chapters 2, 8 and 10 all report this one measurement";
    record.measured = true;
    return &record;
}

std::string timingWarningOf(const std::vector<const TimedSide*>& sides) {
    for (const TimedSide* side : sides)
        if (std::string why = computeStats(side->samplesMs).disturbed; !why.empty()) return why;
    return {};
}

bool cancelled(const WalkthroughInput& in) {
    return in.cancel && in.cancel->load();
}

namespace {

nlohmann::json sideFigures(const TimedSide& side, size_t nodes) {
    double flops = 0, bytes = 0;
    for (const TraceNode& n : side.plan.nodes) flops += n.flops, bytes += n.bytes;
    const SampleStats stats = computeStats(side.samplesMs);
    return {{"nodes", nodes}, {"kernels", side.exec->plan().steps.size()}, {"median_ms", stats.median},
            {"p90_ms", stats.p90}, {"flops", flops}, {"bytes_moved", bytes}};
}

}  // namespace

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
        "Here the eager side is the imported ONNX graph run node by node by Fusescope's own "
        "runtime, and the compiled side the same model after the pipeline, on the same inputs, "
        "their iterations alternating. That isolates what the compiler gains; a real eager "
        "framework also pays its interpreter's dispatch for every operation, which this leaves out.",
        "Bytes moved come from the cost model (each node reads its inputs once and writes its "
        "outputs once), the same estimate profile reports per node: a fused node moves only what "
        "enters and leaves the group."};
    auto eager = prepareSide(*in.session.model(), in);
    // The compiled side's executor gives the plan's figures; its times are the one measurement.
    auto compiled = eager ? prepareSide(*in.session.compiledModel(), in) : Result<TimedSide>(eager.status());
    if (!compiled) {
        c.notApplicable = "The model does not run on the CPU here (" + compiled.status().message() +
                          "), so there is nothing to time; a model of standard ONNX ops would show it.";
        return c;
    }
    auto latency = compiledLatency(in, &*eager);
    Status ran = latency ? Status() : latency.status();
    const int kWarmup = in.warmupOr(2), kIterations = in.iterationsOr(30);
    if (ran && eager->samplesMs.empty())  // measured by an earlier chapter: the imported graph's runs alone
        ran = alternateRuns({&*eager}, kWarmup, kIterations, in.cancel);
    if (!ran) {
        if (ran.code() == ErrorCode::Cancelled) return c;
        c.notApplicable = "The model " + ran.message() + ", so there is nothing to time.";
        return c;
    }
    compiled->samplesMs = (*latency)->samplesMs;
    compiled->threads = (*latency)->threads;
    c.timingWarning = timingWarningOf({&*eager, &*compiled});
    c.figures["eager"] = sideFigures(*eager, in.session.model()->graph->nodeCount());
    c.figures["compiled"] = sideFigures(*compiled, in.session.compiledModel()->graph->nodeCount());
    const double eagerMs = c.figures["eager"]["median_ms"], compiledMs = c.figures["compiled"]["median_ms"];
    c.figures["speedup"] = compiledMs > 0 ? eagerMs / compiledMs : 0.0;
    c.charts.push_back({"Median time per iteration (" + std::string(backendOf(in)) + " backend, measured)",
                        barChartSvg({{"imported, node by node", eagerMs}, {"compiled (" + in.pipelineName + ")", compiledMs}}, "ms")});
    c.figures["timing"] = {{"backend", backendOf(in)},
                           {"threads", compiled->threads},
                           {"warmup", kWarmup},
                           {"iterations", eager->samplesMs.size()},
                           {"inputs", "generated, seed 0"},
                           {"compiled_measurement", (*latency)->method}};
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
    auto latency = compiledLatency(in);
    if (!latency) {
        if (latency.status().code() == ErrorCode::Cancelled) return c;
        c.notApplicable = "The compiled model does not run on the " + std::string(backendOf(in)) + " backend here (" +
                          latency.status().message() + "), so there is nothing to time.";
        return c;
    }
    const CompiledLatency& record = **latency;
    const size_t kWarmup = record.warmupMs.size();
    std::vector<double> all = record.warmupMs;  // the warm-up runs included
    all.insert(all.end(), record.samplesMs.begin(), record.samplesMs.end());
    const std::vector<double> warmed(all.begin() + std::ptrdiff_t(kWarmup), all.end());
    const SampleStats cold = computeStats(all), s = computeStats(warmed);
    c.timingWarning = s.disturbed;
    double mean = 0, variance = 0;
    for (double ms : warmed) mean += ms / double(warmed.size());
    for (double ms : warmed) variance += (ms - mean) * (ms - mean) / double(warmed.size());
    c.figures["warmup_runs_ms"] = record.warmupMs;
    c.figures["without_warmup"] = {{"iterations", all.size()}, {"median_ms", cold.median}, {"max_ms", cold.max}};
    c.figures["with_warmup"] = {{"warmup", kWarmup},          {"iterations", warmed.size()}, {"p50_ms", s.median},
                                {"p90_ms", s.p90},      {"p99_ms", s.p99},            {"min_ms", s.min},
                                {"max_ms", s.max},      {"max_over_min", s.min > 0 ? s.max / s.min : 0.0},
                                {"coefficient_of_variation", mean > 0 ? std::sqrt(variance) / mean : 0.0}};
    // Nearest rank: under 100 runs the p99 is the slowest run itself.
    if (warmed.size() < 100)
        c.figures["with_warmup"]["p99_note"] = "with " + std::to_string(warmed.size()) +
                                               " runs the p99 is the slowest run; a p99 needs at least 100";
    constexpr int kBins = 10;  // the warmed runs' histogram, min to max
    std::vector<int> counts(kBins, 0);
    const double width = (s.max - s.min) / kBins;
    for (double ms : warmed) ++counts[size_t(std::clamp(width > 0 ? int((ms - s.min) / width) : 0, 0, kBins - 1))];
    nlohmann::json histogram = nlohmann::json::array();
    for (int b = 0; b < kBins; ++b)
        histogram.push_back({{"from_ms", s.min + b * width}, {"to_ms", s.min + (b + 1) * width}, {"count", counts[size_t(b)]}});
    c.figures["histogram"] = std::move(histogram);
    std::vector<std::string> edges;
    for (int b = 0; b <= kBins; ++b) edges.push_back(figureValueText("ms", s.min + b * width));
    c.charts.push_back({"Warmed iteration times, " + std::to_string(kBins) + " bins from the fastest to the slowest run",
                        columnChartSvg(std::vector<double>(counts.begin(), counts.end()), "iteration time", "runs", edges)});
    c.figures["synchronisation"] = in.target().device ? "each run ends by copying its outputs to the host, which waits for the GPU"
                                             : "not needed on the CPU: a run returns when its outputs are ready";
    c.figures["timing"] = {{"backend", backendOf(in)},
                           {"threads", record.threads},
                           {"inputs", "generated, seed 0"},
                           {"warmup_runs", kWarmup},
                           {"measurement", record.method},
                           {"warmup_note", "of a new executor; chapters run before this one in the same process may "
                                           "have warmed the kernels' libraries and caches already"}};
    return c;
}

}  // namespace fsc
