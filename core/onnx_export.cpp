#include "core/onnx_export.h"

#include <onnx/onnx_pb.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <unordered_set>

#include "core/onnx_model_proto.h"
#include "core/onnx_proto_convert.h"

namespace fsc {
namespace {

void graphToProto(const Graph& g, onnx::GraphProto* proto, const TensorWriter& writeTensor);

void writeValueInfo(const Value& v, onnx::ValueInfoProto* info) {
    info->set_name(v.name);
    if (!v.docString.empty()) info->set_doc_string(v.docString);
    if (v.type.isKnown()) valueTypeToProto(v.type, info->mutable_type());
}

void attributeToProto(const Attribute& a, onnx::AttributeProto* p, const TensorWriter& writeTensor) {
    p->set_name(a.name);
    p->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
    if (!a.refAttrName.empty()) p->set_ref_attr_name(a.refAttrName);
    if (!a.docString.empty()) p->set_doc_string(a.docString);
    switch (a.type) {
        case Attribute::Type::Float: p->set_f(a.f); break;
        case Attribute::Type::Int: p->set_i(a.i); break;
        case Attribute::Type::String: p->set_s(a.s); break;
        case Attribute::Type::Tensor: tensorToProto(a.t, p->mutable_t()); break;
        case Attribute::Type::Graph:
            if (a.g) graphToProto(*a.g, p->mutable_g(), writeTensor);
            break;
        case Attribute::Type::SparseTensor:
            sparseTensorToProto(a.sparse, p->mutable_sparse_tensor());
            break;
        case Attribute::Type::TypeProto: valueTypeToProto(a.typeProto, p->mutable_tp()); break;
        case Attribute::Type::Floats:
            for (float f : a.floats) p->add_floats(f);
            break;
        case Attribute::Type::Ints:
            for (int64_t i : a.ints) p->add_ints(i);
            break;
        case Attribute::Type::Strings:
            for (const auto& s : a.strings) p->add_strings(s);
            break;
        case Attribute::Type::Tensors:
            for (const auto& t : a.tensors) tensorToProto(t, p->add_tensors());
            break;
        case Attribute::Type::Graphs:
            for (const auto& g : a.graphs) graphToProto(*g, p->add_graphs(), writeTensor);
            break;
        case Attribute::Type::SparseTensors:
            for (const auto& s : a.sparseTensors) sparseTensorToProto(s, p->add_sparse_tensors());
            break;
        case Attribute::Type::TypeProtos:
            for (const auto& t : a.typeProtos) valueTypeToProto(t, p->add_type_protos());
            break;
        case Attribute::Type::Undefined: break;
    }
}

void nodeToProto(const Graph& g, const Node& n, onnx::NodeProto* p, const TensorWriter& writeTensor) {
    p->set_name(n.name);
    p->set_op_type(n.opType);
    if (!n.domain.empty()) p->set_domain(n.domain);
    if (!n.docString.empty()) p->set_doc_string(n.docString);
    for (ValueId in : n.inputs) p->add_input(in.valid() ? g.value(in).name : "");
    for (ValueId out : n.outputs) p->add_output(out.valid() ? g.value(out).name : "");
    for (const Attribute& a : n.attributes) attributeToProto(a, p->add_attribute(), writeTensor);
}

void graphToProto(const Graph& g, onnx::GraphProto* proto, const TensorWriter& writeTensor) {
    proto->set_name(g.name);
    if (!g.docString.empty()) proto->set_doc_string(g.docString);
    for (ValueId id : g.inputs) writeValueInfo(g.value(id), proto->add_input());
    for (ValueId id : g.initializers) {
        const Value& v = g.value(id);
        if (v.initializer) {
            auto* tp = proto->add_initializer();
            if (!writeTensor(*v.initializer, tp)) tensorToProto(*v.initializer, tp);
            tp->set_name(v.name);
        } else if (v.sparseInitializer) {
            sparseTensorToProto(*v.sparseInitializer, proto->add_sparse_initializer());
        }
    }
    for (NodeId id : g.order()) nodeToProto(g, g.node(id), proto->add_node(), writeTensor);
    for (ValueId id : g.outputs) writeValueInfo(g.value(id), proto->add_output());
    // Types of intermediate values, so shape information survives the round trip.
    std::vector<bool> isOutput(g.valueCount(), false);
    for (ValueId id : g.outputs) isOutput[id.index] = true;
    for (NodeId nid : g.order()) {
        for (ValueId out : g.node(nid).outputs) {
            if (!out.valid() || isOutput[out.index]) continue;
            const Value& v = g.value(out);
            if (v.type.isKnown()) writeValueInfo(v, proto->add_value_info());
        }
    }
}

// Before IR version 4 every initializer had to be a graph input as well (the checker refuses a
// model without). Passes add initializers, so a model imported at IR 3 lists them on the way out.
void listInitializersAsInputs(onnx::GraphProto* g) {
    std::unordered_set<std::string> inputs;
    for (const auto& in : g->input()) inputs.insert(in.name());
    for (const auto& init : g->initializer()) {
        if (inputs.count(init.name())) continue;
        auto* info = g->add_input();
        info->set_name(init.name());
        auto* tensor = info->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(init.data_type());
        auto* shape = tensor->mutable_shape();
        for (int64_t d : init.dims()) shape->add_dim()->set_dim_value(d);
    }
    for (auto& node : *g->mutable_node())
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_g()) listInitializersAsInputs(attr.mutable_g());
            for (auto& sub : *attr.mutable_graphs()) listInitializersAsInputs(&sub);
        }
}

}  // namespace

