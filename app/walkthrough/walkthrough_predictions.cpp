// Predict, then reveal: each chapter asks one question a student should answer before
// reading on, and answers it in a sentence with this model's figures, read from the figures
// the chapter already reports (never a second computation). Formatting goes through the
// handout's own (walkthrough_figures.h), so the answer and the table below it agree.
#include <algorithm>
#include <cmath>
#include <string>

#include "app/walkthrough/walkthrough_chapters.h"
#include "app/walkthrough/walkthrough_figures.h"

namespace fsc {
namespace {

using nlohmann::json;

// figureValueText of figures[path...], or "" when a step of the path is missing.
std::string text(const json& figures, std::initializer_list<const char*> path) {
    const json* at = &figures;
    std::string key;
    for (const char* step : path) {
        if (!at->is_object() || !at->contains(step)) return {};
        at = &(*at)[step];
        key = step;
    }
    return figureValueText(key, *at);
}
// j[key] by reference (a pointer into it outlives the call), or an empty object.
const json& at(const json& j, const char* key) {
    static const json none = json::object();
    return j.is_object() && j.contains(key) ? j[key] : none;
}
double number(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0; }

// The row of an array of objects with the largest `key`, or null.
const json* largest(const json& rows, const char* key) {
    const json* best = nullptr;
    if (!rows.is_array()) return nullptr;
    for (const json& row : rows)
        if (row.is_object() && row.contains(key) && row[key].is_number() && (!best || number(row, key) > number(*best, key)))
            best = &row;
    return best;
}

std::string modelAnswer(const json& f) {
    const json& model = at(f, "model");
    std::string ops, mostCommon;
    int64_t most = 0;
    if (model.contains("op_histogram"))
        for (const auto& [op, n] : model["op_histogram"].items())
            if (n.get<int64_t>() > most) most = n.get<int64_t>(), mostCommon = op;
    std::string a = "ONNX records " + text(model, {"nodes", "total"}) + " nodes and " + text(model, {"parameters", "count"}) +
                    " parameters (" + text(model, {"parameters", "bytes"}) + " of weights)";
    if (!mostCommon.empty()) a += "; the most common op is " + mostCommon + " (" + std::to_string(most) + " nodes)";
    return a + ".";
}

std::string eagerAnswer(const json& f) {
    if (!f.contains("compiled") || !f.contains("eager")) return {};
    return "Compiled, it runs in " + text(f, {"compiled", "median_ms"}) + " against " + text(f, {"eager", "median_ms"}) +
           " as exported (" + text(f, {"speedup"}) + "): " + text(f, {"eager", "nodes"}) + " nodes became " +
           text(f, {"compiled", "nodes"}) + ", moving " + text(f, {"compiled", "bytes_moved"}) + " a run instead of " +
           text(f, {"eager", "bytes_moved"}) + ".";
}

std::string passesAnswer(const json& f) {
    const json* best = nullptr;
    for (const json& p : at(f, "passes"))
        if (!best || number(p, "nodes_before") - number(p, "nodes_after") > number(*best, "nodes_before") - number(*best, "nodes_after"))
            best = &p;
    if (!best) return {};
    const double removed = number(*best, "nodes_before") - number(*best, "nodes_after");
    return best->value("name", std::string("?")) + " removed the most: " + figureValueText("nodes", removed) +
           " nodes. All " + figureValueText("passes", double(at(f, "passes").size())) + " passes took the graph from " +
           text(f, {"nodes_before"}) + " to " + text(f, {"nodes_after"}) + " nodes in " + text(f, {"total_ms"}) + ".";
}

std::string fusionAnswer(const json& f) {
    const json* best = largest(at(f, "by_fused_op"), "bytes_saved");
    if (!best) return "No fusion applied on this model.";
    return (*best).value("fused_op", std::string("?")) + " saves the most: " + figureValueText("groups", (*best)["groups"]) +
           " group(s) replacing " + figureValueText("nodes", (*best)["nodes_replaced"]) + " nodes, " +
           figureValueText("bytes_saved", (*best)["bytes_saved"]) + " less memory traffic and " +
           figureValueText("launches", (*best)["launches_saved"]) + " fewer launches a run.";
}

std::string loweringAnswer(const json& f) {
    const json* top = largest(at(f, "slowest_nodes"), "share_of_time");
    if (!top) return {};
    return (*top).value("node", std::string("?")) + " (kernel " + (*top).value("cpu_kernel", std::string("?")) + ") takes " +
           figureValueText("share_of_time", (*top)["share_of_time"]) + " of the run; it is " +
           (*top).value("bound", std::string("?")) + "-bound at " +
           figureValueText("gflops_per_second", (*top)["gflops_per_second"]) + ", " +
           figureValueText("of_attainable", (*top)["of_attainable"]) + " of what the roofline allows it.";
}

std::string memoryAnswer(const json& f) {
    if (!f.contains("arena_bytes")) return {};
    const double naive = number(f, "naive_bytes"), arena = number(f, "arena_bytes");
    std::string a = "The plan needs " + text(f, {"arena_bytes"}) + " for " + text(f, {"intermediates"}) +
                    " intermediate tensors, against " + text(f, {"naive_bytes"}) + " with a buffer each";
    if (arena > 0) a += " (" + figureValueText("speedup", naive / arena) + " less)";
    return a + "; no plan can use less than " + text(f, {"lower_bound_bytes"}) + ", the most alive at one step.";
}

std::string breaksAnswer(const json& f) {
    const json& gb = at(f, "graph_breaks");
    const size_t breaks = at(gb, "breaks").is_array() ? at(gb, "breaks").size() : 0;
    if (breaks == 0)
        return "No: all " + text(gb, {"device_nodes"}) + " nodes run on the device, nothing crosses to the host.";
    return "Yes: " + figureValueText("breaks", double(breaks)) + " break(s); " + text(gb, {"host_nodes"}) +
           " node(s) run on the CPU and " + text(f, {"bytes_crossing_per_run"}) + " crosses between them each run.";
}

std::string quantizationAnswer(const json& f) {
    const json* fastest = nullptr;
    for (const json& p : at(f, "precisions"))
        if (p.contains("median_ms") && (!fastest || number(p, "median_ms") < number(*fastest, "median_ms"))) fastest = &p;
    if (!fastest) return {};
    std::string a = (*fastest).value("precision", std::string("?")) + " is fastest here, at " +
                    figureValueText("median_ms", (*fastest)["median_ms"]);
    if (fastest->contains("vs_float32")) a += " (" + figureValueText("vs_float32", (*fastest)["vs_float32"]) + " float32's time)";
    const json& layers = at(f, "int8_most_sensitive_layers");
    if (layers.is_array() && !layers.empty() && layers.front().is_object())
        a += "; in INT8 the most sensitive layer is " + layers.front().value("node", std::string("?")) +
             " (1 - cosine " + figureValueText("one_minus_cosine", layers.front()["one_minus_cosine"]) + ")";
    return a + ".";
}

std::string parallelAnswer(const json& f) { return f.value("rule_of_thumb", std::string()); }

std::string benchmarkingAnswer(const json& f) {
    const json& timed = at(f, "with_warmup");
    const json& first = at(f, "warmup_runs_ms");
    if (timed.empty() || !first.is_array() || first.empty()) return {};
    const double p50 = number(timed, "p50_ms");
    std::string a = "The first run took " + figureValueText("ms", first.front());
    if (p50 > 0) a += ", " + figureValueText("speedup", first.front().get<double>() / p50) + " the median";
    return a + " of " + text(timed, {"p50_ms"}) + "; the timed runs spread from " + text(timed, {"min_ms"}) + " to " +
           text(timed, {"max_ms"}) + " (p90 " + text(timed, {"p90_ms"}) + ").";
}

struct Prediction {
    const char* question;
    std::string (*answer)(const json&);
};

}  // namespace

void addPrediction(WalkthroughChapter& c) {
    static const Prediction predictions[] = {
        {"How many nodes and parameters will ONNX record for this model, and which op will be the most common?", modelAnswer},
        {"How much faster will the compiled graph run than the graph as exported, and where will the time go?", eagerAnswer},
        {"Which pass will remove the most nodes?", passesAnswer},
        {"Which fusion will save the most memory traffic on this model?", fusionAnswer},
        {"Which node will dominate the run time, and will it be limited by arithmetic or by memory?", loweringAnswer},
        {"How much memory will the intermediate tensors need at once, compared with a buffer each?", memoryAnswer},
        {"Will any part of this model have to leave the GPU?", breaksAnswer},
        {"Which precision will run fastest, and which layer will lose the most accuracy in INT8?", quantizationAnswer},
        {"Will splitting this model over several devices make it faster?", parallelAnswer},
        {"How much slower will the first run be than the median, and how far apart will the timed runs be?",
         benchmarkingAnswer},
    };
    if (c.id < 1 || c.id > int(std::size(predictions))) return;
    const Prediction& p = predictions[c.id - 1];
    c.question = p.question;
    if (c.notApplicable.empty()) c.answer = p.answer(c.figures);
    if (c.answer.empty()) c.question.clear();  // a question without its answer is a riddle
}

}  // namespace fsc
