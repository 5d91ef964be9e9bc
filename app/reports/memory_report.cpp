#include "compiler/target.h"
#include "app/reports/memory_report.h"

#include "compiler/runtime/executor.h"
#include "core/units.h"

namespace fsc {

Result<MemoryReport> plannedMemoryReport(const Model& model, const FeedOptions& options) {
    auto executor = Executor::create(model, cpuExecutorOptions());
    if (!executor) return executor.status();
    auto feeds = buildFeeds(**executor, options);
    if (!feeds) return feeds.status();
    std::vector<std::vector<int64_t>> dims;
    MemoryReport report;
    const Graph& g = (*executor)->graph();
    for (size_t i = 0; i < feeds->tensors.size(); ++i) {
        dims.push_back(feeds->tensors[i].dims);
        report.inputs.push_back(g.value((*executor)->feeds()[i]).name + " " + feeds->tensors[i].typeString());
    }
    auto plan = (*executor)->plannedMemory(dims);
    if (!plan) return plan.status();
    report.plan = std::move(*plan);
    return report;
}

std::string memoryPlanText(const MemoryPlan& plan) {
    return "arena " + bytesText(double(plan.arenaBytes)) + " (" + groupedDigits(plan.arenaBytes) + " B), naive sum " +
           bytesText(double(plan.naiveBytes)) + ", lower bound " + bytesText(double(plan.lowerBoundBytes));
}

}  // namespace fsc
