#include "app/analysis/variant_compare.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "app/analysis/timed_variant.h"
#include "app/common/session.h"
#include "app/profiling/profile_session.h"
#include "profiler/cpu_timer.h"
#include "profiler/trace.h"

namespace fsc {

std::string vsBaselineText(const VariantSummary& v, int rounds) {
    if (rounds == 0 || v.vsBaseline <= 0) return "";
    char text[64];
    std::snprintf(text, sizeof text, "%.2fx (%.2f-%.2f)", v.vsBaseline, v.lowestRatio, v.highestRatio);
    return text;
}

std::string compareErrorText(double error) {
    if (error < 0) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.1e", error);
    return text;
}

namespace {

// The imported nodes a traced node holds: those it was made from, or itself.
std::vector<std::string> membersOf(const TraceNode& n) {
    return n.origins.empty() ? std::vector<std::string>{n.name} : n.origins;
}

// Variant v's cells from its trace: each ONNX node of a row gets the time of the group
// holding it (shared by the group's nodes).
void fillTimes(VariantComparison& out, const std::map<std::string, size_t>& rowOf, size_t v, const Trace& trace) {
    std::map<int64_t, const NodeStat*> statOf;
    const std::vector<NodeStat> stats = computeNodeStats(trace);
    for (const NodeStat& s : stats) statOf[s.node] = &s;
    for (const TraceNode& n : trace.nodes) {
        const std::vector<std::string> members = membersOf(n);
        const auto stat = statOf.find(n.id);
        for (const std::string& member : members) {
            const auto row = rowOf.find(member);
            if (row == rowOf.end()) continue;
            NodeCell& cell = out.rows[row->second].cells[v];
            cell.ran = true;
            cell.group = n.name;
            cell.groupSize = int(members.size());
            cell.ms = stat == statOf.end() ? 0.0 : double(stat->second->medianNs) / 1e6;
        }
    }
}

}  // namespace

VariantComparison compareStoredRuns(const std::vector<StoredRun>& runs, size_t baseline) {
    VariantComparison out;
    out.baseline = baseline < runs.size() ? baseline : 0;
    std::map<std::string, size_t> rowOf;
    for (const StoredRun& run : runs) {
        if (out.model.empty()) out.model = run.trace.model;
        for (const TraceNode& n : run.trace.nodes)
            for (const std::string& member : membersOf(n)) {
                auto [at, added] = rowOf.try_emplace(member, out.rows.size());
                if (added) out.rows.push_back({member, "", std::vector<NodeCell>(runs.size())});
                // An ONNX node's op is known where it ran on its own.
                if (n.origins.empty() || (n.origins.size() == 1 && n.origins[0] == n.name))
                    out.rows[at->second].op = n.opType;
            }
    }
    for (size_t v = 0; v < runs.size(); ++v) {
        const Trace& trace = runs[v].trace;
        VariantSummary summary;
        summary.label = runs[v].label;
        summary.medianMs = trace.unprofiledMs > 0 ? trace.unprofiledMs : trace.profiledMs;
        summary.nodes = summary.kernels = trace.nodes.size();
        summary.timingWarning = trace.timingWarning;
        summary.outputError = v == out.baseline ? 0 : -1;  // not known: a run keeps no outputs
        fillTimes(out, rowOf, v, trace);
        out.variants.push_back(std::move(summary));
    }
    return out;
}

Result<VariantComparison> compareVariants(const Model& model, const std::vector<CompareVariant>& variants, size_t baseline,
                                          const CompareOptions& options, const std::atomic<bool>* cancel,
                                          const std::function<void(const std::string&)>& progress) {
    if (variants.empty() || baseline >= variants.size())
        return Status(ErrorCode::InvalidArgument, "compare needs variants and a baseline among them");
    auto say = [&](const std::string& text) {
        if (progress) progress(text);
    };
    VariantComparison out;
    out.model = model.path;
    out.baseline = baseline;
    std::map<std::string, size_t> rowOf;
    for (NodeId id : model.graph->order()) {
        const Node& n = model.graph->node(id);
        rowOf[n.name] = out.rows.size();
        out.rows.push_back({n.name, n.opType, std::vector<NodeCell>(variants.size())});
    }
    auto shared = std::make_shared<const Model>(model);
    std::vector<TimedVariant> timed;  // one per variant, when timed in rounds
    for (size_t v = 0; v < variants.size(); ++v) {
        const CompareVariant& variant = variants[v];
        if (cancel && cancel->load()) return Status(ErrorCode::Cancelled, "cancelled");
        say("profiling " + variant.label);
        Session session;
        session.setModel(shared);
        CompileOptions compile;
        compile.keepSnapshots = false;
        compile.cancel = cancel;
        if (Status s = session.compile(variant.pipeline, compile); !s) return s.withContext(variant.label);
        ProfileRequest request = session.profileRequest(session.compiledModel()->graph, variant.pipeline.target, variant.label);
        request.feeds = options.feeds;
        request.warmup = options.warmup;
        request.iterations = options.iterations;
        auto trace = profileGraph(request, cancel);
        if (!trace) return trace.status().withContext(model.path + ": " + variant.label);
        if (options.rounds > 0) {
            auto prepared = prepareVariant(*session.compiledModel(), variant.pipeline.target, options.feeds);
            if (!prepared) return prepared.status().withContext(model.path + ": " + variant.label);
            timed.push_back(std::move(*prepared));
        }
        VariantSummary summary;
        summary.label = variant.label;
        summary.medianMs = trace->unprofiledMs;
        summary.nodes = session.compiledModel()->graph->nodeCount();
        summary.kernels = trace->nodes.size();
        summary.timingWarning = trace->timingWarning;
        fillTimes(out, rowOf, v, *trace);
        if (v == baseline) {
            for (CompareRow& row : out.rows)
                if (row.cells[v].ran) row.cells[v].error = 0;
        } else {
            say("comparing " + variant.label + "'s values with " + variants[baseline].label + "'s");
            BisectOptions bisect;
            bisect.feeds = options.feeds;
            bisect.lookInside = false;
            auto report = bisectNumerics(model, {variants[baseline].label, variants[baseline].pipeline, std::nullopt},
                                         {variant.label, variant.pipeline, std::nullopt}, bisect, cancel);
            if (!report) return report.status();
            summary.outputError = report->outputError;
            summary.compared = report->groups.size();
            for (const GroupError& g : report->groups)
                for (const std::string& member : g.onnxNodes)
                    if (const auto row = rowOf.find(member); row != rowOf.end()) {
                        NodeCell& cell = out.rows[row->second].cells[v];
                        cell.error = std::max(cell.error, g.error);
                    }
        }
        out.variants.push_back(std::move(summary));
    }
    if (options.rounds > 0) {
        std::vector<TimedVariant*> order;
        for (TimedVariant& t : timed) order.push_back(&t);
        say("timing " + std::to_string(order.size()) + " variants in " + std::to_string(options.rounds) +
            " alternating rounds");
        if (Status s = alternateRounds(order, options.warmup, options.rounds, options.runsPerRound, cancel, {}, options.settle); !s)
            return s.withContext(model.path);
        out.rounds = options.rounds;
        for (size_t v = 0; v < variants.size(); ++v) {
            VariantSummary& summary = out.variants[v];
            const SampleStats latency = computeStats(timed[v].samplesMs);
            summary.medianMs = latency.median;
            summary.p90Ms = latency.p90;
            summary.timingWarning = latency.disturbed;
            const RoundRatios ratios = summarizeRoundRatios(timed[v].roundMediansMs, timed[baseline].roundMediansMs);
            summary.vsBaseline = ratios.median;
            summary.lowestRatio = ratios.lowest;
            summary.highestRatio = ratios.highest;
        }
    }
    return out;
}

}  // namespace fsc
