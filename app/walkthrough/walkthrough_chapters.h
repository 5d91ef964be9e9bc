#pragma once
// The walkthrough's chapters, one function each (internal to app/common): walkthrough.cpp
// lists and dispatches them; each file holds the chapters that share their machinery.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/analysis/timed_variant.h"
#include "app/walkthrough/walkthrough.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "profiler/trace.h"

namespace fsc {

WalkthroughChapter modelChapter(const WalkthroughInput& in);         // 1
WalkthroughChapter eagerChapter(const WalkthroughInput& in);         // 2
WalkthroughChapter passesChapter(const WalkthroughInput& in);        // 3
WalkthroughChapter fusionChapter(const WalkthroughInput& in);        // 4
WalkthroughChapter loweringChapter(const WalkthroughInput& in);      // 5
WalkthroughChapter memoryChapter(const WalkthroughInput& in);        // 6
WalkthroughChapter breaksChapter(const WalkthroughInput& in);        // 7
WalkthroughChapter quantizationChapter(const WalkthroughInput& in);  // 8
WalkthroughChapter parallelChapter(const WalkthroughInput& in);      // 9
WalkthroughChapter benchmarkingChapter(const WalkthroughInput& in);  // 10

// One side of a timed comparison: a model on the CPU with run's generated inputs (seed 0),
// its executor, inputs and runs (TimedVariant), its plan's nodes with the cost model's work
// (what profile reports per node).
struct TimedSide : TimedVariant {
    Trace plan;  // nodes only: flops and bytes per plan node
    int threads = 1;
};
Result<TimedSide> prepareSide(const Model& model, const WalkthroughInput& in);
// "cuda" when the walkthrough runs on a GPU, else "cpu".
const char* backendOf(const WalkthroughInput& in);
// Runs every side `warmup + iterations` times in alternating rounds (analysis/timed_variant),
// keeping the warm-up times in warmupMs and the timed ones in samplesMs. Stops early
// (returning Cancelled) when asked to; a side that does not run says so.
Status alternateRuns(const std::vector<TimedSide*>& sides, int warmup, int iterations,
                     const std::atomic<bool>* cancel);

// The compiled model's one latency measurement (CompiledLatency), taken now if no chapter
// has taken it yet, with `alongside` (chapter 2's imported graph) timed in the same
// rounds when given; the record is not changed after it is measured.
Result<const CompiledLatency*> compiledLatency(const WalkthroughInput& in, TimedSide* alongside = nullptr);

// The first side's SampleStats::disturbed that is not empty: the chapter's timing warning.
std::string timingWarningOf(const std::vector<const TimedSide*>& sides);

bool cancelled(const WalkthroughInput& in);

// Sets the chapter's question and, from its own figures, this model's answer
// (walkthrough_predictions.cpp).
void addPrediction(WalkthroughChapter& chapter);

}  // namespace fsc
