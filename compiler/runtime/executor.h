#pragma once
// Runs an execution plan. Shapes are resolved at run time from the actual inputs; the
// first run with a new input-shape signature records every intermediate's size, and from
// then on that signature runs out of one arena laid out by the memory plan. A kernel
// asking for a shape the plan did not foresee (data-dependent shapes) gets a fresh block.
// One run at a time per executor.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "compiler/runtime/memory_plan.h"
#include "compiler/runtime/execution_listener.h"
#include "compiler/runtime/execution_plan.h"
#include "compiler/runtime/value_scope.h"

namespace fsc {

class Device;
class ExecutionProvider;

struct ExecutorOptions {
    int threads = 1;  // ThreadPool::kAutomatic (0): every core, fewer while other programs hold some
    // Runs every node no other provider claims: the CPU's (cpuProvider()). Required;
    // compiler/target.h's executorOptions(target) fills both providers.
    std::shared_ptr<const ExecutionProvider> host;
    // A device provider offered every node first (makeCudaProvider(device)); null runs on the host.
    std::shared_ptr<const ExecutionProvider> device;
    // Capture a run whose shapes the plan knows as one graph of the device (a CUDA Graph) and
    // replay it from then on (only when every step runs on the device and nobody listens to
    // individual launches).
    bool cudaGraphs = true;
    // float32 GEMMs and convolutions on tensor cores from inputs rounded to TF32 (10-bit
    // mantissa): faster, and within about 5e-3 of strict float32 instead of 1e-4. Off by default.
    bool tf32 = false;
};

// What crossed between host and device in the most recent run.
struct TransferStats {
    int64_t hostToDeviceBytes = 0, deviceToHostBytes = 0;
    int copies = 0;
    bool graphReplayed = false;  // the run replayed a captured CUDA Graph
};

// Sees chosen intermediate values of a run as they are made, without making them graph
// outputs (which would change what the compiler may fuse): numeric bisection reads a
// compiled graph's group boundaries this way. Top-level graph only.
class ValueTap {
public:
    virtual ~ValueTap() = default;
    virtual bool wants(ValueId value) const = 0;
    // A host copy of the value (read back from the device when it lives there).
    virtual void onValue(ValueId value, RtTensor hostCopy) = 0;
};

struct RunOptions {
    ExecutionListener* listener = nullptr;
    // A run with a tap goes step by step (no CUDA Graph replay) and copies what it wants.
    ValueTap* tap = nullptr;
    const std::atomic<bool>* cancel = nullptr;
    // Device-resident outputs: a graph output made on the device comes back as a device tensor
    // (RtTensor::onDevice), not copied to the host; it stays valid until this executor's next
    // run. Feeds may be device tensors whatever this says (uploadToDevice).
    bool outputsOnDevice = false;
};

// A host tensor copied to the device (its own allocation), to feed runs without a copy each.
Result<RtTensor> uploadToDevice(Device& device, const RtTensor& host);
// A device tensor copied into a new host tensor.
Result<RtTensor> downloadToHost(Device& device, const RtTensor& onDevice);

class Executor {
public:
    static Result<std::unique_ptr<Executor>> create(const Model& model,
                                                    const ExecutorOptions& options);
    // A graph of its own (a compile step's snapshot, say) under the model's opset imports.
    static Result<std::unique_ptr<Executor>> create(
        std::shared_ptr<const Graph> graph,
        const std::vector<std::pair<std::string, int64_t>>& opsetImports, const ExecutorOptions& options);
    // For subgraphs: every graph input is fed, in order.
    static Result<std::unique_ptr<Executor>> createForGraph(
        std::shared_ptr<const Graph> graph, std::shared_ptr<const LoweringContext> context,
        bool feedEveryInput);
    ~Executor();

