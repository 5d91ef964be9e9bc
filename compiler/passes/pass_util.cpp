#include "compiler/passes/pass_util.h"

#include <algorithm>
#include <cstring>

#include "core/buffer.h"
#include "core/graph_builder.h"
#include "compiler/runtime/half.h"

namespace fsc::passes {

int64_t intAttr(const Node& n, const std::string& name, int64_t fallback) {
    const Attribute* a = n.attribute(name);
    return a ? a->i : fallback;
}

float floatAttr(const Node& n, const std::string& name, float fallback) {
    const Attribute* a = n.attribute(name);
    return a ? a->f : fallback;
}

std::vector<int64_t> intsAttr(const Node& n, const std::string& name) {
    const Attribute* a = n.attribute(name);
    return a ? a->ints : std::vector<int64_t>{};
}

std::string stringAttr(const Node& n, const std::string& name, const std::string& fallback) {
    const Attribute* a = n.attribute(name);
    return a ? a->s : fallback;
}

bool isOp(const Node& n, const char* opType) {
    return n.domain.empty() && n.opType == opType;
}

std::optional<ChannelAffine> batchNormAffine(const Rewriter& rw, const Node& bn) {
    if (bn.inputs.size() < 5) return std::nullopt;
    std::optional<std::vector<double>> stats[4];
    for (size_t i = 0; i < 4; ++i) {
        stats[i] = bn.inputs[i + 1].valid() ? constantValues(rw, bn.inputs[i + 1]) : std::nullopt;
        if (!stats[i] || stats[i]->size() != stats[0]->size()) return std::nullopt;
    }
    const auto &gamma = *stats[0], &beta = *stats[1], &mean = *stats[2], &var = *stats[3];
    const double epsilon = floatAttr(bn, "epsilon", 1e-5f);
    ChannelAffine a{std::vector<double>(gamma.size()), std::vector<double>(gamma.size())};
    for (size_t c = 0; c < gamma.size(); ++c) {
        a.scale[c] = gamma[c] / std::sqrt(var[c] + epsilon);
        a.shift[c] = beta[c] - mean[c] * a.scale[c];
    }
    return a;
}

std::optional<std::vector<double>> constantValues(const Rewriter& rw, ValueId v) {
    const Tensor* t = rw.constant(v);
    if (!t) return std::nullopt;
    const int64_t count = t->numElements();
    if (count < 0 || (count > 0 && !t->data())) return std::nullopt;
    std::vector<double> out(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
        switch (t->dtype()) {
            case DType::Float32: out[i] = t->dataAs<float>()[i]; break;
            case DType::Float64: out[i] = t->dataAs<double>()[i]; break;
            case DType::Float16: out[i] = halfToFloat(t->dataAs<uint16_t>()[i]); break;
            case DType::BFloat16: out[i] = bfloat16ToFloat(t->dataAs<uint16_t>()[i]); break;
            case DType::Int64: out[i] = static_cast<double>(t->dataAs<int64_t>()[i]); break;
            case DType::Int32: out[i] = t->dataAs<int32_t>()[i]; break;
            case DType::Int8: out[i] = t->dataAs<int8_t>()[i]; break;
            case DType::UInt8: out[i] = t->dataAs<uint8_t>()[i]; break;
            case DType::Bool: out[i] = t->dataAs<uint8_t>()[i] ? 1.0 : 0.0; break;
            default: return std::nullopt;
        }
    }
    return out;
}

bool isConstantSplat(const Rewriter& rw, ValueId v, double x) {
    auto values = constantValues(rw, v);
    if (!values || values->empty()) return false;
    for (double e : *values)
        if (e != x) return false;
    return true;
}

double storedPrecision(const Rewriter& rw, ValueId v) {
    const Tensor* t = rw.constant(v);
    if (t && t->dtype() == DType::Float16) return 1.0 / 1024;
    if (t && t->dtype() == DType::BFloat16) return 1.0 / 128;
    return 1e-4;
}

std::optional<double> constantScalar(const Rewriter& rw, ValueId v) {
    auto values = constantValues(rw, v);
    if (!values || values->size() != 1) return std::nullopt;
    return (*values)[0];
}

std::optional<std::vector<int64_t>> constantInts(const Rewriter& rw, ValueId v) {
    const Tensor* t = rw.constant(v);
    if (!t || (t->dtype() != DType::Int64 && t->dtype() != DType::Int32)) return std::nullopt;
    auto values = constantValues(rw, v);
    if (!values) return std::nullopt;
    std::vector<int64_t> out;
    for (double d : *values) out.push_back(static_cast<int64_t>(d));
    return out;
}

std::optional<std::vector<int64_t>> splitSizes(const Rewriter& rw, const Node& split, int64_t extent) {
    const int64_t parts = int64_t(split.outputs.size());
    std::optional<std::vector<int64_t>> sizes;
    if (split.inputs.size() > 1 && split.inputs[1].valid()) {
        sizes = constantInts(rw, split.inputs[1]);
    } else if (const Attribute* a = split.attribute("split")) {
        sizes = a->ints;
    } else if (parts > 0) {
        const int64_t chunk = (extent + parts - 1) / parts;
        sizes = std::vector<int64_t>(size_t(parts), chunk);
        sizes->back() = extent - chunk * (parts - 1);
    }
    if (!sizes || int64_t(sizes->size()) != parts) return std::nullopt;
    int64_t total = 0;
    for (int64_t s : *sizes) {
        if (s <= 0) return std::nullopt;
        total += s;
    }
    if (total != extent) return std::nullopt;
    return sizes;
}

std::optional<std::vector<int64_t>> staticDims(const Graph& g, ValueId v) {
    if (!v.valid()) return std::nullopt;
    const ValueType& t = g.value(v).type;
    if (t.kind != ValueType::Kind::Tensor || !t.shape.isStatic()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const Dim& d : t.shape.dims()) dims.push_back(d.size());
    return dims;
}

bool sameShape(const Graph& g, ValueId a, ValueId b) {
    if (!a.valid() || !b.valid()) return false;
    const ValueType &ta = g.value(a).type, &tb = g.value(b).type;
    return ta.shapeFullyKnown() && tb.shapeFullyKnown() && ta.shape == tb.shape;
}

double valueBytes(const Graph& g, ValueId v) {
    const ValueType& t = g.value(v).type;
    if (!t.shape.rankKnown()) return 0;
    double n = double(dtypeBits(t.elemType)) / 8;
    for (const Dim& d : t.shape.dims()) n *= d.isKnown() ? double(d.size()) : 1.0;
    return n;
}

DType dtypeOf(const Graph& g, ValueId v) {
    return v.valid() ? g.value(v).type.elemType : DType::Undefined;
}

NodeId exclusiveProducer(const Rewriter& rw, ValueId v, const char* opType) {
    NodeId p = rw.producer(v);
    if (!p.valid() || !isOp(rw.graph().node(p), opType)) return {};
    if (!rw.soleUser(v).valid()) return {};
    return p;
}

std::string forwardBlocker(const Rewriter& rw, ValueId from, ValueId to) {
    if (!rw.isGraphOutput(from) && !rw.isCaptured(from)) return {};
    if (rw.producer(to).valid() && !rw.isGraphOutput(to) && !rw.isCaptured(to)) return {};
    return "its output is a graph output that must keep its name";
}

bool isRandomOp(const Node& n) {
    static const char* random[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                   "RandomUniformLike", "Multinomial", "Bernoulli"};
    if (!n.domain.empty()) return false;
    for (const char* op : random)
        if (n.opType == op) return true;
    return false;
}

bool anyOutputRead(const Rewriter& rw, NodeId id) {
    for (ValueId out : rw.graph().node(id).outputs)
        if (out.valid() && (!rw.users(out).empty() || rw.isGraphOutput(out) || rw.isCaptured(out))) return true;
    return false;
}

void removeIfUnread(Rewriter& rw, NodeId id) {
    if (!anyOutputRead(rw, id)) rw.removeNode(id);
}

Tensor makeFloatTensor(std::vector<int64_t> dims, std::vector<float> values) {
    return floatTensor("", std::move(dims), values);
}

Tensor columnBlock(const Tensor& t, int64_t rows, int64_t begin, int64_t width, std::vector<int64_t> dims) {
    const size_t bytes = size_t(dtypeBits(t.dtype()) / 8), columns = size_t(t.numElements() / rows);
    std::string block(size_t(rows * width) * bytes, '\0');
    for (int64_t r = 0; r < rows; ++r)
        std::memcpy(block.data() + size_t(r * width) * bytes, t.data() + (size_t(r) * columns + size_t(begin)) * bytes,
                    size_t(width) * bytes);
    const size_t size = block.size();
    return Tensor("", t.dtype(), std::move(dims), makeBuffer(std::move(block)), 0, size);
}

}  // namespace fsc::passes

namespace fsc::passes {

Node makeNode(const std::string& opType, const std::string& domain, const Node& replaced,
              std::vector<ValueId> inputs, std::vector<ValueId> outputs,
              std::vector<Attribute> attributes) {
    Node n;
    n.name = replaced.name + "/" + opType;
    n.opType = opType;
    n.domain = domain;
    n.scope = replaced.scope;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attributes = std::move(attributes);
    return n;
}

ValueId otherInput(const Node& n, ValueId known) {
    if (n.inputs.size() != 2) return {};
    if (n.inputs[0] == known) return n.inputs[1];
    if (n.inputs[1] == known) return n.inputs[0];
    return {};
}

bool internalOnly(const Rewriter& rw, const std::vector<NodeId>& nodes) {
    for (size_t i = 0; i + 1 < nodes.size(); ++i) {
        for (ValueId out : rw.graph().node(nodes[i]).outputs) {
            if (!out.valid()) continue;
            if (rw.isGraphOutput(out) || rw.isCaptured(out)) return false;
            for (NodeId u : rw.users(out))
                if (std::find(nodes.begin(), nodes.end(), u) == nodes.end()) return false;
        }
    }
    return true;
}

}  // namespace fsc::passes
