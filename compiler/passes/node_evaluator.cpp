#include "compiler/target.h"
#include "compiler/passes/node_evaluator.h"

#include "compiler/runtime/executor.h"
#include "compiler/runtime/rt_tensor.h"

namespace fsc::passes {

Result<std::vector<Tensor>> evaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                                         const std::vector<std::pair<std::string, int64_t>>& opsets) {
    auto graph = std::make_shared<Graph>();
    graph->name = "fold";
    Node copy = node;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i]) {
            copy.inputs[i] = ValueId();
            continue;
        }
        Value v;
        v.name = "in" + std::to_string(i);
        v.kind = Value::Kind::Initializer;
        v.type = ValueType::tensor(inputs[i]->dtype(), inputs[i]->shape());
        v.initializer = std::make_shared<const Tensor>(*inputs[i]);
        copy.inputs[i] = graph->addValue(std::move(v));
        graph->initializers.push_back(copy.inputs[i]);
    }
    for (size_t i = 0; i < copy.outputs.size(); ++i) {
        if (!copy.outputs[i].valid()) continue;
        Value v;
        v.name = "out" + std::to_string(i);
        copy.outputs[i] = graph->addValue(std::move(v));
        graph->outputs.push_back(copy.outputs[i]);
    }
    copy.attributes = node.attributes;
    graph->addNode(std::move(copy));
    Model model;
    model.path = "node '" + node.name + "'";
    model.opsetImports = opsets;
    model.graph = graph;
    auto executor = Executor::create(model, cpuExecutorOptions());
    if (!executor) return executor.status();
    auto outputs = (*executor)->run({});
    if (!outputs) return outputs.status();
    std::vector<Tensor> result;
    size_t k = 0;
    for (ValueId out : node.outputs) {
        if (!out.valid()) {
            result.emplace_back();
            continue;
        }
        if ((*outputs)[k].isSequence())  // a constant is a tensor; a sequence stays a node
            return Status(ErrorCode::Unsupported, "its output is a sequence, which no constant can hold");
        result.push_back(tensorToConstant((*outputs)[k++], ""));
    }
    return result;
}

}  // namespace fsc::passes
