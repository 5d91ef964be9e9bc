#include "app/reports/compile_report.h"

#include <iomanip>
#include <map>
#include <sstream>

namespace fsc {
namespace {

// The graph a node id belongs to at the time of a change: removed ids are looked up in
// the snapshot before the pass, added ids in the snapshot after it.
// A node the compiler added has an id past the arena of any snapshot taken before it.
bool holds(const GraphSnapshot& s, NodeId id) {
    return id.valid() && id.index < s.nodeArenaSize();
}

std::string nodeLabel(const GraphSnapshot& s, NodeId id) {
    if (!holds(s, id)) return "node #" + std::to_string(id.index);
    const Node& n = s.node(id);
    return n.opType + " '" + n.name + "'";
}

std::map<std::string, int> opHistogram(const GraphSnapshot& s) {
    std::map<std::string, int> h;
    for (NodeId id : s.order()) {
        const Node& n = s.node(id);
        h[n.domain.empty() ? n.opType : n.domain + "." + n.opType]++;
    }
    return h;
}

const GraphSnapshot& before(const CompileTrace& t, size_t i) {
    for (size_t k = i; k-- > 0;)
        if (t.passes[k].snapshot) return *t.passes[k].snapshot;
    return *t.imported;
}

const GraphSnapshot& finalSnapshot(const CompileTrace& t) {
    return before(t, t.passes.size());
}

nlohmann::json nodeRef(const GraphSnapshot& s, NodeId id) {
    if (!holds(s, id)) return {{"id", id.index}, {"name", nullptr}, {"op", nullptr}};
    const Node& n = s.node(id);
    return {{"id", id.index}, {"name", n.name}, {"op", n.domain.empty() ? n.opType : n.domain + "." + n.opType}};
}

}  // namespace

std::string explainTrace(const CompileTrace& trace, const std::string& pipelineName,
                         size_t maxChangesPerPass) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2);
    const size_t first = trace.imported->nodeCount();
    const size_t last = finalSnapshot(trace).nodeCount();
    s << "pipeline " << pipelineName << ": " << trace.passes.size() << " passes, " << first << " -> "
      << last << " nodes in " << trace.totalMilliseconds << " ms\n";
    for (size_t i = 0; i < trace.passes.size(); ++i) {
        const PassReport& p = trace.passes[i];
        const long delta = long(p.nodesAfter) - long(p.nodesBefore);
        s << "\n" << std::setw(2) << i + 1 << ". " << p.name << "  " << p.nodesBefore << " -> "
          << p.nodesAfter << " (" << (delta > 0 ? "+" : "") << delta << "), " << p.milliseconds
          << " ms, matched " << p.counters.matched << ", applied " << p.counters.applied;
        if (p.counters.rejectedTotal()) s << ", rejected " << p.counters.rejectedTotal();
        s << "\n    " << p.description << "\n";
        for (const auto& [name, value] : p.counters.figures) s << "    " << name << ": " << value << "\n";
        std::map<std::string, int> byPattern;
        for (const ChangeRecord& c : p.changes) byPattern[c.pattern]++;
        for (const auto& [pattern, count] : byPattern) s << "    " << pattern << ": " << count << " change(s)\n";
        const GraphSnapshot& pre = before(trace, i);
        const GraphSnapshot& post = p.snapshot ? *p.snapshot : pre;
        for (size_t k = 0; k < p.changes.size() && k < maxChangesPerPass; ++k) {
            const ChangeRecord& c = p.changes[k];
            s << "      [" << c.pattern << "]";
            for (NodeId id : c.removed) s << " -" << nodeLabel(holds(pre, id) ? pre : post, id);
            for (NodeId id : c.added) s << " +" << nodeLabel(post, id);
            s << ": " << c.reason << "\n";
        }
        if (p.changes.size() > maxChangesPerPass)
            s << "      ... " << p.changes.size() - maxChangesPerPass << " more (--dump-dir writes all to trace.json)\n";
        // Rejections grouped by reason, with a few of the nodes.
        std::map<std::string, std::vector<const Rejection*>> byReason;
        for (const Rejection& r : p.rejections) byReason[r.pattern + ": " + r.reason].push_back(&r);
        for (const auto& [reason, list] : byReason) {
            s << "    rejected " << list.size() << "x [" << reason << "], e.g.";
            for (size_t k = 0; k < list.size() && k < 3; ++k) s << " " << nodeLabel(pre, list[k]->node);
            s << "\n";
        }
    }
    return s.str();
}

