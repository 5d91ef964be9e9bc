#include "core/onnx_shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <set>
#include <unordered_map>

#include "core/onnx_guarded_schemas.h"
#include "core/onnx_model_proto.h"
#include "core/onnx_proto_convert.h"

namespace fsc {
namespace {

void mergeFromProtoGraph(const onnx::GraphProto& proto, Graph& graph) {
    auto mergeInfo = [&](const onnx::ValueInfoProto& info) {
        ValueId id = graph.findValue(info.name());
        if (!id.valid() || !info.has_type()) return;
        auto inferred = valueTypeFromProto(info.type());
        if (!inferred) return;
        // ONNX names every dim it cannot size "unk__N" and carries that name to the ops
        // after: kept, it says which unknown dims are one and the same (the batch after a
        // Reshape with -1, say), for edge labels, the cost model and the memory plan.
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
            for (const Dim& d : t.shape.dims()) n += size_t(dimRank(d));
        }
        for (const auto& sub : g.node(nid).subgraphs()) n += knowledge(*sub);
    }
    return n;
}

// Replaces the message's value_info with the IR's current knowledge of intermediates.
bool wellFormed(const onnx::TypeProto& t);

void writeValueInfo(const Graph& g, onnx::GraphProto& proto) {
    std::vector<bool> isOutput(g.valueCount(), false);
    for (ValueId id : g.outputs) isOutput[id.index] = true;
    proto.clear_value_info();
    for (NodeId nid : g.order()) {
        for (ValueId out : g.node(nid).outputs) {
            if (!out.valid() || isOutput[out.index] || !g.value(out).type.isKnown()) continue;
            onnx::TypeProto type;
            valueTypeToProto(g.value(out).type, &type);
            if (!wellFormed(type)) continue;  // ONNX's merge would trip over it
            // ONNX keeps a dim_param it finds in value_info over what it infers: a name it
            // invented in an earlier round goes out empty, so a later round can size it.
            if (type.has_tensor_type() && type.tensor_type().has_shape())
                for (auto& d : *type.mutable_tensor_type()->mutable_shape()->mutable_dim())
                    if (d.has_dim_param() && d.dim_param().rfind("unk__", 0) == 0) d.clear_dim_param();
            auto* info = proto.add_value_info();
            info->set_name(g.value(out).name);
            *info->mutable_type() = std::move(type);
        }
    }
}

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

// Default-domain ops of a newer opset than libonnx knows whose nodes its newest schema
// refuses: left to our rules rather than ending ONNX's inference for the whole model.
using NewerOps = std::set<std::string>;

std::string whyGraphUnsafe(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& opsets, NewerOps& newer);

// libonnx's inference functions trust that each node already passed its schema check;
// a malformed node can crash them. Returns why inference must be skipped, or "".
std::string whyNodesUnsafe(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                           const std::unordered_map<std::string, int>& opsets, NewerOps& newer) {
    const auto* registry = onnx::OpSchemaRegistry::Instance();
    for (const auto& n : nodes) {
        const std::string label = "node '" + n.name() + "' (" + n.op_type() + ")";
        const int64_t version = opsetFor(opsets, n.domain());
        if (version < 0) return label + " uses domain '" + n.domain() + "', which is not imported";
        if (const auto* schema = registry->GetSchema(n.op_type(), int(version), n.domain())) {
            try {
                schema->Verify(n);
            } catch (const std::exception& e) {
                std::string what = e.what();
                if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
                const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
                if (!defaultDomain || version <= newestKnownOpset()) return label + ": " + what;
                newer.insert(n.op_type());
            }
        }
        if (std::string why = controlFlowMismatch(n); !why.empty()) return label + ": " + why;
        for (const auto& a : n.attribute()) {
            if (a.has_g())
                if (std::string why = whyGraphUnsafe(a.g(), opsets, newer); !why.empty()) return why;
            for (const auto& sub : a.graphs())
                if (std::string why = whyGraphUnsafe(sub, opsets, newer); !why.empty()) return why;
        }
    }
    return {};
}

// A type ONNX's inference can read without tripping: set, with its element types set
// all the way down.
bool wellFormed(const onnx::TypeProto& t) {
    switch (t.value_case()) {
        case onnx::TypeProto::kTensorType: return t.tensor_type().elem_type() != 0;
        case onnx::TypeProto::kSparseTensorType: return t.sparse_tensor_type().elem_type() != 0;
        case onnx::TypeProto::kSequenceType:
            return t.sequence_type().has_elem_type() && wellFormed(t.sequence_type().elem_type());
        case onnx::TypeProto::kOptionalType:
            return t.optional_type().has_elem_type() && wellFormed(t.optional_type().elem_type());
        case onnx::TypeProto::kMapType:
            return t.map_type().key_type() != 0 && t.map_type().has_value_type() &&
                   wellFormed(t.map_type().value_type());
        default: return false;
    }
}

std::string whyGraphUnsafe(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& opsets, NewerOps& newer) {
    // Inference functions read input types without checking that they exist, and merge
    // declared output and value_info types into what they infer.
    for (const auto& in : g.input())
        if (!in.has_type() || !wellFormed(in.type()))
            return "graph input '" + in.name() + "' has no complete type";
    for (const auto* infos : {&g.output(), &g.value_info()})
        for (const auto& info : *infos)
            if (info.has_type() && !wellFormed(info.type()))
                return "value '" + info.name() + "' has an incomplete type";
    return whyNodesUnsafe(g.node(), opsets, newer);
}

// The whole model: the graph and the model-local functions, whose bodies ONNX infers
// through when they are called.
std::string whyModelUnsafe(const onnx::ModelProto& proto, const std::unordered_map<std::string, int>& opsets,
                           NewerOps& newer) {
    if (std::string why = whyGraphUnsafe(proto.graph(), opsets, newer); !why.empty()) return why;
    for (const auto& f : proto.functions()) {
        std::unordered_map<std::string, int> own = opsets;
        for (const auto& op : f.opset_import())
            own[op.domain() == "ai.onnx" ? std::string() : op.domain()] = int(op.version());
        if (std::string why = whyNodesUnsafe(f.node(), own, newer); !why.empty())
            return "function '" + f.name() + "': " + why;
    }
    return {};
}

// libonnx 1.12's data propagation for Shape dereferences its input's type without checking
// that there is one, and crashes where the input has none. A value gets none downstream of an
// op libonnx has no schema for (ONNX Runtime's com.microsoft ops, which a model saved after its
// optimizer holds: FusedMatMul, then a Gemm, then a Shape). Names the first such op, or "".
std::string opWithoutSchema(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& opsets) {
    const auto* registry = onnx::OpSchemaRegistry::Instance();
    for (const auto& n : g.node()) {
        const int64_t version = opsetFor(opsets, n.domain());
        if (!registry->GetSchema(n.op_type(), int(version), n.domain()))
            return (n.domain().empty() ? "" : n.domain() + ".") + n.op_type();
        for (const auto& a : n.attribute()) {
            std::string inner = a.has_g() ? opWithoutSchema(a.g(), opsets) : std::string();
            for (const auto& sub : a.graphs())
                if (inner.empty()) inner = opWithoutSchema(sub, opsets);
            if (!inner.empty()) return inner;
        }
    }
    return {};
}

// How many nodes (subgraphs' included) have an op ONNX has no schema for.
int countOpsWithoutSchema(const onnx::GraphProto& g, const std::unordered_map<std::string, int>& opsets) {
    const auto* registry = onnx::OpSchemaRegistry::Instance();
    int count = 0;
    for (const auto& n : g.node()) {
        count += !registry->GetSchema(n.op_type(), int(opsetFor(opsets, n.domain())), n.domain());
        for (const auto& a : n.attribute()) {
            if (a.has_g()) count += countOpsWithoutSchema(a.g(), opsets);
            for (const auto& sub : a.graphs()) count += countOpsWithoutSchema(sub, opsets);
        }
    }
    return count;
}

void collectTyped(const onnx::GraphProto& g, std::set<std::string>& typed, std::vector<std::string>& shapeInputs) {
    auto add = [&](const auto& infos) {
        for (const auto& info : infos)
            if (info.has_type()) typed.insert(info.name());
    };
    add(g.input());
    add(g.output());
    add(g.value_info());
    for (const auto& t : g.initializer()) typed.insert(t.name());
    for (const auto& n : g.node()) {
        if (n.op_type() == "Shape" && n.input_size() > 0) shapeInputs.push_back(n.input(0));
        for (const auto& a : n.attribute()) {
            if (a.has_g()) collectTyped(a.g(), typed, shapeInputs);
            for (const auto& sub : a.graphs()) collectTyped(sub, typed, shapeInputs);
        }
    }
}

// Whether every Shape node's input has a type by now (inferred, or written back by our rules):
// then value propagation cannot reach a missing one.
bool everyShapeInputTyped(const onnx::GraphProto& g) {
    std::set<std::string> typed;
    std::vector<std::string> shapeInputs;
    collectTyped(g, typed, shapeInputs);
    for (const std::string& name : shapeInputs)
        if (!typed.count(name)) return false;
    return true;
}

}  // namespace

