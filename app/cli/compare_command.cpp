#include "app/cli/compare_command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/analysis/variant_compare.h"
#include "core/comma_list.h"
#include "core/onnx_import.h"
#include "core/parse_int.h"
#include "core/units.h"
#include "profiler/run_store.h"

namespace fsc::cli {
namespace {

struct CompareArgs {
    std::string model, variants, baseline, pipeline, sort = "time", csvPath;
    std::vector<std::string> runs;  // --runs RUN.fsdb A,B,C
    int iterations = 10, warmup = 2, threads = 0, top = 25, rounds = 3;
    bool json = false;
    uint64_t seed = 0;
    InputChoice input;
};

void addOptions(CLI::App& app, CompareArgs& a) {
    app.add_option("MODEL", a.model, "the ONNX model");
    const std::string what = "what to compare";
    app.add_option("--variants", a.variants,
                   "two or more BACKEND/PRECISION[@PIPELINE]: cpu or cuda, fp32, fp16, bf16 or int8, "
                   "O0-O3 (default --pipeline's)")
        ->type_name("a,b,c")
        ->group(what);
    app.add_option("--baseline", a.baseline, "the variant errors are measured against, or with --runs a run id (default the first)")
        ->type_name("VARIANT|ID")
        ->group(what);
    app.add_option("--runs", a.runs, "two or more runs of a run store instead (no MODEL): their times per ONNX node")
        ->type_name("RUN.fsdb A,B,C")
        ->expected(2)
        ->group(what);
    app.add_option("--pipeline", a.pipeline, "named pipeline every variant compiles with (default O2)")
        ->type_name("O0|O1|O2|O3")
        ->group(what);
    addIterationOptions(app, a.iterations, a.warmup, what, "profiled iterations of each variant (default 10)",
                        "untimed runs first (default 2)");
    app.add_option("--rounds", a.rounds,
                   "alternating rounds that time the variants against each other (default 3; 0: each profile's median)")
        ->type_name("N")
        ->check(integerIn(0, 1000, "a number >= 0"))
        ->group(what);
    addThreadsOption(app, a.threads, what);
    const std::string output = "output";
    app.add_option("--sort", a.sort, "rows by the baseline's time (default), the largest error, or graph order")
        ->type_name("time|error|order")
        ->check(oneOf({"time", "error", "order"}, "time, error or order"))
        ->group(output);
    app.add_option("--top", a.top, "rows printed (default 25; JSON and CSV have every row)")
        ->type_name("N")
        ->check(integerIn(1, INT32_MAX, "a number >= 1"))
        ->group(output);
    app.add_flag("--json", a.json, "print every row as JSON (schema fusescope.compare/1)")->group(output);
    app.add_option("--csv", a.csvPath, "one row per ONNX node, two columns per variant")->type_name("FILE.csv")->group(output);
    const std::string inputs = "inputs (otherwise random from --seed)";
    addInputOptions(app, a.input, inputs);
    addSeedOption(app, a.seed, inputs);
    app.footer("A fused group's time is shown on each ONNX node it holds; its error is that of the group's\n"
               "output against the baseline compiled with the same passes (as bisect measures it).\n"
               "--runs RUN.fsdb A,B compares stored runs instead, by the ONNX nodes their nodes were made\n"
               "from: times only (a run keeps no outputs), each run's own median (no rounds).");
}

double largestError(const CompareRow& row) {
    double worst = -1;
    for (const NodeCell& c : row.cells) worst = std::max(worst, c.error);
    return worst;
}

int printComparison(const CompareArgs& args, const VariantComparison& comparison);

// --runs RUN.fsdb A,B,C: the runs read back, compared by provenance (no model, no errors).
int compareStored(const CLI::App& app, const CompareArgs& args) {
    if (!args.model.empty() || !args.variants.empty())
        return usageError(app, "--runs compares stored runs: give it no MODEL and no --variants");
    std::vector<int64_t> ids;
    for (const std::string& text : splitCommaList(args.runs[1])) {
        int64_t id = 0;
        if (!parseInt(text, id)) return usageError(app, "--runs needs RUN.fsdb A,B,... (run ids), not '" + text + "'");
        ids.push_back(id);
    }
    if (ids.size() < 2) return usageError(app, "--runs needs two or more run ids (RUN.fsdb A,B,...)");
    size_t baseline = 0;  // --baseline ID (or "run ID")
    if (!args.baseline.empty()) {
        const auto named = [&args](int64_t id) {
            return args.baseline == std::to_string(id) || args.baseline == "run " + std::to_string(id);
        };
        const auto at = std::find_if(ids.begin(), ids.end(), named);
        if (at == ids.end()) return usageError(app, "--baseline " + args.baseline + " is not one of --runs");
        baseline = size_t(at - ids.begin());
    }
    auto store = RunStore::openExisting(args.runs[0]);
    if (!store) return fail(store.status().message());
    std::vector<StoredRun> runs;
    for (int64_t id : ids) {
        auto trace = (*store)->loadTrace(id);
        if (!trace) return fail(trace.status().message());
        runs.push_back({"run " + std::to_string(id), std::move(*trace)});
    }
    return printComparison(args, compareStoredRuns(runs, baseline));
}

int run(const CLI::App& app, const CompareArgs& args) {
    if (!args.runs.empty()) return compareStored(app, args);
    if (args.model.empty()) return usageError(app, "compare needs a MODEL");
    const std::vector<std::string> labels = splitCommaList(args.variants);
    if (labels.size() < 2) return usageError(app, "compare needs --variants with two or more of cpu/fp32, cuda/fp16, ...");
    std::vector<CompareVariant> variants;
    for (const std::string& label : labels) {
        // "cuda/fp16@O1": the variant's own pipeline after the '@'.
        const size_t at = label.find('@');
        auto choice = parseSideChoice(label.substr(0, at));
        if (!choice) return usageError(app, choice.status().message());
        auto target = chooseTarget(args.model, {.backend = choice->backend, .threads = args.threads});
        if (!target) return fail(target.status());
        PipelineChoice pipeline;
        pipeline.pipeline = at == std::string::npos ? args.pipeline : label.substr(at + 1);
        if (at != std::string::npos && pipeline.pipeline.empty())
            return usageError(app, "'" + label + "': a pipeline follows the '@' (O0, O1, O2 or O3)");
        auto spec = pipeline.spec(*target);
        if (!spec) return usageError(app, spec.status().message());
        spec->precision = choice->precision;
        variants.push_back({label, *spec});
    }
    size_t baseline = 0;
    if (!args.baseline.empty()) {
        const auto at = std::find(labels.begin(), labels.end(), args.baseline);
        if (at == labels.end()) return usageError(app, "--baseline " + args.baseline + " is not one of --variants");
        baseline = size_t(at - labels.begin());
    }
    auto model = importModel(args.model);
    if (!model) return fail(model.status());
    CompareOptions options;
    options.iterations = args.iterations;
    options.warmup = args.warmup;
    options.rounds = args.rounds;
    options.feeds = feedOptions(args.input, args.seed);
    auto result = compareVariants(*model, variants, baseline, options, nullptr,
                                  [](const std::string& what) { std::cerr << "compare: " << what << "\n"; });
    if (!result) return fail(result.status());
    return printComparison(args, *result);
}

int printComparison(const CompareArgs& args, const VariantComparison& comparison) {
    const VariantComparison* result = &comparison;
    const size_t baseline = comparison.baseline;
    const std::string& baselineLabel = comparison.variants[baseline].label;
    std::vector<const CompareRow*> rows;
    for (const CompareRow& row : result->rows) rows.push_back(&row);
    if (args.sort == "time")
        std::stable_sort(rows.begin(), rows.end(), [baseline](const CompareRow* a, const CompareRow* b) {
            return a->cells[baseline].ms > b->cells[baseline].ms;
        });
    else if (args.sort == "error")
        std::stable_sort(rows.begin(), rows.end(),
                         [](const CompareRow* a, const CompareRow* b) { return largestError(*a) > largestError(*b); });

    if (!args.csvPath.empty()) {
        std::ofstream csv(args.csvPath, std::ios::binary);
        csv << "node,op";
        for (const VariantSummary& v : result->variants) csv << "," << v.label << " ms," << v.label << " error," << v.label << " group";
        csv << "\n";
        for (const CompareRow* row : rows) {
            csv << row->node << "," << row->op;
            for (const NodeCell& c : row->cells)
                csv << "," << (c.ran ? std::to_string(c.ms) : "") << "," << (c.error >= 0 ? std::to_string(c.error) : "") << ","
                    << c.group;
            csv << "\n";
        }
        csv.close();
        if (!csv) return fail(args.csvPath + ": cannot write the file");
    }
    if (args.json) {
        nlohmann::json j;
        j["schema"] = "fusescope.compare/1";
        j["model"] = result->model;
        j["baseline"] = baselineLabel;
        j["rounds"] = result->rounds;
        j["variants"] = nlohmann::json::array();
        for (const VariantSummary& v : result->variants)
            j["variants"].push_back({{"label", v.label}, {"median_ms", v.medianMs}, {"p90_ms", v.p90Ms},
                                     {"vs_baseline", v.vsBaseline}, {"vs_baseline_range", {v.lowestRatio, v.highestRatio}},
                                     {"nodes", v.nodes}, {"kernels", v.kernels},
                                     {"output_error", v.outputError >= 0 ? nlohmann::json(v.outputError) : nlohmann::json()}, {"values_compared", v.compared},
                                     {"timing_warning", v.timingWarning}});
        j["rows"] = nlohmann::json::array();
        for (const CompareRow* row : rows) {
            nlohmann::json cells = nlohmann::json::array();
            for (const NodeCell& c : row->cells)
                cells.push_back({{"ran", c.ran}, {"group", c.group}, {"group_size", c.groupSize}, {"ms", c.ms},
                                 {"error", c.error >= 0 ? nlohmann::json(c.error) : nlohmann::json()}});
            j["rows"].push_back({{"node", row->node}, {"op", row->op}, {"variants", cells}});
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "model: " << result->model << "  baseline: " << baselineLabel;
    if (result->rounds > 0)
        std::cout << "  (medians over " << result->rounds << " alternating rounds; x: time over the baseline's, round by round)";
    std::cout << "\n\n";
    for (const VariantSummary& v : result->variants) {
        const std::string against = v.label == baselineLabel ? std::string("the baseline")
                                    : v.outputError < 0 ? std::string("times only (a stored run keeps no outputs)")
                                                        : "output error " + compareErrorText(v.outputError) + " (" + std::to_string(v.compared) +
                                              " values compared)";
        std::printf("  %-12s median %10s  %-24s %5zu nodes  %5zu kernels  %s\n", v.label.c_str(),
                    durationText(v.medianMs).c_str(), vsBaselineText(v, result->rounds).c_str(), v.nodes, v.kernels,
                    against.c_str());
        if (!v.timingWarning.empty()) std::printf("      warning: %s\n", v.timingWarning.c_str());
    }
    std::cout << "\nper ONNX node (time of the group holding it, its error against " << baselineLabel
              << "; * shared by the group's nodes):\n";
    size_t width = 4;
    for (const CompareRow* row : rows) width = std::min<size_t>(48, std::max(width, row->node.size()));
    std::printf("  %-*s %-18s", int(width), "node", "op");
    for (const VariantSummary& v : result->variants) std::printf(" %22s", v.label.c_str());
    std::printf("\n");
    for (size_t i = 0; i < rows.size() && i < size_t(args.top); ++i) {
        const CompareRow& row = *rows[i];
        std::string name = row.node.size() > width ? "..." + row.node.substr(row.node.size() - width + 3) : row.node;
        std::printf("  %-*s %-18s", int(width), name.c_str(), row.op.c_str());
        for (const NodeCell& c : row.cells) {
            const std::string cell = c.ran ? durationText(c.ms) + (c.groupSize > 1 ? "*" : " ") + " " + compareErrorText(c.error)
                                           : std::string("folded");
            std::printf(" %22s", cell.c_str());
        }
        std::printf("\n");
    }
    if (rows.size() > size_t(args.top)) std::printf("  ... %zu more rows (--top, --json, --csv)\n", rows.size() - size_t(args.top));
    return kExitOk;
}

}  // namespace

Command compareCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "compare", "compiled variants side by side, per ONNX node: time and error against a baseline");
    auto args = std::make_shared<CompareArgs>();
    addOptions(*app, *args);
    return {app, [app, args] { return run(*app, *args); }};
}

}  // namespace fsc::cli
