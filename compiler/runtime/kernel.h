#pragma once
// The kernel interface. A kernel is created once per plan step from the node's attributes
// (lowering reads the IR; the kernel keeps plain parameters) and computed many times.
// Kernels never allocate tensor storage: they ask the context for an output of a given
// dtype and shape, and the executor hands out a slot of the memory plan (or, for shapes
// the plan did not foresee, a fresh block). No profiling code lives inside kernels.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/rt_tensor.h"
#include "compiler/runtime/thread_pool.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

class Device;
class ValueScope;
struct LoweringContext;

class KernelContext {
public:
    virtual ~KernelContext() = default;
    virtual size_t inputCount() const = 0;
    // Null for an omitted optional input or an index past the end.
    virtual const RtTensor* input(size_t i) const = 0;
    // Whether input i keeps the same contents for the executor's lifetime (an initializer
    // or a value computed from initializers only), so a kernel may cache work derived
    // from it, such as weights in another layout.
    virtual bool inputConstant(size_t) const { return false; }
    virtual size_t outputCount() const = 0;
    // The storage for output i, zeroed only when freshly allocated.
    virtual Result<RtTensor*> output(size_t i, DType dtype, std::vector<int64_t> dims) = 0;
    // Output i as a sequence of these elements (each with storage of its own).
    virtual Status outputSequence(size_t i, DType elemType, std::vector<RtTensor> elements) {
        (void)i, (void)elemType, (void)elements;
        return Status(ErrorCode::Unsupported, where() + ": sequence outputs are not supported here");
    }
    // Whether the graph reads output i (optional outputs may be omitted).
    virtual bool outputWanted(size_t i) const = 0;
    virtual ThreadPool& pool() = 0;
    // Values of enclosing graphs, for control-flow kernels running their subgraphs.
    virtual const ValueScope* scope() const = 0;
    // "node 'name' (Op)" for messages.
    virtual std::string where() const = 0;
    // The device a CUDA backend kernel launches on (its inputs and outputs live there);
    // null for CPU kernels.
    virtual Device* device() { return nullptr; }
    // float32 GEMMs and convolutions may run on tensor cores from TF32-rounded inputs
    // (ExecutorOptions::tf32; the CUDA backend's kernels pass it to the device).
    virtual bool tf32() const { return false; }
};

class Kernel {
public:
    virtual ~Kernel() = default;
    virtual Status compute(KernelContext& ctx) = 0;
    // An input whose buffer output 0 may take over when no later step reads that input and
    // both have one size (a residual the output accumulates onto); -1 for none. The kernel
    // must then compute correctly with the output's data the same as that input's.
    virtual int inPlaceInput() const { return -1; }
};

// What a kernel factory sees: the node's attributes and opset. Attribute getters take a
// default; `required` variants report a missing attribute as an invalid model.
class KernelInit {
public:
    KernelInit(const Node& node, int64_t opset, const Graph& graph,
               std::shared_ptr<const LoweringContext> lowering)
        : m_node(node), m_opset(opset), m_graph(graph), m_lowering(std::move(lowering)) {}
    const Node& node() const { return m_node; }
    const Graph& graph() const { return m_graph; }
    int64_t opset() const { return m_opset; }
    // For control-flow kernels, which lower their subgraphs the same way.
    const std::shared_ptr<const LoweringContext>& lowering() const { return m_lowering; }
    bool has(const std::string& name) const { return m_node.attribute(name) != nullptr; }
    int64_t getInt(const std::string& name, int64_t fallback) const;
    float getFloat(const std::string& name, float fallback) const;
    std::string getString(const std::string& name, const std::string& fallback) const;
    std::vector<int64_t> getInts(const std::string& name) const;  // empty when absent
    std::vector<float> getFloats(const std::string& name) const;
    std::vector<std::string> getStrings(const std::string& name) const;
    const Tensor* getTensor(const std::string& name) const;
    std::shared_ptr<Graph> getGraph(const std::string& name) const;
    Status invalid(const std::string& message) const;  // names the node
    size_t inputCount() const { return m_node.inputs.size(); }
    bool inputPresent(size_t i) const { return i < m_node.inputs.size() && m_node.inputs[i].valid(); }
    // The constant behind input i when it is an initializer; null otherwise.
    const Tensor* constantInput(size_t i) const;

private:
    const Node& m_node;
    int64_t m_opset;
    const Graph& m_graph;
    std::shared_ptr<const LoweringContext> m_lowering;
};

using KernelFactory = std::function<Result<std::unique_ptr<Kernel>>(const KernelInit&)>;

// Makes a factory for a kernel class constructed as K(init, args..., status), which
// reports a bad attribute by setting `status`.
template <typename K, typename... Args>
KernelFactory factoryOf(Args... args) {
    return [args...](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        Status status;
        auto kernel = std::make_unique<K>(init, args..., status);
        if (!status.isOk()) return status;
        return std::unique_ptr<Kernel>(std::move(kernel));
    };
}

// Lambda-backed kernel for ops whose attributes fit in a closure.
class FunctionKernel : public Kernel {
public:
    explicit FunctionKernel(std::function<Status(KernelContext&)> fn) : m_fn(std::move(fn)) {}
    Status compute(KernelContext& ctx) override { return m_fn(ctx); }

private:
    std::function<Status(KernelContext&)> m_fn;
};

// A factory for an op with no attributes: every step gets the same function.
inline KernelFactory functionKernel(std::function<Status(KernelContext&)> fn) {
    return [fn](const KernelInit&) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new FunctionKernel(fn));
    };
}

}  // namespace fsc
