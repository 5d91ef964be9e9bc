#pragma once
// One run of a graph on the CPU backend for the GUI: feeds built the CLI's way, warm-up
// runs, then timed runs with per-node times from the executor's launch events. Qt-free; the
// window calls it on a worker thread.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/feeds.h"
#include "core/graph.h"
#include "core/status.h"
#include "profiler/cpu_timer.h"
#include "profiler/node_stats.h"

namespace fsc {

struct GraphRunRequest {
    std::shared_ptr<const Graph> graph;
    std::vector<std::pair<std::string, int64_t>> opsets;  // the compiled model's imports
    FeedOptions feeds;
    int warmup = 1;
    int iterations = 5;
    int threads = 0;  // 0: every core
};

struct GraphRunRecord {
    std::shared_ptr<const Graph> graph;  // what ran: NodeTime ids of depth 0 index into it
    std::vector<NodeTime> nodes;         // summed over the timed iterations, largest first
    int64_t topLevelNs = 0;              // the depth-0 nodes' summed time
    int iterations = 0;
    int threads = 0;
    SampleStats latency;                 // per iteration, milliseconds
    std::vector<std::string> inputs;     // "name float32[1,3,224,224] (random, seed 0)"
    std::vector<std::string> outputs;    // "name float32[1,1000]"
    size_t arenaBytes = 0;

    // Each node's share of the run time by node index (0 for nodes that did not run).
    std::vector<double> shareByNode() const;
};

// `progress(done, total)` counts node launches of the main graph over all runs. A cancel
// stops between nodes and returns an error saying so.
Result<GraphRunRecord> runGraph(const GraphRunRequest& request, const std::atomic<bool>* cancel = nullptr,
                                const std::function<void(int64_t done, int64_t total)>& progress = {});

}  // namespace fsc