void inferShapes(onnx::ModelProto& proto, const ProtoGraphMap& graphs, Graph& root, std::vector<std::string>& warnings) {
    std::unordered_map<std::string, int> opsets;
    for (const auto& op : proto.opset_import())
        opsets[op.domain() == "ai.onnx" ? std::string() : op.domain()] = int(op.version());
    NewerOps newer;
    if (std::string why = whyModelUnsafe(proto, opsets, newer); !why.empty()) {
        warnings.push_back("ONNX shape inference skipped: " + why);
        fillUnknownTypes(root);
        return;
    }
    if (!newer.empty()) {
        std::string ops;
        for (const std::string& op : newer) ops += (ops.empty() ? "" : ", ") + op;
        warnings.push_back("ONNX shape inference (libonnx knows opsets up to " + std::to_string(newestKnownOpset()) +
                                 ") left these ops of opset " + std::to_string(opsetFor(opsets, "")) +
                                 " to Fusescope's own rules: " + ops);
    }
    const std::unique_ptr<onnx::ISchemaRegistry> registry = guardedSchemaRegistry(newer);
    // Where an op has no schema (see opWithoutSchema), a round propagates values only once every
    // Shape's input has a type; our rules (which know ONNX Runtime's common ops) type them
    // between rounds.
    const bool schemaForEveryOp = opWithoutSchema(proto.graph(), opsets).empty();
    // ONNX's inference and our rules feed each other: what our rules learn (a Reshape's
    // target computed through Div and Cast, say) is written back as value_info so the next
    // ONNX round carries it through the ops that follow.
    // Where our rules miss an op between two without a schema, a round carries the types one
    // such op further: the rounds allow one each, beyond 32 for the rest.
    const int maxRounds = 32 + countOpsWithoutSchema(proto.graph(), opsets);
    for (int round = 0; round < maxRounds; ++round) {
        try {
            const bool propagateValues = schemaForEveryOp || everyShapeInputTyped(proto.graph());
            onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                                /*data_prop=*/propagateValues);
            onnx::shape_inference::InferShapes(proto, registry.get(), options);
            for (const auto& [protoGraph, graph] : graphs) mergeFromProtoGraph(*protoGraph, *graph);
        } catch (const std::exception& e) {
            // ONNX's inference is best effort here: the graph is valid without it.
            std::string what = e.what();
            if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
            warnings.push_back("ONNX shape inference stopped: " + what);
            fillUnknownTypes(root);
            return;
        }
        const size_t before = knowledge(root);
        fillUnknownTypes(root);
        if (knowledge(root) == before) return;
        if (round + 1 == maxRounds) {
            warnings.push_back("shape inference stopped after " + std::to_string(maxRounds) +
                                     " rounds while still learning");
            return;
        }
        for (const auto& [protoGraph, graph] : graphs)
            writeValueInfo(*graph, *protoGraph);
    }
}

