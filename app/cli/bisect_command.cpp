#include "app/cli/bisect_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "app/analysis/numeric_bisect.h"
#include "core/onnx_import.h"

namespace fsc::cli {
namespace {

struct BisectArgs {
    std::string model, reference = "cpu/fp32", candidate, pipeline;
    double threshold = 0, jump = 10;
    bool json = false, noInside = false;
    int threads = 0;
    uint64_t seed = 0;
    InputChoice input;
};

void addOptions(CLI::App& app, BisectArgs& a) {
    app.add_option("MODEL", a.model, "the ONNX model");
    const std::string sides = "what to compare";
    app.add_option("--reference", a.reference, "the side taken as right (default cpu/fp32)")
        ->type_name("BACKEND/PRECISION")
        ->group(sides);
    app.add_option("--candidate", a.candidate, "the side under examination: cpu or cuda, fp32, fp16, bf16 or int8")
        ->type_name("BACKEND/PRECISION")
        ->group(sides);
    app.add_option("--pipeline", a.pipeline, "named pipeline both sides compile with (default O2)")
        ->type_name("O0|O1|O2|O3")
        ->group(sides);
    addThreadsOption(app, a.threads, sides);
    const std::string rule = "what counts as a jump";
    app.add_option("--threshold", a.threshold,
                   "relative error a group's output must reach (default by the candidate's\n"
                   "precision: fp32 1e-3, fp16 1e-2, bf16 5e-2, int8 1e-1)")
        ->type_name("X")
        ->check(CLI::PositiveNumber)
        ->group(rule);
    app.add_option("--jump", a.jump, "and how many times the error of what feeds it (default 10)")
        ->type_name("X")
        ->check(CLI::Range(1.0, 1e12))
        ->group(rule);
    app.add_flag("--no-inside", a.noInside, "do not rerun the first jump's group unfused")->group(rule);
    const std::string output = "output";
    app.add_flag("--json", a.json, "print the figures as JSON (schema fusescope.bisect/1)")->group(output);
    const std::string inputs = "inputs (otherwise random from --seed)";
    addInputOptions(app, a.input, inputs);
    addSeedOption(app, a.seed, inputs);
    app.footer("Both sides run on the same inputs; every value both compiled graphs make (the outputs of\n"
               "fused groups) is read as it is made, without becoming a graph output, so the fusions\n"
               "stay as they are. Errors are sum |reference - candidate| / sum |reference| per value.");
}

std::string errorText(double error) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2e", error);
    return text;
}

std::string opsText(const GroupError& g) {
    std::map<std::string, int> count;
    for (const std::string& op : g.onnxOps) ++count[op];
    std::string text;
    for (const auto& [op, n] : count) text += (text.empty() ? "" : ", ") + op + (n > 1 ? " x" + std::to_string(n) : "");
    return text;
}

nlohmann::json groupJson(const GroupError& g) {
    return {{"value", g.value}, {"node", g.node}, {"op", g.op}, {"onnx_nodes", g.onnxNodes}, {"onnx_ops", g.onnxOps},
            {"error", g.error}, {"max_abs", g.maxAbs}, {"input_error", g.inputError}, {"jump", g.jump},
            {"first_jump", g.firstJump}};
}

Result<BisectSide> sideOf(const std::string& text, const std::string& pipelineName, int threads, const std::string& model) {
    auto choice = parseSideChoice(text);
    if (!choice) return choice.status();
    auto target = chooseTarget(model, {.backend = choice->backend, .threads = threads});
    if (!target) return target.status();
    PipelineChoice pipeline;
    pipeline.pipeline = pipelineName;
    auto spec = pipeline.spec(*target);
    if (!spec) return spec.status();
    spec->precision = choice->precision;
    return BisectSide{text, *spec, std::nullopt};
}

int run(const CLI::App& app, const BisectArgs& args) {
    if (args.model.empty()) return usageError(app, "bisect needs a MODEL");
    if (args.candidate.empty()) return usageError(app, "bisect needs --candidate BACKEND/PRECISION (cuda/fp16, cpu/int8, ...)");
    for (const std::string& side : {args.reference, args.candidate})
        if (auto parsed = parseSideChoice(side); !parsed) return usageError(app, parsed.status().message());
    auto reference = sideOf(args.reference, args.pipeline, args.threads, args.model);
    if (!reference) return reference.status().code() == ErrorCode::InvalidArgument ? usageError(app, reference.status().message())
                                                                                    : fail(reference.status());
    auto candidate = sideOf(args.candidate, args.pipeline, args.threads, args.model);
    if (!candidate) return candidate.status().code() == ErrorCode::InvalidArgument ? usageError(app, candidate.status().message())
                                                                                    : fail(candidate.status());
    auto model = importModel(args.model);
    if (!model) return fail(model.status());
    BisectOptions options;
    options.threshold = args.threshold;
    options.jumpFactor = args.jump;
    options.lookInside = !args.noInside;
    options.feeds = feedOptions(args.input, args.seed);
    auto report = bisectNumerics(*model, *reference, *candidate, options, nullptr,
                                 [](const std::string& what) { std::cerr << "bisect: " << what << "\n"; });
    if (!report) return fail(report.status());
    if (args.json) {
        nlohmann::json j;
        j["schema"] = "fusescope.bisect/1";
        j["model"] = report->model;
        j["reference"] = report->reference;
        j["candidate"] = report->candidate;
        j["threshold"] = report->threshold;
        j["jump_factor"] = args.jump;
        j["candidate_values"] = report->candidateValues;
        j["compared"] = report->groups.size();
        j["output_error"] = report->outputError;
        j["groups"] = nlohmann::json::array();
        for (const GroupError& g : report->groups) j["groups"].push_back(groupJson(g));
        j["first_jumps"] = nlohmann::json::array();
        for (size_t i : report->firstJumps) j["first_jumps"].push_back(groupJson(report->groups[i]));
        j["inside"] = {{"group", report->insideGroup}, {"ops", nlohmann::json::array()}};
        for (const GroupError& g : report->inside) j["inside"]["ops"].push_back(groupJson(g));
        if (!report->insideNote.empty()) j["inside"]["note"] = report->insideNote;
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "model: " << report->model << "  reference: " << report->reference << "  candidate: " << report->candidate
              << "\ncompared " << report->groups.size() << " of the candidate's " << report->candidateValues
              << " values (those both graphs make, same shape); output error " << errorText(report->outputError)
              << "\na jump: error >= " << errorText(report->threshold) << " and >= " << args.jump
              << "x the error of what feeds it\n";
    if (report->firstJumps.empty()) {
        std::cout << "\nno group's error jumps: the candidate follows the reference within the threshold\n";
    } else {
        std::cout << "\nfirst jumps (no jump upstream of them):\n";
        for (size_t i : report->firstJumps) {
            const GroupError& g = report->groups[i];
            std::cout << "  " << g.node << " (" << g.op << ")  error " << errorText(g.inputError) << " -> "
                      << errorText(g.error) << "  value " << g.value << "\n      ONNX ops inside: " << opsText(g) << "\n";
        }
    }
    std::vector<const GroupError*> largest;
    for (const GroupError& g : report->groups) largest.push_back(&g);
    std::stable_sort(largest.begin(), largest.end(), [](const GroupError* a, const GroupError* b) { return a->error > b->error; });
    if (largest.size() > 5) largest.resize(5);
    if (!largest.empty()) {
        std::cout << "\nlargest errors:\n";
        for (const GroupError* g : largest)
            std::cout << "  " << errorText(g->error) << "  " << g->node << " (" << g->op << ")  fed " << errorText(g->inputError)
                      << "\n";
    }
    if (!report->inside.empty()) {
        std::cout << "\ninside " << report->insideGroup << ", unfused on both sides:\n";
        for (const GroupError& g : report->inside)
            std::cout << "  " << (g.firstJump ? "=> " : "   ") << g.node << " (" << g.op << ")  error "
                      << errorText(g.inputError) << " -> " << errorText(g.error) << "\n";
    } else if (!report->insideNote.empty() && !report->firstJumps.empty()) {
        std::cout << "\ninside " << report->insideGroup << ": " << report->insideNote << "\n";
    }
    return kExitOk;
}

}  // namespace

Command bisectCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "bisect", "where a candidate's numbers leave the reference's: the first fused group that jumps");
    auto args = std::make_shared<BisectArgs>();
    addOptions(*app, *args);
    return {app, [app, args] { return run(*app, *args); }};
}

}  // namespace fsc::cli