    // The graph inputs a caller feeds, in order (inputs backed by an initializer are not).
    const std::vector<ValueId>& feeds() const { return m_feeds; }
    const Graph& graph() const { return *m_plan.graph; }
    const ExecutionPlan& plan() const { return m_plan; }

    // Checks each feed against its declared dtype and rank (and known dims), then runs.
    Result<std::vector<RtTensor>> run(std::vector<RtTensor> feeds, const RunOptions& options = {},
                                      const ValueScope* outer = nullptr);

    // The memory plan of the most recent signature, once one was laid out (the device
    // arena's on the CUDA backend).
    const MemoryPlan* lastMemoryPlan() const;
    // The plan a run with feeds of these sizes lays out, found from the graph's shapes
    // without running: the same layout (in-place reuse included), so compile and run agree.
    // An error names a value whose size only a run can tell (a data-dependent shape).
    Result<MemoryPlan> plannedMemory(const std::vector<std::vector<int64_t>>& feedDims) const;
    size_t cachedSignatures() const { return m_signatures.size(); }
    const TransferStats& lastTransfers() const { return m_transfers; }
    // The device provider's device, or null.
    Device* device() const;
    // The CPU threads the most recent run used (an automatic pool's choice for that run).
    int threadsInUse() const;
    // Of those, the threads oneDNN and OpenMP loops used (fewer when a core was taken).
    int libraryThreadsInUse() const;

private:
    struct SignaturePlan;
    class Frame;
    class StepContext;
    Executor() = default;
    Status checkFeeds(const std::vector<RtTensor>& feeds) const;
    Status foldConstantSteps();
    Result<std::vector<RtTensor>> runUnguarded(std::vector<RtTensor> feeds, const RunOptions& options,
                                               const ValueScope* outer);
    Status runSteps(Frame& frame, const SignaturePlan* sig, const RunOptions& options,
                    std::vector<size_t>* recorded, std::vector<bool>* recordedOnDevice);
    Result<std::vector<RtTensor>> collectOutputs(Frame& frame, bool outputsOnDevice);
    Status tapValue(ValueTap& tap, ValueId id, const RtTensor& value);
    // Lifetimes and offsets from each value's size and place: one computation for a run's
    // arena and for plannedMemory.
    struct ArenaLayout {
        MemoryPlan host, device;
        std::vector<std::pair<ValueId, ValueId>> sharedWith;  // (output, the value whose slot it takes)
        bool anyOnDevice = false;
    };
    ArenaLayout layOutArena(const std::vector<size_t>& recorded, const std::vector<bool>& onDevice) const;
    Status layOutSignature(const std::vector<int64_t>& signature, const std::vector<size_t>& recorded,
                           const std::vector<bool>& onDevice);
    ValueId inPlaceTakeover(const PlanStep& step, size_t s, const std::vector<size_t>& recorded,
                            const std::vector<bool>& onDevice) const;
    // CUDA Graphs: nullopt when this run cannot use one (then it runs step by step).
    std::optional<Result<std::vector<RtTensor>>> runAsGraph(SignaturePlan& sig, const std::vector<RtTensor>& feeds,
                                                            ExecutionListener* listener, bool outputsOnDevice);
    Result<const RtTensor*> deviceConstant(ValueId id);

    ExecutionPlan m_plan;
    std::shared_ptr<const LoweringContext> m_context;
    std::vector<ValueId> m_feeds;
    std::vector<RtTensor> m_constants;  // by value index; undefined for the rest
    std::vector<RtTensor> m_deviceConstants;  // their device copies, made when first read there
    ExecutorOptions m_options;
    bool m_allOnDevice = false;  // every step runs on the device: a run can be one CUDA Graph
    TransferStats m_transfers;
    std::vector<ValueId> m_outerValues;
    std::vector<bool> m_isGraphOutput;
    std::map<std::vector<int64_t>, std::unique_ptr<SignaturePlan>> m_signatures;
    const SignaturePlan* m_last = nullptr;
};

}  // namespace fsc
