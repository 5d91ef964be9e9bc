#pragma once
// The walkthrough: the model-to-GPU pipeline explained chapter by chapter on the loaded
// model, each chapter a few plain paragraphs and the model's own figures. The figures come
// from the functions the other commands report with (inspect's summary, compile's pass
// records), computed on the session when the chapter is asked for: never canned, and never
// a second computation that could drift from what `inspect` or `compile --json` say.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/common/session.h"
#include "compiler/quantization/calibration_data.h"
#include "compiler/runtime/feeds.h"
#include "core/status.h"

namespace fsc {

class Device;

inline constexpr const char* kWalkthroughSchema = "fusescope.walkthrough/1";

// A picture of some of the figures, as inline SVG.
struct WalkthroughChart {
    std::string caption;
    std::string svg;
};

struct WalkthroughChapter {
    int id = 0;
    std::string title;
    // Predict, then reveal: a question to answer before reading on, and this model's answer
    // in a sentence with its figures (empty where the chapter does not apply).
    std::string question, answer;
    std::vector<std::string> paragraphs;  // the explanation, plain text
    nlohmann::json figures;               // this model's numbers
    std::vector<WalkthroughChart> charts;  // drawn from the figures (the page and the dock show them)
    // Empty when the chapter applies; else why it shows nothing here and what model would.
    std::string notApplicable;
    // Empty, or why the chapter's timings are unreliable (SampleStats::disturbed of a timed
    // side): shown above its figures everywhere the chapter is.
    std::string timingWarning;
};

struct ChapterEntry {
    int id;
    const char* title;
};
// All ten chapters in order.
const std::vector<ChapterEntry>& walkthroughContents();

// The compiled model's latency on this walkthrough's inputs: one measurement, taken by the
// first timed chapter that needs it (chapter 2, with the imported graph's runs alternating;
// else alone) and reused by chapters 2, 8 (its float32 row) and 10, so that one handout
// never gives the same pipeline at the same batch two latencies. Shared between the inputs
// of one walkthrough (the GUI keeps one per compiled model); measured under its mutex.
struct CompiledLatency {
    std::mutex mutex;
    bool measured = false;
    std::vector<double> warmupMs;   // the fresh executor's first runs, left out of the figures
    std::vector<double> samplesMs;  // the timed runs
    int threads = 1;
    std::string method;  // how it was taken, in words (the chapters' timing figures say it)
};

// What a chapter is computed from: the session (a model open and compiled) and the name
// its pipeline is reported under.
struct WalkthroughInput {
    const Session& session;
    std::string pipelineName;
    const std::atomic<bool>* cancel = nullptr;  // checked between runs
    // What the chapter is doing now ("compiling int8", "profiling the compiled graph").
    std::function<void(const std::string&)> progress;
    // The inputs every chapter runs on (--input-dir, --input, --dim, as `run` takes them);
    // empty: generated ones, sized as `run` sizes them.
    InputChoice inputs;
    // Timed runs and warm-up runs: of the compiled model's one measurement (chapters 2, 8's
    // float32 and 10) and of chapter 8's other precisions; 0 and -1: 30 runs after 2 warm-ups,
    // and 5 after 1 for the other precisions.
    int iterations = 0;
    int warmup = -1;
    // Chapter 8's data: compile --quantize's --calibration DIR and --calibration-samples N
    // (empty, 0: 4 generated samples, one held back).
    std::string calibrationDir;
    int calibrationSamples = 0;
    std::shared_ptr<CompiledLatency> compiledLatency = std::make_shared<CompiledLatency>();
    int iterationsOr(int chapterDefault) const { return iterations > 0 ? iterations : chapterDefault; }
    int warmupOr(int chapterDefault) const { return warmup >= 0 ? warmup : chapterDefault; }
    // Where the timed chapters run: the target the session compiled for.
    const Target& target() const { return session.pipeline().target; }
    FeedOptions feeds() const {
        FeedOptions f;
        f.inputDir = inputs.dir.string();
        f.files = inputs.files;
        f.dims = inputs.dims;
        return f;
    }
};
// Chapter `id` on the session's model. An unknown id is an InvalidArgument; a
// cancel while it is computed is Cancelled.
Result<WalkthroughChapter> walkthroughChapter(int id, const WalkthroughInput& input);

// {"schema": ..., "model": ..., "chapters": [{"id", "title", "paragraphs", "figures"
// (, "not_applicable")}]}.
nlohmann::json walkthroughJson(const std::vector<WalkthroughChapter>& chapters, const std::string& model);
// One chapter as an HTML fragment (its heading, paragraphs, figures as tables, charts): the
// charts inline as SVG, or with `chartImage` as <img src="chartImage(i)"> for a viewer that
// renders SVG itself (the GUI's dock).
std::string walkthroughChapterHtml(const WalkthroughChapter& chapter,
                                   const std::function<std::string(size_t)>& chartImage = {});
// One self-contained page (no scripts, no network): the chapters with their figures as
// tables and their charts as inline SVG.
std::string walkthroughHtml(const std::vector<WalkthroughChapter>& chapters, const std::string& model);

}  // namespace fsc
