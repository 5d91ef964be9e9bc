#pragma once
// A compiled model ready to be timed beside others: its executor, its inputs (generated
// from a seed, so every variant of one model gets the same ones) and the runs taken so far.
// Ablation and the walkthrough's timed chapters time their variants in alternating rounds
// with it, so each sees the same machine.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "compiler/target.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct TimedVariant {
    std::unique_ptr<Executor> exec;  // holds what it runs (its own copy of the graph)
    std::vector<RtTensor> feeds;
    std::vector<double> warmupMs, samplesMs;  // every run, in order
    std::vector<double> roundMediansMs;       // one per round: the median of its runs
};

// An executor for `model` on `target` and its inputs.
Result<TimedVariant> prepareVariant(const Model& model, const Target& target, const FeedOptions& feeds);
// One run of the variant on its inputs, in milliseconds.
Result<double> timeOneRun(TimedVariant& variant);

// `warmup` untimed runs of each variant, then `rounds` rounds in which every variant runs
// `settle` untimed times and then `runsPerRound` timed times; the order of the variants turns
// by one each round, so none always runs first. The settling runs absorb what switching from
// another executor costs the first run (ResNet-50 without channels-last: 38 ms, then 27.7):
// without them a round times the switch, not the variant. `progress(done, total)` counts
// runs; a cancel stops between runs.
Status alternateRounds(const std::vector<TimedVariant*>& variants, int warmup, int rounds, int runsPerRound,
                       const std::atomic<bool>* cancel, const std::function<void(int, int)>& progress = {},
                       int settle = 0);

// Round by round, one variant's median over another's: what alternating rounds compare
// (rounds where the second has no time are left out).
std::vector<double> roundRatios(const std::vector<double>& roundMediansMs, const std::vector<double>& againstRoundMediansMs);

// Those ratios and what ablation and compare report of them: their median and range (empty
// and 0 when no round compares).
struct RoundRatios {
    std::vector<double> ratios;
    double median = 0, lowest = 0, highest = 0;
    bool empty() const { return ratios.empty(); }
};
RoundRatios summarizeRoundRatios(const std::vector<double>& roundMediansMs,
                                 const std::vector<double>& againstRoundMediansMs);

}  // namespace fsc
