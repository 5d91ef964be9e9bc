#pragma once
// Numeric bisection: where a candidate compile (another precision, backend or kernel set)
// starts to differ from a reference one. The reference compiles with the candidate's passes
// (its own precision and target), so both have the same groups. Both run on the same inputs; every value that
// exists in both compiled graphs (the outputs of fused groups, by name, of the same shape)
// is read through a ValueTap, so no tensor becomes a graph output and the fusions under
// examination stay as they are. A group "jumps" when its output's error is above a
// threshold and many times the error of the compared values that feed it; the first jumps
// are those with no jump upstream. The first jump's group can then be rerun with its nodes
// unfused on both sides, to name the op inside it that is responsible.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/pipelines.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct BisectSide {
    std::string label;  // "cpu/fp32", "cuda/fp16"
    PipelineSpec pipeline;
    // The providers it runs on; none: those of the pipeline's target. Tests give one with a
    // kernel perturbed on purpose.
    std::optional<ExecutorOptions> executor;
};

// "cpu/fp32", "cuda/fp16", "cpu/int8", "cuda/bf16" (backend/precision): what the side runs.
struct SideChoice {
    std::string backend;
    Precision precision = Precision::Float32;
};
Result<SideChoice> parseSideChoice(const std::string& text);

struct BisectOptions {
    FeedOptions feeds;
    // The relative error (TensorDifference::meanRelative) a jump reaches; 0: by the
    // candidate's precision (fp32 1e-3, fp16 1e-2, bf16 5e-2, int8 1e-1).
    double threshold = 0;
    double jumpFactor = 10;   // and how many times the error of what feeds it
    bool lookInside = true;   // rerun the first jump's group unfused
};

// One compared value: a group's output in the candidate graph.
struct GroupError {
    std::string value;            // the value's name, in both graphs
    std::string node, op;         // the candidate node (group) that makes it
    std::vector<std::string> onnxNodes, onnxOps;  // the imported nodes inside the group (provenance)
    double error = 0;             // relative error against the reference
    double maxAbs = 0;
    double inputError = 0;        // the largest error of the compared values that feed the group
    bool jump = false, firstJump = false;
};

struct BisectReport {
    std::string model, reference, candidate;
    double threshold = 0;        // the one used (BisectOptions::threshold, or the precision's)
    size_t candidateValues = 0;  // node outputs of the candidate graph
    std::vector<GroupError> groups;  // every compared value, in the candidate's order
    std::vector<size_t> firstJumps;  // indices into groups
    double outputError = 0;          // over every graph output
    // The first jump's group rerun unfused (BisectOptions::lookInside): its ops' errors.
    std::string insideGroup;
    std::vector<GroupError> inside;
    std::string insideNote;          // why there is nothing inside to show
};

Result<BisectReport> bisectNumerics(const Model& model, const BisectSide& reference, const BisectSide& candidate,
                                    const BisectOptions& options, const std::atomic<bool>* cancel = nullptr,
                                    const std::function<void(const std::string&)>& progress = {});

}  // namespace fsc
