#include "app/gui/graph_run.h"

#include <algorithm>
#include <thread>

#include "compiler/runtime/executor.h"

namespace fsc {
namespace {

class TimingListener : public ExecutionListener {
public:
    TimingListener(int64_t total, const std::function<void(int64_t, int64_t)>& progress)
        : m_total(total), m_progress(progress) {}
    void onLaunch(const LaunchEvent& e) override {
        if (timing) stats.add(e.node, *e.nodeName, *e.opType, *e.kernelId, e.depth, e.endNs - e.startNs);
        if (e.depth == 0 && m_progress) m_progress(++m_done, m_total);
    }
    bool timing = false;
    NodeStatsCollector stats;

private:
    int64_t m_done = 0, m_total;
    const std::function<void(int64_t, int64_t)>& m_progress;
};

}  // namespace

std::vector<double> GraphRunRecord::shareByNode() const {
    std::vector<double> share(graph ? graph->nodeArenaSize() : 0, 0.0);
    if (topLevelNs <= 0) return share;
    for (const NodeTime& t : nodes)
        if (t.depth == 0 && t.id.index < share.size()) share[t.id.index] += double(t.totalNs) / double(topLevelNs);
    return share;
}

Result<GraphRunRecord> runGraph(const GraphRunRequest& request, const std::atomic<bool>* cancel,
                                const std::function<void(int64_t, int64_t)>& progress) {
    ExecutorOptions options;
    options.threads = request.threads > 0 ? request.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    auto executor = Executor::create(request.graph, request.opsets, options);
    if (!executor) return executor.status();
    Executor& exec = **executor;
    auto feeds = buildFeeds(exec, request.feeds);
    if (!feeds) return feeds.status();

    const int runs = request.warmup + request.iterations;
    TimingListener listener(int64_t(runs) * int64_t(exec.plan().steps.size()), progress);
    RunOptions runOptions;
    runOptions.listener = &listener;
    runOptions.cancel = cancel;
    GraphRunRecord record;
    std::vector<RtTensor> outputs;
    std::vector<double> samples;
    for (int i = 0; i < runs; ++i) {
        listener.timing = i >= request.warmup;
        Stopwatch watch;
        auto result = exec.run(feeds->tensors, runOptions);
        const double ms = watch.elapsedMs();
        if (cancel && cancel->load()) return Status(ErrorCode::InvalidArgument, "run cancelled");
        if (!result) return result.status();
        if (listener.timing) samples.push_back(ms);
        outputs = std::move(*result);
    }
    record.graph = request.graph;
    record.nodes = listener.stats.sorted();
    record.topLevelNs = listener.stats.topLevelTotalNs();
    record.iterations = request.iterations;
    record.threads = options.threads;
    record.latency = computeStats(samples);
    const Graph& graph = exec.graph();
    for (size_t i = 0; i < feeds->tensors.size(); ++i) {
        const std::string& source = feeds->sources[i];
        record.inputs.push_back(graph.value(exec.feeds()[i]).name + " " + feeds->tensors[i].typeString() + " (" +
                                (source == "random" ? "random, seed " + std::to_string(request.feeds.seed) : source) + ")");
    }
    for (size_t i = 0; i < outputs.size(); ++i)
        record.outputs.push_back(graph.value(graph.outputs[i]).name + " " + outputs[i].typeString());
    if (const MemoryPlan* memory = exec.lastMemoryPlan()) record.arenaBytes = memory->arenaBytes;
    return record;
}

}  // namespace fsc
