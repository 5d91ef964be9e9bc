#include "app/analysis/ablation_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/units.h"
#include "profiler/xml_escape.h"

namespace fsc {
namespace {

const char* kindName(PassEffect::Kind kind) {
    switch (kind) {
    case PassEffect::Kind::Measured: return "measured";
    case PassEffect::Kind::SameGraph: return "same-graph";
    case PassEffect::Kind::Failed: return "failed";
    }
    return "";
}

std::string fixed(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

nlohmann::json figuresJson(const VariantFigures& f) {
    return {{"nodes", f.nodes},
            {"kernels", f.kernels},
            {"arena_bytes", f.arenaBytes},
            {"latency_ms", {{"median", f.latency.median}, {"p90", f.latency.p90}, {"min", f.latency.min},
                            {"max", f.latency.max}, {"coefficient_of_variation", f.latency.coefficientOfVariation},
                            {"round_medians", f.roundMediansMs}, {"samples", f.samplesMs}}}};
}

nlohmann::json interactionsJson(const std::vector<PassInteraction>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const PassInteraction& i : list)
        out.push_back({{"pass", i.pass}, {"applied_with", i.appliedWith}, {"applied_without", i.appliedWithout}});
    return out;
}

nlohmann::json effectJson(const PassEffect& e) {
    nlohmann::json j = {{"label", e.label}, {"pass", e.pass}, {"kind", kindName(e.kind)}, {"verdict", effectVerdict(e)}};
    if (!e.note.empty()) j["note"] = e.note;
    if (e.kind != PassEffect::Kind::Failed) j["figures"] = figuresJson(e.figures);
    if (e.kind == PassEffect::Kind::Measured)
        j["effect"] = {{"ratio", e.ratio}, {"lowest_ratio", e.lowestRatio}, {"highest_ratio", e.highestRatio},
                       {"saved_ms", e.deltaMs}, {"above_noise", e.aboveNoise}};
    j["enables"] = interactionsJson(e.enables);
    j["taken_over_by"] = interactionsJson(e.takesOver);
    return j;
}

std::string interactionsText(const std::vector<PassInteraction>& list) {
    std::string text;
    for (const PassInteraction& i : list)
        text += (text.empty() ? "" : ", ") + i.pass + " (" + std::to_string(i.appliedWith) + " -> " +
                std::to_string(i.appliedWithout) + ")";
    return text;
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

// The table's rows: the full pipeline, then each variant.
struct Row {
    std::string label;
    const VariantFigures* figures;
    const PassEffect* effect;  // null for the full pipeline
};

std::vector<Row> rowsOf(const AblationReport& r, bool cumulative) {
    std::vector<Row> rows;
    if (!cumulative) rows.push_back({"full " + r.pipeline, &r.full, nullptr});
    for (const PassEffect& e : cumulative ? r.upTo : r.without) rows.push_back({e.label, &e.figures, &e});
    return rows;
}

std::string methodText(const AblationReport& r) {
    return std::to_string(r.rounds) + " alternating rounds of " + std::to_string(r.runsPerRound) + " runs per variant (after " +
           std::to_string(r.settle) + " untimed in each round and " + std::to_string(r.warmup) + " warm-ups), " + r.target + " backend, " + std::to_string(r.threads) +
           (r.threads == 1 ? " thread" : " threads") + "; " + r.noiseRule;
}

}  // namespace

std::string effectVerdict(const PassEffect& e) {
    switch (e.kind) {
    case PassEffect::Kind::SameGraph:
        return e.note.find("later passes") != std::string::npos ? "same graph: later passes do its work"
                                                                : "same graph: nothing to do here";
    case PassEffect::Kind::Failed: return e.note.rfind("does not run", 0) == 0 ? "does not run" : "does not compile";
    case PassEffect::Kind::Measured: break;
    }
    if (!e.aboveNoise) return "within noise (" + fixed(e.ratio, 2) + "x)";
    return std::string(e.deltaMs > 0 ? "saves " : "costs ") + durationText(std::abs(e.deltaMs)) + " (" + fixed(e.ratio, 2) + "x)";
}

nlohmann::json ablationJson(const AblationReport& r) {
    nlohmann::json j;
    j["schema"] = "fusescope.ablation/1";
    j["model"] = r.model;
    j["pipeline"] = r.pipeline;
    j["backend"] = r.target;
    j["threads"] = r.threads;
    j["method"] = {{"warmup", r.warmup}, {"rounds", r.rounds}, {"runs_per_round", r.runsPerRound}, {"settle", r.settle},
                   {"noise_rule", r.noiseRule}, {"ratio", "time without the pass / time with it"}};
    j["seconds"] = r.seconds;
    j["full"] = figuresJson(r.full);
    j["without"] = nlohmann::json::array();
    for (const PassEffect& e : r.without) j["without"].push_back(effectJson(e));
    if (!r.upTo.empty()) {
        j["cumulative"] = nlohmann::json::array();
        for (const PassEffect& e : r.upTo) j["cumulative"].push_back(effectJson(e));
    }
    return j;
}

std::string ablationCsv(const AblationReport& r) {
    std::ostringstream out;
    out << "table,variant,pass,kind,nodes,kernels,arena_bytes,median_ms,p90_ms,ratio,lowest_ratio,highest_ratio,"
           "saved_ms,above_noise,enables,taken_over_by,note\n";
    for (bool cumulative : {false, true}) {
        if (cumulative && r.upTo.empty()) break;
        for (const Row& row : rowsOf(r, cumulative)) {
            const PassEffect* e = row.effect;
            const bool timed = !e || e->kind != PassEffect::Kind::Failed;
            const bool measured = e && e->kind == PassEffect::Kind::Measured;
            out << (cumulative ? "cumulative" : "without") << "," << csvField(row.label) << "," << csvField(e ? e->pass : "")
                << "," << (e ? kindName(e->kind) : "full") << ",";
            if (timed)
                out << row.figures->nodes << "," << row.figures->kernels << "," << row.figures->arenaBytes << ","
                    << row.figures->latency.median << "," << row.figures->latency.p90 << ",";
            else
                out << ",,,,,";
            if (measured)
                out << e->ratio << "," << e->lowestRatio << "," << e->highestRatio << "," << e->deltaMs << ","
                    << (e->aboveNoise ? "yes" : "no") << ",";
            else
                out << ",,,,,";
            out << csvField(e ? interactionsText(e->enables) : "") << "," << csvField(e ? interactionsText(e->takesOver) : "")
                << "," << csvField(e ? e->note : "") << "\n";
        }
    }
    return out.str();
}

std::string ablationText(const AblationReport& r) {
    std::ostringstream out;
    out << "model: " << r.model << "  pipeline: " << r.pipeline << "  backend: " << r.target << "  threads: " << r.threads
        << "\nmethod: " << methodText(r) << "\n";
    for (bool cumulative : {false, true}) {
        if (cumulative && r.upTo.empty()) break;
        out << "\n" << (cumulative ? "the pipeline step by step (what each step saved against the one before)"
                                   : "each pass left out (what it saved against the full pipeline)")
            << "\n";
        const std::vector<Row> rows = rowsOf(r, cumulative);
        int width = 8;
        for (const Row& row : rows) width = std::max(width, int(row.label.size()));
        char line[1024];
        std::snprintf(line, sizeof line, "  %-*s %6s %8s %11s %11s %11s  %s\n", width, "variant", "nodes", "kernels",
                      "arena", "median", "p90", "effect");
        out << line;
        for (const Row& row : rows) {
            const PassEffect* e = row.effect;
            if (e && e->kind == PassEffect::Kind::Failed) {
                out << "  " << row.label << std::string(size_t(width - int(row.label.size())) + 1, ' ') << e->note << "\n";
                continue;
            }
            const VariantFigures& f = *row.figures;
            std::snprintf(line, sizeof line, "  %-*s %6s %8s %11s %11s %11s  %s\n", width, row.label.c_str(),
                          groupedDigits(f.nodes).c_str(), groupedDigits(f.kernels).c_str(),
                          bytesText(double(f.arenaBytes)).c_str(), durationText(f.latency.median).c_str(),
                          durationText(f.latency.p90).c_str(), e ? effectVerdict(*e).c_str() : "baseline");
            out << line;
            if (e && !e->enables.empty()) out << "      enables: " << interactionsText(e->enables) << "\n";
            if (e && !e->takesOver.empty()) out << "      taken over by: " << interactionsText(e->takesOver) << "\n";
        }
    }
    if (!r.full.latency.disturbed.empty()) out << "warning: the full pipeline's runs: " << r.full.latency.disturbed << "\n";
    out << "took " << fixed(r.seconds, 1) << " s\n";
    return out.str();
}

std::string ablationHtml(const AblationReport& r) {
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Pass ablation: "
        << escapeXml(r.model) << "</title>\n<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1200px}"
        << "table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
        << "td:first-child,th:first-child,td.l{text-align:left}.paid{color:#1a7f37}.cost{color:#b42318}.quiet{color:#777}"
        << "caption{text-align:left;font-weight:600;padding:8px 0}</style></head><body>\n";
    out << "<h1>Pass ablation</h1>\n<p>" << escapeXml(r.model) << " &middot; pipeline " << escapeXml(r.pipeline) << " &middot; "
        << escapeXml(r.target) << " backend &middot; " << r.threads << (r.threads == 1 ? " thread" : " threads") << "</p>\n<p>"
        << escapeXml(methodText(r)) << ". The ratio is the time without the pass over the time with it: above 1, the pass paid.</p>\n";
    if (!r.full.latency.disturbed.empty())
        out << "<p class=\"cost\">Warning: the full pipeline's runs: " << escapeXml(r.full.latency.disturbed) << "</p>\n";
    for (bool cumulative : {false, true}) {
        if (cumulative && r.upTo.empty()) break;
        out << "<table><caption>" << (cumulative ? "The pipeline step by step" : "Each pass left out") << "</caption>\n"
            << "<tr><th>variant</th><th>nodes</th><th>kernels</th><th>arena</th><th>median</th><th>p90</th>"
            << "<th>ratio (range)</th><th>effect</th><th>enables</th><th>taken over by</th></tr>\n";
        for (const Row& row : rowsOf(r, cumulative)) {
            const PassEffect* e = row.effect;
            out << "<tr><td>" << escapeXml(row.label) << "</td>";
            if (e && e->kind == PassEffect::Kind::Failed) {
                out << "<td class=\"l\" colspan=\"9\">" << escapeXml(e->note) << "</td></tr>\n";
                continue;
            }
            const VariantFigures& f = *row.figures;
            out << "<td>" << groupedDigits(f.nodes) << "</td><td>" << groupedDigits(f.kernels) << "</td><td>"
                << bytesText(double(f.arenaBytes)) << "</td><td>" << durationText(f.latency.median) << "</td><td>"
                << durationText(f.latency.p90) << "</td><td>";
            if (e && e->kind == PassEffect::Kind::Measured)
                out << fixed(e->ratio, 2) << "x (" << fixed(e->lowestRatio, 2) << "&ndash;" << fixed(e->highestRatio, 2) << ")";
            const char* style = !e || e->kind != PassEffect::Kind::Measured || !e->aboveNoise ? "quiet"
                                : e->deltaMs > 0                                            ? "paid"
                                                                                            : "cost";
            out << "</td><td class=\"l " << style << "\">" << escapeXml(e ? effectVerdict(*e) : "baseline") << "</td><td class=\"l\">"
                << escapeXml(e ? interactionsText(e->enables) : "") << "</td><td class=\"l\">"
                << escapeXml(e ? interactionsText(e->takesOver) : "") << "</td></tr>\n";
        }
        out << "</table>\n";
    }
    out << "</body></html>\n";
    return out.str();
}

}  // namespace fsc
