#include "core/onnx_shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "core/onnx_proto_convert.h"
#include "core/shape_values.h"

namespace fsc {
namespace {

// Ops (any domain) whose first output has exactly the type of their first input. ONNX
// covers its own domain; these entries matter for com.microsoft and ai.fusescope ops.
const std::set<std::string>& passThroughOps() {
    static const std::set<std::string> ops = {
        "Identity", "Relu", "Gelu", "FastGelu", "QuickGelu", "BiasGelu", "Sigmoid", "Tanh",
        "Erf", "HardSwish", "Swish", "Softmax", "Dropout", "LayerNormalization",
        "SkipLayerNormalization", "SimplifiedLayerNormalization",
        "SkipSimplifiedLayerNormalization", "RMSNormalization", "BiasDropout", "Neg", "Abs",
        "Sqrt", "Exp", "Log", "Clip", "LeakyRelu", "HardSigmoid", "Softplus",
    };
    return ops;
}

// Element-wise ops with multidirectional (numpy) broadcasting of all inputs.
const std::set<std::string>& broadcastOps() {
    static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Pow", "BiasAdd",
                                              "Max", "Min", "Sum", "Mean"};
    return ops;
}

std::optional<Shape> broadcast(const std::vector<const ValueType*>& inputs) {
    size_t rank = 0;
    for (const ValueType* t : inputs) {
        if (!t || t->kind != ValueType::Kind::Tensor || !t->shape.rankKnown()) return std::nullopt;
        rank = std::max(rank, t->shape.rank());
    }
    std::vector<Dim> dims(rank, Dim::known(1));
    for (const ValueType* t : inputs) {
        const auto& in = t->shape.dims();
        const size_t offset = rank - in.size();
        for (size_t i = 0; i < in.size(); ++i) {
            Dim& out = dims[offset + i];
            const Dim& d = in[i];
            if (d.isKnown() && d.size() == 1) continue;
            if (out.isKnown() && out.size() == 1) out = d;
            else if (!(out == d)) out = Dim();
        }
    }
    return Shape(std::move(dims));
}

void mergeFromProtoGraph(const onnx::GraphProto& proto, Graph& graph) {
    auto mergeInfo = [&](const onnx::ValueInfoProto& info) {
        ValueId id = graph.findValue(info.name());
        if (!id.valid() || !info.has_type()) return;
        auto inferred = valueTypeFromProto(info.type());
        if (!inferred) return;
        // ONNX names every dim it cannot size "unk__N"; those names carry no meaning
        // from the model, so they stay unknown here.
        if (inferred->shape.rankKnown()) {
            std::vector<Dim> dims = inferred->shape.dims();
            for (Dim& d : dims)
                if (d.isSymbolic() && d.symbol().rfind("unk__", 0) == 0) d = Dim();
            inferred->shape = Shape(std::move(dims));
        }
        mergeType(graph.value(id).type, *inferred);
    };
    for (const auto& info : proto.value_info()) mergeInfo(info);
    for (const auto& info : proto.output()) mergeInfo(info);
}

// How much is known about the graph's intermediate types: grows with every dim learned,
// so the ONNX/our-rules rounds stop exactly when a round learns nothing.
size_t knowledge(const Graph& g) {
    size_t n = 0;
    for (NodeId nid : g.order()) {
        for (ValueId out : g.node(nid).outputs) {
            if (!out.valid()) continue;
            const ValueType& t = g.value(out).type;
            n += t.isKnown() + t.shape.rankKnown();
            for (const Dim& d : t.shape.dims()) n += !d.isUnknown();
        }
        for (const auto& sub : g.node(nid).subgraphs()) n += knowledge(*sub);
    }
    return n;
}

// Replaces the message's value_info with the IR's current knowledge of intermediates.
void writeValueInfo(const Graph& g, onnx::GraphProto& proto) {
    std::vector<bool> isOutput(g.valueCount(), false);
    for (ValueId id : g.outputs) isOutput[id.index] = true;
    proto.clear_value_info();
    for (NodeId nid : g.order()) {
        for (ValueId out : g.node(nid).outputs) {
            if (!out.valid() || isOutput[out.index] || !g.value(out).type.isKnown()) continue;
            auto* info = proto.add_value_info();
            info->set_name(g.value(out).name);
            valueTypeToProto(g.value(out).type, info->mutable_type());
        }
    }
}

}  // namespace

void mergeType(ValueType& type, const ValueType& inferred) {
    if (!inferred.isKnown()) return;
    if (!type.isKnown()) {
        type = inferred;
        return;
    }
    if (type.kind != inferred.kind) return;
    if (type.elemType == DType::Undefined) type.elemType = inferred.elemType;
    if (type.kind != ValueType::Kind::Tensor && type.kind != ValueType::Kind::SparseTensor) {
        if (!type.element && inferred.element) type.element = inferred.element;
        return;
    }
    if (!type.shape.rankKnown()) {
        type.shape = inferred.shape;
        return;
    }
    if (!inferred.shape.rankKnown() || inferred.shape.rank() != type.shape.rank()) return;
    std::vector<Dim> dims = type.shape.dims();
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i].isUnknown()) dims[i] = inferred.shape[i];
    type.shape = Shape(std::move(dims));
}

