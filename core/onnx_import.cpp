#include "core/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <limits>
#include <unordered_set>

#include "core/external_data.h"
#include "core/onnx_proto_convert.h"
#include "core/onnx_shape_inference.h"
#include "core/out_of_memory.h"
#include "core/topo_sort.h"

namespace fsc {
namespace {

std::string nodeLabel(const onnx::NodeProto& n) {
    return "node '" + (n.name().empty() ? std::string("<unnamed>") : n.name()) + "' (" +
           n.op_type() + ")";
}

// Converts one GraphProto (and, recursively, its subgraphs) into a Graph. `parent` is the
// enclosing graph's converter, used to resolve names a subgraph reads from outside.
class GraphConverter {
public:
    GraphConverter(GraphConverter* parent, int depth, const ImportOptions& options,
                   ExternalDataResolver* externalData, ProtoGraphMap* protoMap)
        : m_parent(parent),
          m_depth(depth),
          m_options(options),
          m_externalData(externalData),
          m_protoMap(protoMap) {}

    Result<std::shared_ptr<Graph>> convert(onnx::GraphProto& proto);

    // Formal parameters of a function body instead of typed graph inputs/outputs.
    Result<std::shared_ptr<Graph>> convertFunction(onnx::FunctionProto& proto);

private:
    Status declareInputs(onnx::GraphProto& proto);
    Status declareInitializers(onnx::GraphProto& proto);
    Status declareNodeOutputs(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes);
    Status convertNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes);
    Status convertAttribute(onnx::AttributeProto& proto, Attribute& attr);
    Result<std::shared_ptr<Graph>> convertSubgraph(onnx::GraphProto& proto);
    Status applyValueInfo(const onnx::ValueInfoProto& info, ValueId id);
    // Finds a name here or in an enclosing graph; outer names become OuterScope values.
    ValueId resolve(const std::string& name);