void modelToProto(const Model& m, onnx::ModelProto* p, const TensorWriter& writeTensor) {
    p->set_ir_version(m.irVersion);
    for (const auto& [domain, version] : m.opsetImports) {
        auto* op = p->add_opset_import();
        op->set_domain(domain);
        op->set_version(version);
    }
    if (!m.producerName.empty()) p->set_producer_name(m.producerName);
    if (!m.producerVersion.empty()) p->set_producer_version(m.producerVersion);
    if (!m.domain.empty()) p->set_domain(m.domain);
    if (m.modelVersion) p->set_model_version(m.modelVersion);
    if (!m.docString.empty()) p->set_doc_string(m.docString);
    for (const auto& [k, v] : m.metadata) {
        auto* kv = p->add_metadata_props();
        kv->set_key(k);
        kv->set_value(v);
    }
    if (m.graph) graphToProto(*m.graph, p->mutable_graph(), writeTensor);
    if (m.graph && m.irVersion < 4) listInitializersAsInputs(p->mutable_graph());
    for (const Function& f : m.functions) {
        auto* fp = p->add_functions();
        fp->set_name(f.name);
        fp->set_domain(f.domain);
        if (!f.docString.empty()) fp->set_doc_string(f.docString);
        for (const auto& a : f.attributeNames) fp->add_attribute(a);
        for (const auto& [domain, version] : f.opsetImports) {
            auto* op = fp->add_opset_import();
            op->set_domain(domain);
            op->set_version(version);
        }
        const Graph& body = *f.body;
        for (ValueId id : body.inputs) fp->add_input(body.value(id).name);
        for (ValueId id : body.outputs) fp->add_output(body.value(id).name);
        for (NodeId id : body.order()) nodeToProto(body, body.node(id), fp->add_node(), writeTensor);
    }
}

namespace {

// The operating system's reason for the last failed file operation, as " (No space left on
// device)", or nothing when it gave none.
std::string systemReason() {
    return errno ? " (" + std::string(std::strerror(errno)) + ")" : std::string();
}

uint64_t initializerBytes(const Graph& g) {
    uint64_t total = 0;
    for (ValueId id : g.initializers)
        if (g.value(id).initializer) total += g.value(id).initializer->byteSize();
    for (NodeId n : g.order())
        for (const auto& sub : g.node(n).subgraphs()) total += initializerBytes(*sub);
    return total;
}

}  // namespace