void fillUnknownTypes(Graph& graph) {
    ShapeValueTable shapeValues(graph);
    for (NodeId nid : graph.order()) {
        Node& node = graph.node(nid);
        for (const auto& sub : node.subgraphs()) fillUnknownTypes(*sub);
        shapeValues.evaluate(node);
        if (node.outputs.empty() || !node.outputs[0].valid()) continue;
        ValueType& out = graph.value(node.outputs[0]).type;
        if (out.shapeFullyKnown()) continue;
        auto inputType = [&](size_t i) -> const ValueType* {
            if (i >= node.inputs.size() || !node.inputs[i].valid()) return nullptr;
            return &graph.value(node.inputs[i]).type;
        };
        const bool onnxDomain = node.domain.empty() || node.domain == "ai.onnx";
        const ShapeValue* target =
            node.inputs.size() > 1 ? shapeValues.find(node.inputs[1]) : nullptr;
        if (passThroughOps().count(node.opType) && inputType(0)) {
            mergeType(out, *inputType(0));
        } else if (broadcastOps().count(node.opType) && !node.inputs.empty()) {
            std::vector<const ValueType*> inputs;
            for (size_t i = 0; i < node.inputs.size(); ++i) inputs.push_back(inputType(i));
            if (auto shape = broadcast(inputs))
                mergeType(out, ValueType::tensor(inputs[0]->elemType, *shape));
        } else if (onnxDomain && node.opType == "Reshape" && target && inputType(0)) {
            const Attribute* allowZero = node.attribute("allowzero");
            if (auto shape = reshapeResult(inputType(0)->shape, *target, allowZero && allowZero->i))
                mergeType(out, ValueType::tensor(inputType(0)->elemType, *shape));
        } else if (onnxDomain && node.opType == "Expand" && target && inputType(0)) {
            ValueType targetType = ValueType::tensor(inputType(0)->elemType, Shape(*target));
            if (auto shape = broadcast({inputType(0), &targetType}))
                mergeType(out, ValueType::tensor(inputType(0)->elemType, *shape));
        } else if (onnxDomain && node.opType == "Pad" && target && inputType(0) &&
                   inputType(0)->shape.rankKnown() && node.inputs.size() < 4 &&
                   target->size() == 2 * inputType(0)->shape.rank()) {
            // Pads computed at run time from shapes (windowed attention pads to a multiple).
            const size_t rank = inputType(0)->shape.rank();
            std::vector<Dim> dims;
            for (size_t i = 0; i < rank; ++i) {
                const Dim& in = inputType(0)->shape[i];
                const Dim& before = (*target)[i];
                const Dim& after = (*target)[rank + i];
                int64_t padded = 0;
                if (before.isKnown() && after.isKnown() && in.isKnown() &&
                    !__builtin_add_overflow(in.size(), before.size(), &padded) &&
                    !__builtin_add_overflow(padded, after.size(), &padded) && padded >= 0)
                    dims.push_back(Dim::known(padded));
                else if (before.isKnown() && after.isKnown() && before.size() + after.size() == 0)
                    dims.push_back(in);
                else
                    dims.push_back(Dim());
            }
            mergeType(out, ValueType::tensor(inputType(0)->elemType, Shape(std::move(dims))));
        } else if (onnxDomain && node.opType == "Slice" && node.inputs.size() >= 3 && inputType(0) &&
                   inputType(0)->shape.rankKnown()) {
            if (auto shape = sliceResult(node, graph, shapeValues))
                mergeType(out, ValueType::tensor(inputType(0)->elemType, *shape));
        } else if (onnxDomain && node.opType == "Range" && node.inputs.size() == 3 && inputType(0)) {
            auto start = knownInts(shapeValues.find(node.inputs[0]));
            auto limit = knownInts(shapeValues.find(node.inputs[1]));
            auto delta = knownInts(shapeValues.find(node.inputs[2]));
            if (start && limit && delta && start->size() == 1 && limit->size() == 1 &&
                delta->size() == 1 && (*delta)[0] != 0)
                mergeType(out, ValueType::tensor(inputType(0)->elemType,
                                                 Shape::ofSizes({rangeLength((*start)[0], (*limit)[0], (*delta)[0])})));
        } else if (onnxDomain && node.opType == "ConstantOfShape" && !node.inputs.empty()) {
            if (const ShapeValue* dims = shapeValues.find(node.inputs[0])) {
                const Attribute* value = node.attribute("value");
                mergeType(out, ValueType::tensor(value ? value->t.dtype() : DType::Float32, Shape(*dims)));
            }
        }
    }
}

