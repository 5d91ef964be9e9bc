#pragma once
// Pass ablation: what each pass of a pipeline bought on this model and machine. Every pass
// (by name, all its steps, as `--disable` leaves it out) is compiled away in turn and the
// variants are timed with the full pipeline in alternating rounds; a variant whose graph is
// the full pipeline's is not timed (the pass changed nothing that reaches the end), one that
// does not compile or run says so. Later passes that apply less without a pass are the
// passes it enables; those that apply more take over part of its work.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "compiler/pipelines.h"
#include "compiler/runtime/feeds.h"
#include "core/graph.h"
#include "core/status.h"
#include "profiler/cpu_timer.h"

namespace fsc {

struct AblationOptions {
    std::vector<std::string> passes;  // the passes to leave out, one at a time; empty: every pass
    bool cumulative = false;          // also time the pipeline up to each of its steps
    int warmup = 2;                   // untimed runs of each variant first
    int rounds = 5;                   // alternating rounds
    int runsPerRound = 3;             // runs of a variant in a row within a round (their median counts)
    int settle = 1;                   // untimed runs of a variant before its timed ones in each round
    FeedOptions feeds;                // the inputs (seeded, the same for every variant)
};

// What one compiled variant is and how fast it ran.
struct VariantFigures {
    size_t nodes = 0, kernels = 0;
    int64_t arenaBytes = 0;
    std::vector<double> samplesMs, roundMediansMs;
    SampleStats latency;  // over every timed run
};

// Another pass whose rewrites changed when this one was left out.
struct PassInteraction {
    std::string pass;
    int appliedWith = 0, appliedWithout = 0;
};

struct PassEffect {
    std::string label;  // the pass left out, or "up to 7. conv-bn-fusion" for a cumulative step
    std::string pass;
    enum class Kind { Measured, SameGraph, Failed } kind = Kind::Measured;
    std::string note;      // why it was not timed (Kind::SameGraph, Kind::Failed)
    VariantFigures figures;  // for SameGraph: those of the graph it equals
    // What the pass saved, round by round: the time without it over the time with it (for a
    // pass left out, this variant against the full pipeline; for a cumulative step, the step
    // before against this one), as the median of the rounds' ratios and differences and the
    // range of the ratios. Above 1 (and a positive deltaMs): the pass paid.
    double ratio = 1, lowestRatio = 1, highestRatio = 1;
    double deltaMs = 0;
    bool aboveNoise = false;
    std::vector<PassInteraction> enables, takesOver;
};

struct AblationReport {
    std::string model, pipeline, target;
    int threads = 0;
    VariantFigures full;
    std::vector<PassEffect> without;  // one per pass left out, in pipeline order
    std::vector<PassEffect> upTo;     // --cumulative: the imported graph, then one per step
    int warmup = 0, rounds = 0, runsPerRound = 0, settle = 0;
    double seconds = 0;               // wall clock of the whole ablation
    std::string noiseRule;            // when a difference counts as above noise, in words
};

// What an ablation is doing: a line for people, and the share done (compiles count one
// run each) for a progress bar.
struct AblationProgress {
    std::string what;
    int done = 0, total = 1;
};

// `progress` hears each compile and each timed run; a cancel returns Cancelled between them.
Result<AblationReport> ablatePasses(const Model& model, const PipelineSpec& pipeline, const std::string& pipelineName,
                                    const AblationOptions& options, const std::atomic<bool>* cancel = nullptr,
                                    const std::function<void(const AblationProgress&)>& progress = {});

// `pipeline` with every step of `pass` left out, as ablation compiles it (and as compile
// --disable leaves it out).
PipelineSpec pipelineWithout(const PipelineSpec& pipeline, const std::string& pass);

// Whether `ratio`s of every round sit on one side of 1 and their median at least
// kAblationNoiseShare away from it: the rule behind PassEffect::aboveNoise.
constexpr double kAblationNoiseShare = 0.03;
bool aboveNoise(const std::vector<double>& roundRatios);

}  // namespace fsc
