#include "compiler/rewriter.h"

#include <algorithm>
#include <functional>

namespace fsc {

Rewriter::Rewriter(Graph& graph, std::string passName) : m_graph(graph), m_pass(std::move(passName)) {
    m_live.assign(graph.nodeArenaSize(), false);
    m_users.resize(graph.valueCount());
    m_captured.assign(graph.valueCount(), false);
    m_nodeTouched.assign(graph.nodeArenaSize(), false);
    m_valueTouched.assign(graph.valueCount(), false);
    for (NodeId id : graph.order()) {
        m_live[id.index] = true;
        const Node& n = graph.node(id);
        for (ValueId in : n.inputs)
            if (in.valid()) addUse(in, id);
        for (const std::string& name : n.capturedNames()) {
            ValueId v = graph.findValue(name);
            if (!v.valid()) continue;
            addUse(v, id);
            m_captured[v.index] = true;
        }
    }
}

const std::vector<NodeId>& Rewriter::users(ValueId id) const {
    static const std::vector<NodeId> none;
    return id.valid() && id.index < m_users.size() ? m_users[id.index] : none;
}

bool Rewriter::isGraphOutput(ValueId id) const {
    return std::find(m_graph.outputs.begin(), m_graph.outputs.end(), id) != m_graph.outputs.end();
}

bool Rewriter::isCaptured(ValueId id) const {
    return id.valid() && id.index < m_captured.size() && m_captured[id.index];
}

NodeId Rewriter::producer(ValueId id) const {
    if (!id.valid()) return {};
    const Value& v = m_graph.value(id);
    if (v.kind != Value::Kind::NodeOutput || !isLive(v.producer)) return {};
    return v.producer;
}

const Tensor* Rewriter::constant(ValueId id) const {
    if (!id.valid()) return nullptr;
    const Value& v = m_graph.value(id);
    // An initializer that is also a graph input (IR >= 4) can be overridden: not constant.
    if (v.kind != Value::Kind::Initializer || v.isGraphInput) return nullptr;
    return v.initializer.get();
}

NodeId Rewriter::soleUser(ValueId id) const {
    const auto& u = users(id);
    if (u.size() != 1 || isGraphOutput(id) || isCaptured(id)) return {};
    return u[0];
}

std::string Rewriter::uniqueName(const std::string& hint) {
    std::string base = hint.empty() ? std::string("v") : hint;
    if (!m_graph.findValue(base).valid()) return base;
    for (;;) {
        std::string candidate = base + "_" + std::to_string(++m_nameCounter);
        if (!m_graph.findValue(candidate).valid()) return candidate;
    }
}

ValueId Rewriter::addConstant(Tensor tensor, const std::string& nameHint) {
    Value v;
    v.name = uniqueName(nameHint);
    v.kind = Value::Kind::Initializer;
    v.type = ValueType::tensor(tensor.dtype(), tensor.shape());
    tensor.setName(v.name);
    v.initializer = std::make_shared<const Tensor>(std::move(tensor));
    ValueId id = m_graph.addValue(std::move(v));
    m_graph.initializers.push_back(id);
    m_users.emplace_back();
    m_captured.push_back(false);
    m_valueTouched.push_back(false);
    touchValue(id);
    m_orderDirty = true;  // the initializer list changed
    return id;
}

ValueId Rewriter::addIntermediate(ValueType type, const std::string& nameHint) {
    Value v;
    v.name = uniqueName(nameHint);
    v.kind = Value::Kind::NodeOutput;
    v.type = std::move(type);
    ValueId id = m_graph.addValue(std::move(v));
    m_users.emplace_back();
    m_captured.push_back(false);
    m_valueTouched.push_back(false);
    touchValue(id);
    return id;
}

NodeId Rewriter::addNode(Node node, NodeId anchor, const std::vector<NodeId>& madeFrom) {
    std::vector<NodeId> origins;
    for (NodeId from : madeFrom) {
        const Node& f = m_graph.node(from);
        if (f.origins.empty()) origins.push_back(from);
        else origins.insert(origins.end(), f.origins.begin(), f.origins.end());
    }
    std::sort(origins.begin(), origins.end());
    origins.erase(std::unique(origins.begin(), origins.end()), origins.end());
    node.origins = std::move(origins);

    // Graph::addNode appends to the order; the order is rebuilt in finish().
    NodeId id = m_graph.addNode(std::move(node));
    auto order = m_graph.order();
    order.pop_back();
    m_graph.setOrder(std::move(order));

    m_live.push_back(true);
    m_nodeTouched.push_back(false);
    touchNode(id);
    const Node& n = m_graph.node(id);
    for (ValueId in : n.inputs)
        if (in.valid()) addUse(in, id);
    // What its bodies read by name is read too, as the constructor counts it: a control-flow
    // node moved by remove-and-add (pipeline-parallel's stage scopes) once lost the users of
    // initializers only its bodies read, and finish() dropped them.
    for (const std::string& name : n.capturedNames()) {
        ValueId v = m_graph.findValue(name);
        if (!v.valid()) continue;
        addUse(v, id);
        m_captured[v.index] = true;
    }
    for (ValueId out : n.outputs)
        if (out.valid()) touchValue(out);
    if (anchor.valid()) m_insertBefore[anchor.index].push_back(id);
    else m_prepend.push_back(id);
    m_orderDirty = true;
    m_open.added.push_back(id);
    return id;
}

void Rewriter::removeNode(NodeId id) {
    if (!isLive(id)) return;
    m_live[id.index] = false;
    const Node& n = m_graph.node(id);
    for (ValueId in : n.inputs)
        if (in.valid()) dropUse(in, id);
    for (const std::string& name : n.capturedNames()) {
        ValueId v = m_graph.findValue(name);
        if (v.valid()) dropUse(v, id);
    }
    m_orderDirty = true;
    m_open.removed.push_back(id);
}

void Rewriter::insertIdentity(ValueId keep, ValueId source) {
    Node identity;
    identity.name = m_graph.value(keep).name + "/keep_name";
    identity.opType = "Identity";
    identity.inputs = {source};
    identity.outputs = {keep};
    NodeId src = producer(source);
    // Just before the first node after the source's producer; for inputs and constants, first.
    NodeId anchor;
    if (src.valid()) {
        const auto& order = m_graph.order();
        auto it = std::find(order.begin(), order.end(), src);
        if (it != order.end() && ++it != order.end()) anchor = *it;
        NodeId id = addNode(std::move(identity), anchor, {src});
        if (!anchor.valid()) {  // the source's producer is last (or new): go after it
            m_prepend.erase(std::remove(m_prepend.begin(), m_prepend.end(), id), m_prepend.end());
            m_appendAfter[src.index].push_back(id);
        }
        return;
    }
    addNode(std::move(identity), NodeId(), {});
}

void Rewriter::replaceAllUses(ValueId from, ValueId to) {
    if (from == to) return;
    std::vector<NodeId> readers = m_users[from.index];
    for (NodeId r : readers) {
        Node& n = m_graph.node(r);
        bool reads = false;
        for (ValueId& in : n.inputs)
            if (in == from) {
                in = to;
                reads = true;
            }
        if (reads) {
            touchNode(r);
            dropUse(from, r);
            addUse(to, r);
        }
    }
    if (!isGraphOutput(from) && !isCaptured(from)) return;
    const bool toIsPlain = producer(to).valid() && !isGraphOutput(to) && !isCaptured(to);
    if (toIsPlain) {
        const std::string name = m_graph.value(from).name;
        m_graph.renameValue(from, uniqueName(name + "/replaced"));
        m_graph.renameValue(to, name);
        touchValue(from);
        touchValue(to);
        for (ValueId& out : m_graph.outputs)
            if (out == from) out = to;
        // Subgraphs read by name: their readers now read `to`.
        if (m_captured[from.index]) {
            m_captured[to.index] = true;
            m_captured[from.index] = false;
            for (NodeId r : std::vector<NodeId>(m_users[from.index])) {
                dropUse(from, r);
                addUse(to, r);
            }
        }
        m_orderDirty = true;
        return;
    }
    insertIdentity(from, to);
}

void Rewriter::setInput(NodeId node, size_t index, ValueId value) {
    Node& n = m_graph.node(node);
    ValueId old = n.inputs[index];
    n.inputs[index] = value;
    touchNode(node);
    if (old.valid() && std::find(n.inputs.begin(), n.inputs.end(), old) == n.inputs.end())
        dropUse(old, node);
    if (value.valid()) addUse(value, node);
}

Status Rewriter::setSchedule(std::vector<NodeId> order) {
    if (m_orderDirty) return Status(ErrorCode::Internal, "setSchedule: call finish() first");
    if (order.size() != m_graph.order().size())
        return Status(ErrorCode::Internal, "setSchedule: the order must list every live node once");
    std::vector<bool> done(m_graph.nodeArenaSize(), false);
    for (NodeId id : order) {
        if (!isLive(id) || done[id.index]) return Status(ErrorCode::Internal, "setSchedule: a node is dead or listed twice");
        std::vector<ValueId> reads = m_graph.node(id).inputs;
        for (const std::string& name : m_graph.node(id).capturedNames()) reads.push_back(m_graph.findValue(name));
        for (ValueId in : reads) {
            NodeId p = in.valid() ? producer(in) : NodeId{};
            if (p.valid() && !done[p.index])
                return Status(ErrorCode::Internal, "setSchedule: '" + m_graph.node(id).name + "' comes before its input's producer");
        }
        done[id.index] = true;
    }
    m_graph.setOrder(std::move(order));
    m_openModified = true;
    return Status::ok();
}

bool Rewriter::commit(const std::string& pattern, const std::string& reason) {
    if (m_open.added.empty() && m_open.removed.empty() && !m_openModified) return false;
    m_open.pass = m_pass;
    m_open.pattern = pattern;
    m_open.reason = reason;
    m_changes.push_back(std::move(m_open));
    m_open = {};
    m_openModified = false;
    return true;
}

void Rewriter::finish() {
    if (!m_orderDirty) return;
    std::vector<NodeId> order;
    order.reserve(m_graph.order().size() + m_prepend.size());
    std::function<void(NodeId)> emit = [&](NodeId id) {
        if (auto it = m_insertBefore.find(id.index); it != m_insertBefore.end())
            for (NodeId added : it->second) emit(added);
        if (m_live[id.index]) order.push_back(id);
        if (auto it = m_appendAfter.find(id.index); it != m_appendAfter.end())
            for (NodeId added : it->second) emit(added);
    };
    for (NodeId id : m_prepend) emit(id);
    for (NodeId id : m_graph.order()) emit(id);
    m_graph.setOrder(std::move(order));
    m_insertBefore.clear();
    m_appendAfter.clear();
    m_prepend.clear();
    // Initializers nobody reads any more leave the initializer list.
    auto& inits = m_graph.initializers;
    inits.erase(std::remove_if(inits.begin(), inits.end(),
                               [&](ValueId v) {
                                   return m_users[v.index].empty() && !isGraphOutput(v) &&
                                          !m_graph.value(v).isGraphInput;
                               }),
                inits.end());
    m_orderDirty = false;
}

std::vector<uint32_t> Rewriter::takeTouchedNodes() {
    for (uint32_t i : m_touchedNodes) m_nodeTouched[i] = false;
    return std::exchange(m_touchedNodes, {});
}

std::vector<uint32_t> Rewriter::takeTouchedValues() {
    for (uint32_t i : m_touchedValues) m_valueTouched[i] = false;
    return std::exchange(m_touchedValues, {});
}

void Rewriter::addUse(ValueId value, NodeId node) {
    auto& u = m_users[value.index];
    if (std::find(u.begin(), u.end(), node) == u.end()) u.push_back(node);
}

void Rewriter::dropUse(ValueId value, NodeId node) {
    auto& u = m_users[value.index];
    u.erase(std::remove(u.begin(), u.end(), node), u.end());
}

void Rewriter::touchNode(NodeId id) {
    m_openModified = true;
    if (m_nodeTouched[id.index]) return;
    m_nodeTouched[id.index] = true;
    m_touchedNodes.push_back(id.index);
}

void Rewriter::touchValue(ValueId id) {
    m_openModified = true;
    if (m_valueTouched[id.index]) return;
    m_valueTouched[id.index] = true;
    m_touchedValues.push_back(id.index);
}

}  // namespace fsc
