#include "compiler/graph_breaks.h"

#include <set>

#include "compiler/runtime/fused_domain.h"
#include "compiler/runtime/memory_plan.h"

namespace fsc {
namespace {

std::string label(const Node& n) { return n.opType + " '" + n.name + "'"; }

// Bytes of a value whose shape is static (the memory plan's sizing, unpadded), else -1.
int64_t staticBytes(const Value& v) {
    auto bytes = valueBytes(v, {}, 1);
    return bytes ? int64_t(*bytes) : -1;
}

// Where a node runs and, for the host, why.
struct NodePlace {
    Placement placement = Placement::Device;
    BreakKind kind = BreakKind::UnsupportedOp;
    std::string why;
    bool syncBefore = false, syncAfter = false;
    std::string syncWhy;
};

// Shape arithmetic the host does itself, no device data needed: Shape and Size read only
// metadata, Constant is known when loaded, and integer ops over such values (the
// Shape -> Gather -> Concat chains of exporters) stay known.
bool hostKnownNode(const Graph& g, const Node& n, const std::vector<bool>& knownValue) {
    if (!n.domain.empty()) return false;
    if (n.opType == "Shape" || n.opType == "Size" || n.opType == "Constant") return true;
    for (ValueId out : n.outputs) {
        if (!out.valid()) continue;
        const DType t = g.value(out).type.elemType;
        if (t != DType::Int64 && t != DType::Int32 && t != DType::Bool) return false;
    }
    for (ValueId in : n.inputs)
        if (in.valid() && !knownValue[in.index]) return false;
    return !n.inputs.empty();
}

NodePlace place(const Graph& g, const Node& n, const CapabilityTable& table, const std::vector<Placement>& placed,
                const std::vector<bool>& knownValue) {
    NodePlace p;
    const OpCapability* cap = table.find(n.domain, n.opType);
    const std::string op = (n.domain.empty() ? "" : n.domain + "::") + n.opType;
    if (!cap) {
        p.placement = Placement::Host;
        p.why = op + " is not in the device's capability table: it runs on the CPU";
        return p;
    }
    if (!cap->anyDType)
        for (ValueId out : n.outputs) {
            if (!out.valid()) continue;
            const DType t = g.value(out).type.elemType;
            if (t != DType::Undefined && !cap->dtypes.count(t)) {
                p.placement = Placement::Host;
                p.why = op + " has no device kernel for " + std::string(dtypeName(t)) + ": it runs on the CPU";
                return p;
            }
        }
    if (cap->hostControlFlow) {
        p.placement = Placement::Host;
        p.kind = BreakKind::HostControlFlow;
        p.why = op + " is control flow: the host reads its condition or trip count, then launches a body";
        return p;
    }
    for (int k : cap->shapeInputs) {
        if (size_t(k) >= n.inputs.size() || !n.inputs[size_t(k)].valid()) continue;
        const Value& v = g.value(n.inputs[size_t(k)]);
        if (knownValue[n.inputs[size_t(k)].index] || placed[v.producer.index] != Placement::Device) continue;
        p.syncBefore = true;
        p.syncWhy = op + "'s input " + std::to_string(k) + " ('" + v.name + "') is a shape computed on the device by " +
                    label(g.node(v.producer)) + ": the host waits to read it";
    }
    if (cap->dataDependentShape) {
        p.syncAfter = true;
        p.syncWhy = op + "'s output shape depends on its data: the host waits for it before launching its readers";
    }
    return p;
}

}  // namespace

const char* breakKindName(BreakKind kind) {
    switch (kind) {
        case BreakKind::UnsupportedOp: return "unsupported-op";
        case BreakKind::DataDependentShape: return "data-dependent-shape";
        case BreakKind::HostControlFlow: return "host-control-flow";
        case BreakKind::DeviceToHostCopy: return "device-to-host-copy";
    }
    return "?";
}

GraphBreakReport findGraphBreaks(const Graph& g, const CapabilityTable& table) {
    GraphBreakReport report;
    report.backend = table.name();
    std::vector<Placement> placed(g.nodeArenaSize(), Placement::Host);
    std::vector<int> regionOf(g.nodeArenaSize(), -1);
    std::vector<bool> knownValue(g.valueCount(), false);
    for (ValueId v : g.initializers) knownValue[v.index] = true;
    bool cutNext = false;
    for (NodeId id : g.order()) {
        const Node& n = g.node(id);
        if (hostKnownNode(g, n, knownValue)) {
            for (ValueId out : n.outputs)
                if (out.valid()) knownValue[out.index] = true;
            report.hostShapeNodes++;
            continue;
        }
        NodePlace p;
        const bool collective = isCollective(n.domain, n.opType);
        if (collective)
            report.communication.push_back({id, n.inputs.empty() || !n.inputs[0].valid() ? -1 : staticBytes(g.value(n.inputs[0]))});
        else
            p = place(g, n, table, placed, knownValue);
        placed[id.index] = p.placement;
        const bool newRegion = report.regions.empty() || report.regions.back().placement != p.placement ||
                               p.syncBefore || cutNext;
        const int previous = report.regions.empty() ? -1 : report.regions.back().index;
        if (newRegion) report.regions.push_back({int(report.regions.size()), p.placement, {}});
        GraphRegion& region = report.regions.back();
        region.nodes.push_back(id);
        regionOf[id.index] = region.index;
        cutNext = p.syncAfter;
        if (!collective) (p.placement == Placement::Device ? report.deviceNodes : report.hostNodes)++;

        if (p.placement == Placement::Host)
            report.breaks.push_back({p.kind, id, {}, newRegion ? previous : region.index, region.index, -1, p.why});
        if (p.syncBefore)
            report.breaks.push_back({BreakKind::DataDependentShape, id, {}, previous, region.index, -1, p.syncWhy});
        if (p.syncAfter)
            report.breaks.push_back({BreakKind::DataDependentShape, id, n.outputs.empty() ? ValueId{} : n.outputs[0],
                                     region.index, region.index + 1, -1, p.syncWhy});
        if (p.placement == Placement::Host) {
            std::set<uint32_t> copied;
            for (ValueId in : n.inputs) {
                if (!in.valid() || !copied.insert(in.index).second) continue;
                const Value& v = g.value(in);
                if (v.kind != Value::Kind::NodeOutput || !v.producer.valid() || knownValue[in.index] ||
                    placed[v.producer.index] != Placement::Device)
                    continue;
                GraphBreak copy{BreakKind::DeviceToHostCopy, id, in, regionOf[v.producer.index], region.index,
                                staticBytes(v), ""};
                copy.reason = "'" + v.name + "'" + (copy.bytes >= 0 ? " (" + std::to_string(copy.bytes) + " bytes)" : "") +
                              " is copied to the host for " + label(n);
                report.breaks.push_back(std::move(copy));
            }
        }
    }
    return report;
}

}  // namespace fsc
