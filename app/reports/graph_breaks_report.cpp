#include "app/reports/graph_breaks_report.h"

#include <map>
#include <sstream>

namespace fsc {

std::string breaksSummaryLine(const GraphBreakReport& r) {
    std::ostringstream s;
    s << "graph breaks (" << r.backend << "): " << r.regions.size() << " region(s), " << r.breaks.size()
      << " break(s); " << r.deviceNodes << " node(s) on the device, " << r.hostNodes << " on the CPU, "
      << r.hostShapeNodes << " shape computation(s) on the host";
    if (!r.communication.empty()) s << ", " << r.communication.size() << " communication step(s)";
    return s.str();
}

std::string explainBreaks(const GraphBreakReport& r, const Graph& g, size_t maxListed) {
    std::ostringstream s;
    s << breaksSummaryLine(r) << "\n";
    std::map<std::string, int> byKind;
    for (const GraphBreak& b : r.breaks) byKind[breakKindName(b.kind)]++;
    for (const auto& [kind, n] : byKind) s << "  " << n << "x " << kind << "\n";
    size_t shown = 0;
    for (const GraphBreak& b : r.breaks) {
        if (shown++ == maxListed) {
            s << "  ... " << r.breaks.size() - maxListed << " more (--json lists all)\n";
            break;
        }
        s << "  [" << breakKindName(b.kind) << "] region " << b.fromRegion << " -> " << b.toRegion << " at "
          << g.node(b.node).opType << " '" << g.node(b.node).name << "': " << b.reason << "\n";
    }
    std::map<std::string, int> byOp;
    for (const CommunicationStep& c : r.communication) byOp[g.node(c.node).opType]++;
    if (!byOp.empty()) {
        s << "  communication between devices (steps of the partitioned program, not breaks):";
        for (const auto& [op, n] : byOp) s << " " << n << "x " << op;
        s << "\n";
    }
    return s.str();
}

nlohmann::json breaksJson(const GraphBreakReport& r, const Graph& g) {
    nlohmann::json regions = nlohmann::json::array();
    for (const GraphRegion& region : r.regions) {
        nlohmann::json nodes = nlohmann::json::array();
        for (NodeId id : region.nodes) nodes.push_back(g.node(id).name);
        regions.push_back({{"index", region.index},
                           {"placement", region.placement == Placement::Device ? "device" : "host"},
                           {"nodes", nodes}});
    }
    nlohmann::json communication = nlohmann::json::array();
    for (const CommunicationStep& c : r.communication) {
        nlohmann::json j = {{"node", g.node(c.node).name}, {"op", g.node(c.node).opType}};
        if (c.bytes >= 0) j["bytes"] = c.bytes;
        communication.push_back(std::move(j));
    }
    nlohmann::json breaks = nlohmann::json::array();
    for (const GraphBreak& b : r.breaks) {
        nlohmann::json j = {{"kind", breakKindName(b.kind)},
                            {"node", g.node(b.node).name},
                            {"op", g.node(b.node).opType},
                            {"from_region", b.fromRegion},
                            {"to_region", b.toRegion},
                            {"reason", b.reason}};
        if (b.value.valid()) j["value"] = g.value(b.value).name;
        if (b.bytes >= 0) j["bytes"] = b.bytes;
        breaks.push_back(std::move(j));
    }
    return {{"backend", r.backend},
            {"device_nodes", r.deviceNodes},
            {"host_nodes", r.hostNodes},
            {"host_shape_nodes", r.hostShapeNodes},
            {"regions", regions},
            {"breaks", breaks},
            {"communication", communication}};
}

}  // namespace fsc
