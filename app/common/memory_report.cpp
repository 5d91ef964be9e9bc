#include "app/common/memory_report.h"

#include <iomanip>
#include <sstream>

#include "compiler/runtime/executor.h"

namespace fsc {
namespace {

std::string mib(size_t bytes) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << double(bytes) / (1024.0 * 1024.0) << " MiB";
    return s.str();
}

std::string groupedDigits(size_t n) {
    std::string digits = std::to_string(n);
    for (int at = int(digits.size()) - 3; at > 0; at -= 3) digits.insert(size_t(at), ",");
    return digits;
}

}  // namespace

Result<MemoryReport> plannedMemoryReport(const Model& model, const FeedOptions& options) {
    auto executor = Executor::create(model, ExecutorOptions{});
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
    return "arena " + mib(plan.arenaBytes) + " (" + groupedDigits(plan.arenaBytes) + " B), naive sum " +
           mib(plan.naiveBytes) + ", lower bound " + mib(plan.lowerBoundBytes);
}

}  // namespace fsc