    GraphConverter* m_parent;
    int m_depth;
    const ImportOptions& m_options;
    ExternalDataResolver* m_externalData;
    ProtoGraphMap* m_protoMap;
    std::shared_ptr<Graph> m_graph = std::make_shared<Graph>();
    std::vector<NodeId> m_nodeIds;  // NodeProto index -> id
};

Status GraphConverter::applyValueInfo(const onnx::ValueInfoProto& info, ValueId id) {
    Value& v = m_graph->value(id);
    if (info.has_type()) {
        auto type = valueTypeFromProto(info.type());
        if (!type) return type.status().withContext("value '" + info.name() + "'");
        // The declaration wins; what it leaves open keeps what the value already had
        // (an initializer's exact shape, say).
        mergeType(*type, v.type);
        v.type = std::move(*type);
    }
    if (!info.doc_string().empty()) v.docString = info.doc_string();
    return Status::ok();
}

Status GraphConverter::declareInputs(onnx::GraphProto& proto) {
    for (const auto& in : proto.input()) {
        if (in.name().empty()) return invalidModel("graph input with an empty name");
        if (m_graph->findValue(in.name()).valid())
            return invalidModel("graph input '" + in.name() + "' is declared twice");
        Value v;
        v.name = in.name();
        v.kind = Value::Kind::GraphInput;
        v.isGraphInput = true;
        ValueId id = m_graph->addValue(std::move(v));
        FSC_RETURN_IF_ERROR(applyValueInfo(in, id));
        m_graph->inputs.push_back(id);
    }
    return Status::ok();
}

Status GraphConverter::declareInitializers(onnx::GraphProto& proto) {
    std::unordered_set<std::string> seen;
    auto declare = [&](const std::string& name, std::shared_ptr<const Tensor> dense,
                       std::shared_ptr<const SparseTensor> sparse, ValueType type) -> Status {
        if (name.empty()) return invalidModel("initializer with an empty name");
        if (!seen.insert(name).second)
            return invalidModel("initializer '" + name + "' is declared twice");
        ValueId id = m_graph->findValue(name);
        if (!id.valid()) {
            Value v;
            v.name = name;
            v.kind = Value::Kind::Initializer;
            v.type = std::move(type);
            id = m_graph->addValue(std::move(v));
        } else if (!m_graph->value(id).type.isKnown()) {
            m_graph->value(id).type = std::move(type);
        }
        m_graph->value(id).initializer = std::move(dense);
        m_graph->value(id).sparseInitializer = std::move(sparse);
        m_graph->initializers.push_back(id);
        return Status::ok();
    };
    for (auto& t : *proto.mutable_initializer()) {
        auto tensor = tensorFromProto(t, m_externalData);
        if (!tensor) return tensor.status().withContext("initializer '" + t.name() + "'");
        ValueType type = ValueType::tensor(tensor->dtype(), tensor->shape());
        std::string name = tensor->name();
        FSC_RETURN_IF_ERROR(
            declare(name, std::make_shared<const Tensor>(std::move(*tensor)), nullptr, type));
    }
    for (auto& s : *proto.mutable_sparse_initializer()) {
        auto sparse = sparseTensorFromProto(s, m_externalData);
        if (!sparse) return sparse.status().withContext("sparse initializer");
        ValueType type;
        type.kind = ValueType::Kind::SparseTensor;
        type.elemType = sparse->values.dtype();
        type.shape = Shape::ofSizes(sparse->dims);
        std::string name = sparse->values.name();
        FSC_RETURN_IF_ERROR(declare(
            name, nullptr, std::make_shared<const SparseTensor>(std::move(*sparse)), type));
    }
    return Status::ok();
}

Status GraphConverter::declareNodeOutputs(
    google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (const auto& n : nodes) {
        for (const std::string& out : n.output()) {
            if (out.empty()) continue;
            if (m_graph->findValue(out).valid())
                return invalidModel(nodeLabel(n) + ": output '" + out +
                                    "' is already produced by another node, input or "
                                    "initializer (duplicated output name)");
            Value v;
            v.name = out;
            v.kind = Value::Kind::NodeOutput;
            m_graph->addValue(std::move(v));
        }
    }
    return Status::ok();
}

ValueId GraphConverter::resolve(const std::string& name) {
    ValueId id = m_graph->findValue(name);
    if (id.valid()) return id;
    if (!m_parent || !m_parent->resolve(name).valid()) return ValueId();
    Value v;
    v.name = name;
    v.kind = Value::Kind::OuterScope;
    return m_graph->addValue(std::move(v));
}

Result<std::shared_ptr<Graph>> GraphConverter::convertSubgraph(onnx::GraphProto& proto) {
    if (m_depth + 1 > m_options.maxSubgraphDepth)
        return invalidModel("subgraphs are nested more than " +
                            std::to_string(m_options.maxSubgraphDepth) + " levels deep");
    GraphConverter child(this, m_depth + 1, m_options, m_externalData, m_protoMap);
    return child.convert(proto);
}

Status GraphConverter::convertAttribute(onnx::AttributeProto& p, Attribute& a) {
    a.name = p.name();
    a.refAttrName = p.ref_attr_name();
    a.docString = p.doc_string();
    a.type = static_cast<Attribute::Type>(p.type());
    if (a.type == Attribute::Type::Undefined) {
        // Files from before IR 3 may omit the type: take it from the field that is set.
        if (p.has_f()) a.type = Attribute::Type::Float;
        else if (p.has_i()) a.type = Attribute::Type::Int;
        else if (p.has_s()) a.type = Attribute::Type::String;
        else if (p.has_t()) a.type = Attribute::Type::Tensor;
        else if (p.has_g()) a.type = Attribute::Type::Graph;
        else if (p.floats_size()) a.type = Attribute::Type::Floats;
        else if (p.ints_size()) a.type = Attribute::Type::Ints;
        else if (p.strings_size()) a.type = Attribute::Type::Strings;
        else if (p.graphs_size()) a.type = Attribute::Type::Graphs;
        else if (p.tensors_size()) a.type = Attribute::Type::Tensors;
    }
    a.f = p.f();
    a.i = p.i();
    a.s = p.s();
    a.floats.assign(p.floats().begin(), p.floats().end());
    a.ints.assign(p.ints().begin(), p.ints().end());
    a.strings.assign(p.strings().begin(), p.strings().end());
    switch (a.type) {
        case Attribute::Type::Tensor: {
            auto t = tensorFromProto(*p.mutable_t(), m_externalData);
            if (!t) return t.status();
            a.t = std::move(*t);
            break;
        }
        case Attribute::Type::Tensors:
            for (auto& tp : *p.mutable_tensors()) {
                auto t = tensorFromProto(tp, m_externalData);
                if (!t) return t.status();
                a.tensors.push_back(std::move(*t));
            }
            break;
        case Attribute::Type::SparseTensor: {
            auto s = sparseTensorFromProto(*p.mutable_sparse_tensor(), m_externalData);
            if (!s) return s.status();
            a.sparse = std::move(*s);
            break;
        }
        case Attribute::Type::SparseTensors:
            for (auto& sp : *p.mutable_sparse_tensors()) {
                auto s = sparseTensorFromProto(sp, m_externalData);
                if (!s) return s.status();
                a.sparseTensors.push_back(std::move(*s));
            }
            break;
        case Attribute::Type::Graph: {
            auto g = convertSubgraph(*p.mutable_g());
            if (!g) return g.status();
            a.g = std::move(*g);
            break;
        }
        case Attribute::Type::Graphs:
            for (auto& gp : *p.mutable_graphs()) {
                auto g = convertSubgraph(gp);
                if (!g) return g.status();
                a.graphs.push_back(std::move(*g));
            }
            break;
        case Attribute::Type::TypeProto: {
            auto t = valueTypeFromProto(p.tp());
            if (!t) return t.status();
            a.typeProto = std::move(*t);
            break;
        }
        case Attribute::Type::TypeProtos:
            for (const auto& tp : p.type_protos()) {
                auto t = valueTypeFromProto(tp);
                if (!t) return t.status();
                a.typeProtos.push_back(std::move(*t));
            }
            break;
        case Attribute::Type::Float:
        case Attribute::Type::Int:
        case Attribute::Type::String:
        case Attribute::Type::Floats:
        case Attribute::Type::Ints:
        case Attribute::Type::Strings:
        case Attribute::Type::Undefined: break;
        default:
            return invalidModel("attribute '" + p.name() + "' has unknown type " +
                                std::to_string(p.type()));
    }
    return Status::ok();
}

Status GraphConverter::convertNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (auto& p : nodes) {
        Node n;
        n.name = p.name();
        n.opType = p.op_type();
        n.domain = p.domain();
        n.docString = p.doc_string();
        n.scope = scopeFromName(n.name);
        if (n.opType.empty()) return invalidModel(nodeLabel(p) + ": empty op_type");
        for (const std::string& in : p.input()) {
            if (in.empty()) {
                n.inputs.push_back(ValueId());
                continue;
            }
            ValueId id = resolve(in);
            if (!id.valid())
                return invalidModel(nodeLabel(p) + ": input '" + in +
                                    "' is produced by no node, graph input or initializer");
            n.inputs.push_back(id);
        }
        for (const std::string& out : p.output())
            n.outputs.push_back(out.empty() ? ValueId() : m_graph->findValue(out));
        std::unordered_set<std::string> attrNames;
        for (auto& ap : *p.mutable_attribute()) {
            if (!attrNames.insert(ap.name()).second)
                return invalidModel(nodeLabel(p) + ": attribute '" + ap.name() +
                                    "' appears twice");
            Attribute a;
            Status s = convertAttribute(ap, a);
            // An error from a subgraph already names its innermost node; naming every
            // enclosing If/Loop too would make deep nesting unreadable.
            if (!s) return s.message().rfind("node '", 0) == 0 ? s : s.withContext(nodeLabel(p));
            n.attributes.push_back(std::move(a));
        }
        m_nodeIds.push_back(m_graph->addNode(std::move(n)));
    }
    return Status::ok();
}

