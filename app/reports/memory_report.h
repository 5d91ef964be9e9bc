#pragma once
// The memory plan as every command prints it: the executor's own layout (in-place reuse
// included) for the sizes of the inputs a run generates, found without running, and one
// line of text for it, so compile, run and the walkthrough never disagree.
#include <string>
#include <vector>

#include "compiler/runtime/memory_plan.h"
#include "compiler/runtime/feeds.h"
#include "core/graph.h"

namespace fsc {

struct MemoryReport {
    MemoryPlan plan;
    std::vector<std::string> inputs;  // the sizes it is for: "image float32[1,3,16,16]"
};

// The CPU executor's plan for the feeds `options` describes (generated ones as `run`
// makes them). An error says why there is none (an op with no kernel, a data-dependent size).
Result<MemoryReport> plannedMemoryReport(const Model& model, const FeedOptions& options);

// "arena 4.98 MiB (5,222,400 B), naive sum 22.12 MiB, lower bound 4.98 MiB"
std::string memoryPlanText(const MemoryPlan& plan);

}  // namespace fsc
