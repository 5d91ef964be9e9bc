#include "compiler/runtime/execution_plan.h"

#include <cctype>
#include <sstream>

#include "compiler/runtime/capability_table.h"
#include "compiler/runtime/execution_provider.h"

namespace fsc {

int64_t LoweringContext::opsetFor(const std::string& domain) const {
    const std::string key = domain == "ai.onnx" ? "" : domain;
    for (const auto& [d, v] : opsets)
        if ((d == "ai.onnx" ? "" : d) == key) return v;
    return -1;
}

namespace {

std::string upperCase(std::string s) {
    for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::string kernelDtype(const Graph& graph, const Node& node) {
    for (const auto& ids : {node.inputs, node.outputs})
        for (ValueId id : ids)
            if (id.valid() && graph.value(id).type.kind == ValueType::Kind::Tensor &&
                graph.value(id).type.elemType != DType::Undefined)
                return std::string(dtypeName(graph.value(id).type.elemType));
    return "any";
}

}  // namespace

namespace {

// Why the device provider does not run a node ("" when it does): its capability table must
// claim the op at the node's output dtype, and a device kernel must exist and accept the
// node's attributes and shapes (its factory answers Unsupported when it declines).
std::string deviceDeclines(const Graph& graph, const Node& node, const std::shared_ptr<const LoweringContext>& lowering,
                           const KernelDef** def, Result<std::unique_ptr<Kernel>>* kernel) {
    const LoweringContext& context = *lowering;
    const std::string op = (node.domain.empty() ? "" : node.domain + ".") + node.opType;
    const ExecutionProvider& provider = *context.provider;
    const std::string device = backendName(provider.backend());
    const CapabilityTable* table = provider.capabilities();
    const OpCapability* cap = table ? table->find(node.domain, node.opType) : nullptr;
    if (!cap) return op + " is not in the " + upperCase(device) + " capability table";
    if (!node.subgraphs().empty()) return op + " runs its subgraphs from the host";
    for (const auto& ids : {node.inputs, node.outputs})
        for (ValueId id : ids)
            if (id.valid() && graph.value(id).type.elemType == DType::String) return op + " of strings stays on the host";
    for (ValueId out : node.outputs) {
        if (!out.valid()) continue;
        const DType t = graph.value(out).type.elemType;
        if (!cap->anyDType && t != DType::Undefined && !cap->dtypes.count(t))
            return op + " has no " + upperCase(device) + " kernel for " + std::string(dtypeName(t));
        break;
    }
    *def = provider.kernels().find(node.domain, node.opType, context.opsetFor(node.domain), provider.backend());
    if (!*def) return op + " has no " + upperCase(device) + " kernel yet";
    // The device kernel sees the device it will run on (whether it has cuDNN; a kernel that
    // keeps device memory of its own holds the device until it frees it).
    KernelInit init(node, context.opsetFor(node.domain), graph, lowering);
    *kernel = (*def)->factory(init);
    if (!*kernel) return kernel->status().message();
    return "";
}

}  // namespace

Result<ExecutionPlan> lowerGraph(std::shared_ptr<const Graph> graph,
                                 std::shared_ptr<const LoweringContext> context) {
    ExecutionPlan plan;
    plan.graph = graph;
    const bool toDevice = context->device && context->host;
    const auto& order = graph->order();
    for (size_t s = 0; s < order.size(); ++s) {
        const Node& node = graph->node(order[s]);
        const std::string where = "node '" + node.name + "' (" + node.opType + ")";
        PlanStep step;
        const KernelDef* def = nullptr;
        Result<std::unique_ptr<Kernel>> kernel = Status(ErrorCode::Internal, "no kernel");
        if (toDevice) step.fallbackReason = deviceDeclines(*graph, node, context, &def, &kernel);
        // The host's kernel: the whole plan on a host provider, or a declined node's fallback.
        const LoweringContext& lowering = toDevice ? *context->host : *context;
        if (!toDevice || !step.fallbackReason.empty()) {
            const int64_t opset = lowering.opsetFor(node.domain);
            const ExecutionProvider& provider = *lowering.provider;
            def = provider.kernels().find(node.domain, node.opType, opset, provider.backend());
            if (!def)
                return Status(ErrorCode::Unsupported,
                              where + ": no " + backendName(provider.backend()) + " kernel for " +
                                  (node.domain.empty() ? "" : node.domain + ".") + node.opType +
                                  " at opset " + std::to_string(opset));
            KernelInit init(node, opset, *graph, toDevice ? context->host : context);
            kernel = def->factory(init);
        }
        if (!kernel) {
            const std::string& msg = kernel.status().message();
            return msg.rfind("node '", 0) == 0 ? kernel.status()
                                               : kernel.status().withContext(where);
        }
        step.node = order[s];
        step.nodeName = node.name;
        step.opType = node.opType;
        step.kernelId = node.opType + "." + kernelDtype(*graph, node) + "." + def->variant;
        step.backend = def->backend;
        step.onDevice = toDevice && step.fallbackReason.empty();
        step.def = def;
        step.kernel = std::move(*kernel);
        step.inputs = node.inputs;
        step.outputs = node.outputs;
        plan.steps.push_back(std::move(step));
    }
    plan.computeLastUse();
    return plan;
}

void ExecutionPlan::computeLastUse() {
    lastUse.assign(graph->valueCount(), -1);
    for (size_t s = 0; s < steps.size(); ++s) {
        for (ValueId in : steps[s].inputs)
            if (in.valid()) lastUse[in.index] = long(s);
        for (const std::string& name : graph->node(steps[s].node).capturedNames())
            if (ValueId id = graph->findValue(name); id.valid()) lastUse[id.index] = long(s);
    }
}

std::string ExecutionPlan::toText() const {
    std::ostringstream out;
    for (size_t i = 0; i < steps.size(); ++i) {
        const PlanStep& s = steps[i];
        out << i << "  " << s.kernelId << "  " << s.nodeName << "  (";
        for (size_t k = 0; k < s.inputs.size(); ++k)
            out << (k ? ", " : "") << (s.inputs[k].valid() ? graph->value(s.inputs[k]).name : "-");
        out << ") -> (";
        for (size_t k = 0; k < s.outputs.size(); ++k)
            out << (k ? ", " : "")
                << (s.outputs[k].valid() ? graph->value(s.outputs[k]).name : "-");
        out << ")  " << backendName(s.backend) << "\n";
    }
    return out.str();
}

}  // namespace fsc
