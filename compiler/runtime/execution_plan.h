#pragma once
// Lowering: the IR graph becomes a schedule of kernel calls. Each step names its plan
// node, kernel id, input/output values and backend; kernels are created here from the
// node attributes, so nothing below this point reads the IR.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/runtime/kernel_registry.h"
#include "compiler/runtime/thread_pool.h"
#include "core/graph.h"

namespace fsc {

class Device;
class ExecutionProvider;

// What lowering needs besides the graph; shared with the plans of nested subgraphs.
struct LoweringContext {
    std::vector<std::pair<std::string, int64_t>> opsets;  // domain -> version
    // Runs this graph's steps. A device provider is offered each node first (its capability
    // table, then its kernel's factory); a node it declines runs on `host`'s provider (a
    // context over the same pool) with explicit copies.
    std::shared_ptr<const ExecutionProvider> provider;
    std::shared_ptr<const LoweringContext> host;
    std::shared_ptr<ThreadPool> pool;
    int depth = 0;  // subgraph nesting of the graph being lowered
    std::shared_ptr<Device> device;  // provider->device(), kept at hand: null on the host
    bool tf32 = false;  // ExecutorOptions::tf32
    int64_t opsetFor(const std::string& domain) const;
};

struct PlanStep {
    NodeId node;
    std::string nodeName;
    std::string opType;
    std::string kernelId;  // <op>.<dtype>.<variant>
    Backend backend = Backend::Cpu;  // the kind of the provider it runs on
    bool onDevice = false;           // its provider has a device: its values live there
    const KernelDef* def = nullptr;
    std::unique_ptr<Kernel> kernel;
    std::vector<ValueId> inputs;
    std::vector<ValueId> outputs;
    // Why a node the device provider was offered fell back to the host (empty otherwise).
    std::string fallbackReason;
};

struct ExecutionPlan {
    std::shared_ptr<const Graph> graph;
    std::vector<PlanStep> steps;
    // For each value, the last step that reads it (directly or from a subgraph); -1 when
    // nothing does. Graph outputs are never released.
    std::vector<long> lastUse;
    // Steps whose inputs were all constants, computed once when the executor was created
    // and dropped from `steps` (their outputs became constants).
    std::vector<std::string> foldedAtLoad;
    std::string toText() const;  // one line per step
    void computeLastUse();
};

// Fails on the first node with no kernel, naming it (ErrorCode::Unsupported).
Result<ExecutionPlan> lowerGraph(std::shared_ptr<const Graph> graph,
                                 std::shared_ptr<const LoweringContext> context);

}  // namespace fsc
