#include "compiler/backends/cuda/generated_kernels.h"

#include "compiler/runtime/fused_domain.h"

namespace fsc {

Result<CudaKernelSource> cudaKernelForNode(const Graph& graph, const Node& node) {
    if (node.domain != kFusescopeDomain || node.opType != "FusedElementwise")
        return Status(ErrorCode::InvalidArgument, "'" + node.name + "' is not a FusedElementwise node");
    const Attribute* ops = nullptr;
    const Attribute* args = nullptr;
    for (const Attribute& a : node.attributes) {
        if (a.name == "ops") ops = &a;
        if (a.name == "args") args = &a;
    }
    if (!ops || !args) return Status(ErrorCode::InvalidModel, "'" + node.name + "': FusedElementwise without ops/args");
    auto program = ElementwiseProgram::fromAttributes(ops->strings, args->ints, int(node.inputs.size()));
    if (!program) return program.status().withContext("node '" + node.name + "'");
    const DType dtype = node.outputs.empty() || !node.outputs[0].valid() ? DType::Float32
                                                                         : graph.value(node.outputs[0]).type.elemType;
    auto kernel = elementwiseCudaKernel(*program, dtype == DType::Undefined ? DType::Float32 : dtype);
    if (!kernel) return kernel.status().withContext("node '" + node.name + "'");
    return kernel;
}

std::vector<GeneratedKernel> generatedCudaKernels(const Graph& graph) {
    std::vector<GeneratedKernel> out;
    for (NodeId id : graph.order()) {
        const Node& n = graph.node(id);
        if (n.domain != kFusescopeDomain || n.opType != "FusedElementwise") continue;
        GeneratedKernel g;
        g.node = id;
        g.nodeName = n.name;
        if (!n.outputs.empty() && n.outputs[0].valid()) g.dtype = graph.value(n.outputs[0]).type.elemType;
        auto kernel = cudaKernelForNode(graph, n);
        if (kernel) g.kernel = std::move(*kernel);
        else g.error = kernel.status().message();
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace fsc