namespace {

// Each IR graph beside the message modelToProto wrote from it: nodes in the graph's order,
// attributes in the node's.
void pairGraphs(Graph& g, onnx::GraphProto& proto, ProtoGraphMap& pairs) {
    pairs.emplace_back(&proto, &g);
    int k = 0;
    for (NodeId id : g.order()) {
        Node& n = g.node(id);
        onnx::NodeProto& p = *proto.mutable_node(k++);
        for (size_t a = 0; a < n.attributes.size(); ++a) {
            Attribute& attr = n.attributes[a];
            onnx::AttributeProto& pa = *p.mutable_attribute(int(a));
            if (attr.type == Attribute::Type::Graph && attr.g) pairGraphs(*attr.g, *pa.mutable_g(), pairs);
            if (attr.type == Attribute::Type::Graphs)
                for (size_t s = 0; s < attr.graphs.size(); ++s)
                    pairGraphs(*attr.graphs[s], *pa.mutable_graphs(int(s)), pairs);
        }
    }
}

}  // namespace

std::vector<std::string> refreshShapes(const Model& model) {
    std::vector<std::string> warnings;
    if (!model.graph) return warnings;
    onnx::ModelProto proto;
    // Large tensors go without their bytes, as at import: inference reads only their types.
    modelToProto(model, &proto, [](const Tensor& t, onnx::TensorProto* tp) {
        if (t.dtype() == DType::String || t.byteSize() < kInferenceDatalessBytes) return false;
        tensorToProto(Tensor(t.name(), t.dtype(), t.dims(), nullptr, 0, 0), tp);
        tp->clear_raw_data();
        return true;
    });
    ProtoGraphMap graphs;
    pairGraphs(*model.graph, *proto.mutable_graph(), graphs);
    for (const auto& [protoGraph, graph] : graphs) writeValueInfo(*graph, *protoGraph);
    inferShapes(proto, graphs, *model.graph, warnings);
    return warnings;
}

}  // namespace fsc