Result<std::shared_ptr<Graph>> GraphConverter::convert(onnx::GraphProto& proto) {
    m_graph->name = proto.name();
    m_graph->docString = proto.doc_string();
    FSC_RETURN_IF_ERROR(declareInputs(proto));
    FSC_RETURN_IF_ERROR(declareInitializers(proto));
    FSC_RETURN_IF_ERROR(declareNodeOutputs(*proto.mutable_node()));
    FSC_RETURN_IF_ERROR(convertNodes(*proto.mutable_node()));
    for (const auto& info : proto.value_info()) {
        ValueId id = m_graph->findValue(info.name());
        // value_info for a name nothing defines is stale exporter output: ignore it.
        if (id.valid()) FSC_RETURN_IF_ERROR(applyValueInfo(info, id));
    }
    for (const auto& out : proto.output()) {
        // A name listed twice is one value returned twice (PyTorch writes `return z, w, z`
        // that way); ONNX's checker and ONNX Runtime accept it, so it keeps both positions.
        ValueId id = resolve(out.name());
        if (!id.valid())
            return invalidModel("graph output '" + out.name() +
                                "' is produced by no node, graph input or initializer");
        FSC_RETURN_IF_ERROR(applyValueInfo(out, id));
        m_graph->outputs.push_back(id);
    }
    FSC_RETURN_IF_ERROR(topologicallySort(*m_graph));
    if (m_protoMap) m_protoMap->push_back({&proto, m_graph.get()});
    return m_graph;
}