Result<std::pair<uint64_t, uint64_t>> SharedWeightsFile::place(const Tensor& t) {
    const uint64_t length = t.byteSize();
    const auto storage = std::make_pair(static_cast<const void*>(t.data()), length);
    if (auto it = m_byStorage.find(storage); it != m_byStorage.end()) return std::make_pair(it->second, length);
    // FNV-1a over the bytes, confirmed byte for byte against the file's copy.
    uint64_t hash = 1469598103934665603ull;
    const auto* bytes = static_cast<const unsigned char*>(t.data());
    for (uint64_t i = 0; i < length; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    std::vector<uint64_t>& sameHash = m_byHash[{hash, length}];
    for (uint64_t offset : sameHash) {
        std::ifstream in(m_path, std::ios::binary);
        std::string copy(length, '\0');
        m_out.flush();
        if (in.seekg(std::streamoff(offset)) && in.read(copy.data(), std::streamsize(length)) &&
            std::memcmp(copy.data(), bytes, length) == 0) {
            m_byStorage[storage] = offset;
            return std::make_pair(offset, length);
        }
    }
    if (!m_out.is_open()) {
        errno = 0;
        m_out.open(m_path, std::ios::binary | std::ios::trunc);
        if (!m_out) return Status(ErrorCode::Io, m_path.string() + ": cannot write" + systemReason());
    }
    const uint64_t offset = m_size;
    m_out.write(reinterpret_cast<const char*>(bytes), std::streamsize(length));
    if (!m_out) return Status(ErrorCode::Io, m_path.string() + ": writing the weights failed" + systemReason());
    m_size += length;
    m_byStorage[storage] = offset;
    sameHash.push_back(offset);
    return std::make_pair(offset, length);
}

Result<std::string> exportModelToBytes(const Model& model) {
    onnx::ModelProto proto;
    modelToProto(model, &proto, [](const Tensor&, onnx::TensorProto*) { return false; });
    std::string bytes;
    if (proto.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !proto.SerializeToString(&bytes))
        return Status(ErrorCode::Unsupported,
                      "the model is over 2 GB; export it to a file with external data");
    return bytes;
}

Status exportModel(const Model& model, const std::filesystem::path& path,
                   const ExportOptions& options) {
    constexpr uint64_t kProtobufLimit = 2000ull * 1000 * 1000;
    SharedWeightsFile* shared = options.sharedWeights;
    bool external = shared || options.externalData == ExportOptions::ExternalData::Always ||
                    (options.externalData == ExportOptions::ExternalData::Auto && model.graph &&
                     initializerBytes(*model.graph) > kProtobufLimit / 2);
    const std::string dataName = shared ? shared->path().filename().string() : path.filename().string() + ".data";
    std::ofstream data;
    uint64_t offset = 0;
    bool dataFailed = false;
    Status sharedError = Status::ok();
    // Writing over the file (or the weights) the model was read from would lose both.
    std::error_code same;
    if (!model.path.empty() && std::filesystem::equivalent(path, model.path, same))
        return Status(ErrorCode::InvalidArgument, path.string() + ": is the model being read; write to another file");
    if (external && !shared) {
        errno = 0;
        data.open(path.parent_path() / dataName, std::ios::binary | std::ios::trunc);
        if (!data) return Status(ErrorCode::Io, path.string() + ": cannot write " + dataName + systemReason());
    }
    TensorWriter writer = [&](const Tensor& t, onnx::TensorProto* tp) {
        if (!external || t.dtype() == DType::String || t.byteSize() < options.externalThresholdBytes)
            return false;
        tensorToProto(Tensor(t.name(), t.dtype(), t.dims(), nullptr, 0, 0), tp);
        tp->clear_raw_data();
        tp->set_data_location(onnx::TensorProto::EXTERNAL);
        auto add = [tp](const std::string& k, const std::string& v) {
            auto* e = tp->add_external_data();
            e->set_key(k);
            e->set_value(v);
        };
        add("location", dataName);
        if (shared) {
            auto placed = shared->place(t);
            if (!placed) {
                sharedError = placed.status();
                return true;
            }
            add("offset", std::to_string(placed->first));
            add("length", std::to_string(placed->second));
            return true;
        }
        add("offset", std::to_string(offset));
        add("length", std::to_string(t.byteSize()));
        data.write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.byteSize()));
        dataFailed |= !data;
        offset += t.byteSize();
        return true;
    };
    onnx::ModelProto proto;
    modelToProto(model, &proto, writer);
    if (dataFailed) return Status(ErrorCode::Io, path.string() + ": writing " + dataName + " failed");
    if (!sharedError) return sharedError;
    if (proto.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return Status(ErrorCode::Unsupported,
                      path.string() + ": the graph itself is over 2 GB even without its weights");
    errno = 0;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status(ErrorCode::Io, path.string() + ": cannot write the model" + systemReason());
    if (!proto.SerializeToOstream(&out) || !out.flush())
        return Status(ErrorCode::Io, path.string() + ": writing the model failed" + systemReason());
    return Status::ok();
}

}  // namespace fsc
