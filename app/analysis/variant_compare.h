#pragma once
// N-way compare: any number of compiled variants of one model (backends, precisions,
// pipelines), or of stored runs, side by side, one row per node of the imported ONNX graph. Each variant is
// profiled (its per-node times) and, against the baseline, bisected without looking inside
// (its per-group errors, numeric_bisect.h); a row gives, per variant, the time of the group
// that holds the ONNX node (shared by the group's nodes) and that group's output error.
// The variants' whole-run times come from alternating rounds (timed_variant.h), as ablation's
// do, so every variant sees the same machine; the per-node times are each profile's.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "app/analysis/numeric_bisect.h"
#include "compiler/pipelines.h"
#include "compiler/runtime/feeds.h"
#include "core/graph.h"
#include "core/status.h"
#include "profiler/trace.h"

namespace fsc {

struct CompareVariant {
    std::string label;  // "cpu/fp16"
    PipelineSpec pipeline;
};

struct CompareOptions {
    FeedOptions feeds;
    int warmup = 2;
    int iterations = 10;  // profiled iterations of each variant
    int rounds = 3;       // alternating rounds for the whole-run times; 0: each profile's median
    int runsPerRound = 3;
    int settle = 1;       // untimed runs of a variant at the start of its turn in a round
};

// One variant's figures for one ONNX node.
struct NodeCell {
    bool ran = false;        // a group of this variant holds the node (folded away otherwise)
    std::string group;       // that group (a compiled node)
    int groupSize = 0;       // ONNX nodes in the group
    double ms = 0;           // the group's median per iteration
    double error = -1;       // the group's output error against the baseline; -1: not compared
};

struct CompareRow {
    std::string node, op;
    std::vector<NodeCell> cells;  // one per variant
};

struct VariantSummary {
    std::string label;
    double medianMs = 0;     // over the alternating rounds' runs (the profile's without rounds)
    double p90Ms = 0;
    // Its time over the baseline's: the median of the rounds' ratios and their range (1 for
    // the baseline; 0 without rounds).
    double vsBaseline = 0, lowestRatio = 0, highestRatio = 0;
    size_t nodes = 0, kernels = 0;
    double outputError = 0;   // against the baseline (0 for it; -1: not known, a stored run's)
    size_t compared = 0;      // values compared with the baseline
    std::string timingWarning;
};

struct VariantComparison {
    std::string model;
    size_t baseline = 0;
    int rounds = 0;  // alternating rounds the whole-run times come from
    std::vector<VariantSummary> variants;
    std::vector<CompareRow> rows;  // the imported graph's nodes, in its order
};

// A run read back from a run store, under the label it is shown by ("run 3").
struct StoredRun {
    std::string label;
    Trace trace;
};
// N-way compare of stored runs (profiles of any pipelines, backends or machines; no model
// needed): one row per ONNX node the runs' nodes were made from (provenance, by name, in the
// order the runs first name them; its op where it ran on its own), each run's group time per
// node. A run holds no outputs, so no errors (-1, and outputError -1), and no rounds: each run's whole time is
// its own profile's median, and no ratio is claimed (rounds 0).
VariantComparison compareStoredRuns(const std::vector<StoredRun>& runs, size_t baseline);

// "1.23x (1.20-1.25)": the median of the rounds' ratios over the baseline's and their
// range; empty without rounds. The CLI, the GUI and the log print it the same.
std::string vsBaselineText(const VariantSummary& v, int rounds);
// A relative error as "1.2e-03"; "-" for a value not compared (negative).
std::string compareErrorText(double error);

// `progress(text)` says which variant is being measured; a cancel stops between steps.
Result<VariantComparison> compareVariants(const Model& model, const std::vector<CompareVariant>& variants, size_t baseline,
                                          const CompareOptions& options, const std::atomic<bool>* cancel = nullptr,
                                          const std::function<void(const std::string&)>& progress = {});

}  // namespace fsc