Result<std::shared_ptr<Graph>> GraphConverter::convertFunction(onnx::FunctionProto& proto) {
    m_graph->name = proto.name();
    for (const std::string& in : proto.input()) {
        Value v;
        v.name = in;
        v.kind = Value::Kind::GraphInput;
        v.isGraphInput = true;
        m_graph->inputs.push_back(m_graph->addValue(std::move(v)));
    }
    FSC_RETURN_IF_ERROR(declareNodeOutputs(*proto.mutable_node()));
    FSC_RETURN_IF_ERROR(convertNodes(*proto.mutable_node()));
    for (const std::string& out : proto.output()) {
        ValueId id = m_graph->findValue(out);
        if (!id.valid())
            return invalidModel("function output '" + out + "' is produced by no node");
        m_graph->outputs.push_back(id);
    }
    FSC_RETURN_IF_ERROR(topologicallySort(*m_graph));
    return m_graph;
}

// Before IR 4 every initializer had to be listed as a graph input too, and it was a constant all
// the same (ONNX Runtime overrides one only from IR 4 on). Such inputs become plain initializers,
// so the passes fold them; export lists them as inputs again for an IR-3 model.
void makeInitializerInputsConstant(Graph& graph) {
    std::vector<ValueId> fed;
    for (ValueId id : graph.inputs) {
        Value& v = graph.value(id);
        if (!v.initializer && !v.sparseInitializer) {
            fed.push_back(id);
            continue;
        }
        v.kind = Value::Kind::Initializer;
        v.isGraphInput = false;
    }
    graph.inputs = std::move(fed);
    for (NodeId n : graph.order())
        for (const auto& sub : graph.node(n).subgraphs()) makeInitializerInputsConstant(*sub);
}

