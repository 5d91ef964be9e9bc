#include "compiler/runtime/kernel.h"

namespace fsc {

int64_t KernelInit::getInt(const std::string& name, int64_t fallback) const {
    const Attribute* a = m_node.attribute(name);
    return a ? a->i : fallback;
}

float KernelInit::getFloat(const std::string& name, float fallback) const {
    const Attribute* a = m_node.attribute(name);
    return a ? a->f : fallback;
}

std::string KernelInit::getString(const std::string& name, const std::string& fallback) const {
    const Attribute* a = m_node.attribute(name);
    return a ? a->s : fallback;
}

std::vector<int64_t> KernelInit::getInts(const std::string& name) const {
    const Attribute* a = m_node.attribute(name);
    return a ? a->ints : std::vector<int64_t>{};
}

std::vector<float> KernelInit::getFloats(const std::string& name) const {
    const Attribute* a = m_node.attribute(name);
    return a ? a->floats : std::vector<float>{};
}

std::vector<std::string> KernelInit::getStrings(const std::string& name) const {
    const Attribute* a = m_node.attribute(name);
    return a ? a->strings : std::vector<std::string>{};
}

const Tensor* KernelInit::getTensor(const std::string& name) const {
    const Attribute* a = m_node.attribute(name);
    return a && a->type == Attribute::Type::Tensor ? &a->t : nullptr;
}

std::shared_ptr<Graph> KernelInit::getGraph(const std::string& name) const {
    const Attribute* a = m_node.attribute(name);
    return a ? a->g : nullptr;
}

Status KernelInit::invalid(const std::string& message) const {
    return Status(ErrorCode::InvalidModel,
                  "node '" + m_node.name + "' (" + m_node.opType + "): " + message);
}

const Tensor* KernelInit::constantInput(size_t i) const {
    if (!inputPresent(i)) return nullptr;
    const Value& v = m_graph.value(m_node.inputs[i]);
    return v.kind == Value::Kind::Initializer ? v.initializer.get() : nullptr;
}

}  // namespace fsc