nlohmann::json compileSummaryJson(const CompileResult& result, const std::string& modelPath,
                                  const std::string& pipelineName) {
    const CompileTrace& t = result.trace;
    nlohmann::json j;
    j["schema"] = "fusescope.compile/1";
    j["model"] = modelPath;
    j["pipeline"] = pipelineName;
    j["nodes_before"] = t.imported->nodeCount();
    j["nodes_after"] = finalSnapshot(t).nodeCount();
    j["ops_before"] = opHistogram(*t.imported);
    j["ops_after"] = opHistogram(finalSnapshot(t));
    j["total_ms"] = t.totalMilliseconds;
    nlohmann::json passes = nlohmann::json::array();
    for (const PassReport& p : t.passes) {
        nlohmann::json pj;
        pj["name"] = p.name;
        pj["ms"] = p.milliseconds;
        pj["nodes_before"] = p.nodesBefore;
        pj["nodes_after"] = p.nodesAfter;
        pj["matched"] = p.counters.matched;
        pj["applied"] = p.counters.applied;
        pj["rejected"] = p.counters.rejected;
        if (!p.counters.figures.empty()) pj["figures"] = p.counters.figures;
        passes.push_back(std::move(pj));
    }
    j["passes"] = std::move(passes);
    return j;
}

nlohmann::json traceJson(const CompileResult& result, const std::string& modelPath,
                         const std::string& pipelineName) {
    const CompileTrace& t = result.trace;
    nlohmann::json j = compileSummaryJson(result, modelPath, pipelineName);
    j["schema"] = "fusescope.compile-trace/1";
    for (size_t i = 0; i < t.passes.size(); ++i) {
        const PassReport& p = t.passes[i];
        const GraphSnapshot& pre = before(t, i);
        const GraphSnapshot& post = p.snapshot ? *p.snapshot : pre;
        nlohmann::json changes = nlohmann::json::array();
        for (const ChangeRecord& c : p.changes) {
            nlohmann::json cj{{"pattern", c.pattern}, {"reason", c.reason}};
            cj["removed"] = nlohmann::json::array();
            cj["added"] = nlohmann::json::array();
            for (NodeId id : c.removed) cj["removed"].push_back(nodeRef(holds(pre, id) ? pre : post, id));
            for (NodeId id : c.added) cj["added"].push_back(nodeRef(post, id));
            changes.push_back(std::move(cj));
        }
        nlohmann::json rejections = nlohmann::json::array();
        for (const Rejection& r : p.rejections) {
            nlohmann::json rj = nodeRef(pre, r.node);
            rj["pattern"] = r.pattern;
            rj["reason"] = r.reason;
            rejections.push_back(std::move(rj));
        }
        j["passes"][i]["description"] = p.description;
        j["passes"][i]["changes"] = std::move(changes);
        j["passes"][i]["rejections"] = std::move(rejections);
    }
    // Provenance: each node of the final graph -> the imported nodes it came from.
    const GraphSnapshot& last = finalSnapshot(t);
    nlohmann::json provenance = nlohmann::json::array();
    for (NodeId id : last.order()) {
        nlohmann::json pj = nodeRef(last, id);
        nlohmann::json origins = nlohmann::json::array();
        const Node& n = last.node(id);
        // No origins: imported as it is, or (past the imported arena) added from nothing.
        if (n.origins.empty() && holds(*t.imported, id)) origins.push_back(nodeRef(*t.imported, id));
        for (NodeId o : n.origins) origins.push_back(nodeRef(*t.imported, o));
        pj["origins"] = std::move(origins);
        provenance.push_back(std::move(pj));
    }
    j["provenance"] = std::move(provenance);
    return j;
}

}  // namespace fsc