Result<Model> convertModel(onnx::ModelProto& proto, const std::string& displayName,
                           const std::filesystem::path& baseDir, const ImportOptions& options) {
    Model model;
    model.path = displayName;
    if (!proto.has_graph())
        return invalidModel("not an ONNX model: it has no graph (truncated or not ONNX?)");
    if (proto.ir_version() <= 0)
        return invalidModel("not an ONNX model: it has no IR version (truncated or not ONNX?)");
    if (proto.ir_version() < kMinIrVersion || proto.ir_version() > kMaxIrVersion)
        return Status(ErrorCode::Unsupported,
                      "IR version " + std::to_string(proto.ir_version()) +
                          " is not supported (supported: " + std::to_string(kMinIrVersion) +
                          " to " + std::to_string(kMaxIrVersion) + ")");
    if (proto.opset_import_size() == 0)
        return invalidModel("the model imports no opset (truncated file?)");
    model.irVersion = proto.ir_version();
    for (const auto& op : proto.opset_import()) {
        if (op.version() <= 0)
            return invalidModel("opset import of domain '" + op.domain() + "' has version " +
                                std::to_string(op.version()));
        model.opsetImports.emplace_back(op.domain(), op.version());
    }
    model.producerName = proto.producer_name();
    model.producerVersion = proto.producer_version();
    model.domain = proto.domain();
    model.modelVersion = proto.model_version();
    model.docString = proto.doc_string();
    for (const auto& kv : proto.metadata_props()) model.metadata.emplace_back(kv.key(), kv.value());

    ExternalDataResolver externalData(baseDir);
    ProtoGraphMap protoMap;
    GraphConverter converter(nullptr, 0, options, &externalData, &protoMap);
    auto graph = converter.convert(*proto.mutable_graph());
    if (!graph) return graph.status();
    model.graph = std::move(*graph);

    for (auto& fp : *proto.mutable_functions()) {
        Function f;
        f.name = fp.name();
        f.domain = fp.domain();
        f.docString = fp.doc_string();
        f.attributeNames.assign(fp.attribute().begin(), fp.attribute().end());
        for (const auto& op : fp.opset_import()) f.opsetImports.emplace_back(op.domain(), op.version());
        GraphConverter fc(nullptr, 0, options, &externalData, nullptr);
        auto body = fc.convertFunction(fp);
        if (!body) return body.status().withContext("function '" + fp.name() + "'");
        f.body = std::move(*body);
        model.functions.push_back(std::move(f));
    }

    if (options.inferShapes) inferShapes(proto, protoMap, *model.graph, model.warnings);
    if (model.irVersion < 4) makeInitializerInputsConstant(*model.graph);
    return model;
}

}  // namespace

namespace {

// Parses the protobuf from `stream` (`size` bytes) and converts it.
Result<Model> importFromStream(google::protobuf::io::ZeroCopyInputStream& stream, size_t size,
                               const std::string& displayName, const std::filesystem::path& baseDir,
                               const ImportOptions& options) {
    if (size == 0) return invalidModel("empty file").withContext(displayName);
    if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
        return Status(ErrorCode::Unsupported,
                      "the file is over 2 GB, which protobuf cannot parse; store the weights as "
                      "external data")
            .withContext(displayName);
    onnx::ModelProto proto;
    try {
        google::protobuf::io::CodedInputStream input(&stream);
        input.SetTotalBytesLimit(std::numeric_limits<int>::max());
        if (!proto.ParseFromCodedStream(&input) || !input.ConsumedEntireMessage())
            return invalidModel("not a valid ONNX protobuf (truncated, corrupt or not ONNX)").withContext(displayName);
    } catch (const std::bad_alloc& e) {
        return outOfMemoryStatus(e).withContext(displayName + " (parsing " + bytesText(double(size)) + ")");
    }
    try {
        auto model = convertModel(proto, displayName, baseDir, options);
        if (!model) return model.status().withContext(displayName);
        return model;
    } catch (const std::bad_alloc& e) {  // weights larger than the memory left
        return outOfMemoryStatus(e).withContext(displayName + " (reading " + bytesText(double(size)) +
                                                " of model and its weights)");
    }
}

}  // namespace

Result<Model> importModelFromBytes(const void* data, size_t size, const std::string& displayName,
                                   const std::filesystem::path& baseDir,
                                   const ImportOptions& options) {
    google::protobuf::io::ArrayInputStream stream(data, int(std::min<size_t>(size, std::numeric_limits<int>::max())));
    return importFromStream(stream, size, displayName, baseDir, options);
}

Result<Model> importModel(const std::filesystem::path& path, const ImportOptions& options) {
    // Read through the page cache in 1 MiB blocks rather than mapped: the parsed weights are
    // a copy, and a mapping of the whole file beside them doubled the peak resident memory
    // (vit_b_16: 654 MB where ONNX Runtime needs 582).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return Status(errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                      std::string("cannot open: ") + std::strerror(errno))
            .withContext(path.string());
    google::protobuf::io::FileInputStream stream(fd, 1 << 20);
    stream.SetCloseOnDelete(true);
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Status(ErrorCode::Io, "not a regular file").withContext(path.string());
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    return importFromStream(stream, size_t(st.st_size), path.string(), dir, options);
}

}  // namespace fsc
