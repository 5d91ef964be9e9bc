#pragma once
// Profiles a compiled graph: warm-up, the same plan timed without and then with the
// profiler's listener (so the overhead is measured, not guessed), and a Trace with every
// launch tied to its plan node, the node's provenance and cost-model work, and the planned
// memory timeline. Used by `fusescope-cli profile` and the GUI. Qt-free.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/feeds.h"
#include "compiler/target.h"
#include "core/graph.h"
#include "core/status.h"
#include "profiler/trace.h"

namespace fsc {

class Device;

struct ProfileRequest {
    std::shared_ptr<const Graph> graph;
    std::vector<std::pair<std::string, int64_t>> opsets;
    FeedOptions feeds;
    int warmup = 2;
    int iterations = 20;
    // Where it runs: on the CUDA backend's device, without CUPTI a device node's time is taken
    // on the host with a synchronisation after it (launch and kernel together).
    Target target;
    std::string model;
    std::string pipeline;
    std::vector<PassSummary> passes;
};

// `progress(done, total)` counts runs (warm-up, unprofiled and profiled). A cancel stops
// between nodes.
Result<Trace> profileGraph(const ProfileRequest& request, const std::atomic<bool>* cancel = nullptr,
                           const std::function<void(int done, int total)>& progress = {});

}  // namespace fsc