namespace {

int64_t opsetFor(const std::unordered_map<std::string, int>& opsets, const std::string& domain) {
    auto it = opsets.find(domain == "ai.onnx" ? std::string() : domain);
    return it == opsets.end() ? -1 : it->second;
}

// Subgraph counts the control-flow inference functions index by without checking.
std::string controlFlowMismatch(const onnx::NodeProto& n) {
    auto graphAttr = [&](const char* name) -> const onnx::GraphProto* {
        for (const auto& a : n.attribute())
            if (a.name() == name && a.has_g()) return &a.g();
        return nullptr;
    };
    if (n.op_type() == "If") {
        for (const char* branch : {"then_branch", "else_branch"}) {
            const onnx::GraphProto* g = graphAttr(branch);
            if (g && g->output_size() != n.output_size())
                return std::string(branch) + " has " + std::to_string(g->output_size()) +
                       " outputs for " + std::to_string(n.output_size()) + " node outputs";
        }
    } else if (n.op_type() == "Loop") {
        const onnx::GraphProto* body = graphAttr("body");
        if (body && (n.input_size() < 2 || body->input_size() != n.input_size() ||
                     body->output_size() < n.input_size() - 1 ||
                     body->output_size() - 1 != n.output_size()))
            return "body inputs/outputs do not match the node's";
    } else if (n.op_type() == "Scan") {
        const onnx::GraphProto* body = graphAttr("body");
        if (body && (body->input_size() != n.input_size() || body->output_size() != n.output_size()))
            return "body inputs/outputs do not match the node's";
    }
    return {};
}

// libonnx's inference functions trust that each node already passed its schema check;
// a malformed node can crash them. Returns why inference must be skipped, or "".
std::string whyUnsafeForOnnxInference(const onnx::GraphProto& g,
                                      const std::unordered_map<std::string, int>& opsets) {
    const auto* registry = onnx::OpSchemaRegistry::Instance();
    // Inference functions read input types without checking that they exist.
    for (const auto& in : g.input()) {
        if (!in.has_type() || in.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
            return "graph input '" + in.name() + "' has no type";
        if (in.type().has_tensor_type() && in.type().tensor_type().elem_type() == 0)
            return "graph input '" + in.name() + "' has no element type";
    }
    for (const auto& n : g.node()) {
        const std::string label = "node '" + n.name() + "' (" + n.op_type() + ")";
        const int64_t version = opsetFor(opsets, n.domain());
        if (version < 0) return label + " uses domain '" + n.domain() + "', which is not imported";
        if (const auto* schema = registry->GetSchema(n.op_type(), int(version), n.domain())) {
            try {
                schema->Verify(n);
            } catch (const std::exception& e) {
                std::string what = e.what();
                if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
                return label + ": " + what;
            }
        }
        if (std::string why = controlFlowMismatch(n); !why.empty()) return label + ": " + why;
        for (const auto& a : n.attribute()) {
            if (a.has_g())
                if (std::string why = whyUnsafeForOnnxInference(a.g(), opsets); !why.empty()) return why;
            for (const auto& sub : a.graphs())
                if (std::string why = whyUnsafeForOnnxInference(sub, opsets); !why.empty()) return why;
        }
    }
    return {};
}

}  // namespace

void inferShapes(onnx::ModelProto& proto, const ProtoGraphMap& graphs, Model& model) {
    std::unordered_map<std::string, int> opsets;
    for (const auto& op : proto.opset_import())
        opsets[op.domain() == "ai.onnx" ? std::string() : op.domain()] = int(op.version());
    if (std::string why = whyUnsafeForOnnxInference(proto.graph(), opsets); !why.empty()) {
        model.warnings.push_back("ONNX shape inference skipped: " + why);
        fillUnknownTypes(*model.graph);
        return;
    }
    // ONNX's inference and our rules feed each other: what our rules learn (a Reshape's
    // target computed through Div and Cast, say) is written back as value_info so the next
    // ONNX round carries it through the ops that follow.
    constexpr int kMaxRounds = 32;
    for (int round = 0; round < kMaxRounds; ++round) {
        try {
            onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                                /*data_prop=*/true);
            onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
            for (const auto& [protoGraph, graph] : graphs) mergeFromProtoGraph(*protoGraph, *graph);
        } catch (const std::exception& e) {
            // ONNX's inference is best effort here: the graph is valid without it.
            std::string what = e.what();
            if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
            model.warnings.push_back("ONNX shape inference stopped: " + what);
            fillUnknownTypes(*model.graph);
            return;
        }
        const size_t before = knowledge(*model.graph);
        fillUnknownTypes(*model.graph);
        if (knowledge(*model.graph) == before) return;
        if (round + 1 == kMaxRounds) {
            model.warnings.push_back("shape inference stopped after " + std::to_string(kMaxRounds) +
                                     " rounds while still learning");
            return;
        }
        for (const auto& [protoGraph, graph] : graphs)
            writeValueInfo(*graph, *protoGraph);
    }
}

}  // namespace fsc
