#include "core/text_printer.h"

#include <cstdio>
#include <sstream>

namespace fsc {
namespace {

std::string hex(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string tensorText(const Tensor& t) {
    return std::string(dtypeName(t.dtype())) + Shape::ofSizes(t.dims()).toString() + " #" +
           hex(t.fingerprint());
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') out += "\\n";
        else out += c;
    }
    return out + "\"";
}

template <typename T, typename F>
std::string list(const std::vector<T>& items, F format) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) s += ",";
        s += format(items[i]);
    }
    return s + "]";
}

std::string floatText(float f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", f);
    return buf;
}

void printAttribute(std::ostringstream& os, const Attribute& a, int indent) {
    std::string pad(indent, ' ');
    os << pad << "  @" << a.name << ": " << attributeTypeName(a.type) << " = ";
    if (a.type == Attribute::Type::Graph) {
        os << "\n" << printGraph(*a.g, indent + 4);
        return;
    }
    if (a.type == Attribute::Type::Graphs) {
        os << a.graphs.size() << " graphs\n";
        for (const auto& g : a.graphs) os << printGraph(*g, indent + 4);
        return;
    }
    os << attributeValueText(a) << "\n";
}

}  // namespace

std::string attributeValueText(const Attribute& a) {
    std::ostringstream os;
    if (!a.refAttrName.empty()) os << "ref(" << a.refAttrName << ") ";
    switch (a.type) {
        case Attribute::Type::Float: os << floatText(a.f); break;
        case Attribute::Type::Int: os << a.i; break;
        case Attribute::Type::String: os << quoted(a.s); break;
        case Attribute::Type::Tensor: os << tensorText(a.t); break;
        case Attribute::Type::SparseTensor:
            os << "sparse(" << tensorText(a.sparse.values) << " at " << tensorText(a.sparse.indices)
               << " in " << Shape::ofSizes(a.sparse.dims).toString() << ")";
            break;
        case Attribute::Type::TypeProto: os << a.typeProto.toString(); break;
        case Attribute::Type::Floats: os << list(a.floats, floatText); break;
        case Attribute::Type::Ints:
            os << list(a.ints, [](int64_t v) { return std::to_string(v); });
            break;
        case Attribute::Type::Strings: os << list(a.strings, quoted); break;
        case Attribute::Type::Tensors: os << list(a.tensors, tensorText); break;
        case Attribute::Type::SparseTensors: os << a.sparseTensors.size() << " sparse tensors"; break;
        case Attribute::Type::TypeProtos:
            os << list(a.typeProtos, [](const ValueType& t) { return t.toString(); });
            break;
        case Attribute::Type::Graph: os << "graph '" << (a.g ? a.g->name : std::string()) << "'"; break;
        case Attribute::Type::Graphs: os << a.graphs.size() << " graphs"; break;
        case Attribute::Type::Undefined: os << "?"; break;
    }
    return os.str();
}

std::string printGraph(const Graph& g, int indent) {
    std::ostringstream os;
    std::string pad(indent, ' ');
    auto valueText = [&](ValueId id) {
        if (!id.valid()) return std::string("<none>");
        const Value& v = g.value(id);
        return v.name + ": " + v.type.toString();
    };
    os << pad << "graph " << quoted(g.name) << " {\n";
    for (ValueId id : g.inputs) os << pad << "  input " << valueText(id) << "\n";
    for (ValueId id : g.initializers) {
        const Value& v = g.value(id);
        os << pad << "  init " << v.name << " = ";
        if (v.initializer) os << tensorText(*v.initializer);
        else if (v.sparseInitializer)
            os << "sparse(" << tensorText(v.sparseInitializer->values) << " at "
               << tensorText(v.sparseInitializer->indices) << " in "
               << Shape::ofSizes(v.sparseInitializer->dims).toString() << ")";
        os << (v.isGraphInput ? " (overridable)" : "") << "\n";
    }
    for (NodeId nid : g.order()) {
        const Node& n = g.node(nid);
        os << pad << "  node " << quoted(n.name) << " " << (n.domain.empty() ? "" : n.domain + "::")
           << n.opType << "(";
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            if (i) os << ", ";
            os << (n.inputs[i].valid() ? g.value(n.inputs[i]).name : "<none>");
        }
        os << ") -> (";
        for (size_t i = 0; i < n.outputs.size(); ++i) {
            if (i) os << ", ";
            os << valueText(n.outputs[i]);
        }
        os << ")";
        if (!n.scope.empty()) os << " scope=" << n.scope;
        os << "\n";
        if (!n.origins.empty()) {  // provenance: the imported nodes it was made from
            os << pad << "    from";
            for (NodeId o : n.origins) os << " " << quoted(g.node(o).name);
            os << "\n";
        }
        for (const Attribute& a : n.attributes) printAttribute(os, a, indent + 2);
    }
    for (ValueId id : g.outputs) os << pad << "  output " << valueText(id) << "\n";
    os << pad << "}\n";
    return os.str();
}

std::string printModel(const Model& m) {
    std::ostringstream os;
    os << "model ir=" << m.irVersion << " opsets=[";
    for (size_t i = 0; i < m.opsetImports.size(); ++i) {
        if (i) os << ",";
        os << (m.opsetImports[i].first.empty() ? "ai.onnx" : m.opsetImports[i].first) << ":"
           << m.opsetImports[i].second;
    }
    os << "] producer=" << quoted(m.producerName + " " + m.producerVersion) << "\n";
    for (const auto& [k, v] : m.metadata) os << "meta " << quoted(k) << " = " << quoted(v) << "\n";
    if (m.graph) os << printGraph(*m.graph);
    for (const Function& f : m.functions) {
        os << "function " << f.domain << "::" << f.name << " attrs="
           << list(f.attributeNames, quoted) << "\n"
           << printGraph(*f.body, 2);
    }
    return os.str();
}

}  // namespace fsc
