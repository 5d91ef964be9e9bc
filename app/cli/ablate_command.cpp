#include "app/cli/ablate_command.h"

#include <fstream>
#include <iostream>

#include "app/analysis/ablation.h"
#include "app/analysis/ablation_report.h"
#include "core/comma_list.h"
#include "core/onnx_import.h"

namespace fsc::cli {
namespace {

struct AblateArgs {
    std::string model, pipeline, passes = "all", backend = "cpu", csvPath, htmlPath;
    bool json = false, cumulative = false, tf32 = false;
    int threads = 0, rounds = 5, runsPerRound = 3, warmup = 2;
    uint64_t seed = 0;
    InputChoice input;
};

void addOptions(CLI::App& app, AblateArgs& a) {
    app.add_option("MODEL", a.model, "the ONNX model");
    const std::string what = "what to leave out";
    app.add_option("--pipeline", a.pipeline, "named pipeline (default O2)")->type_name("O0|O1|O2|O3")->group(what);
    app.add_option("--passes", a.passes, "leave out only these passes, one at a time (default all)")
        ->type_name("a,b|all")
        ->group(what);
    app.add_flag("--cumulative", a.cumulative, "also time the pipeline up to each of its steps")->group(what);
    const std::string timing = "timing";
    app.add_option("--rounds", a.rounds, "alternating rounds (default 5; 3 or more for a noise verdict)")
        ->type_name("N")
        ->check(integerIn(1, 1000, "a number >= 1"))
        ->group(timing);
    app.add_option("--runs-per-round", a.runsPerRound, "runs of each variant in a round, their median kept (default 3)")
        ->type_name("N")
        ->check(integerIn(1, 1000, "a number >= 1"))
        ->group(timing);
    app.add_option("--warmup", a.warmup, "untimed runs of each variant first (default 2)")
        ->type_name("N")
        ->check(integerIn(0, 1000, "a number >= 0"))
        ->group(timing);
    addBackendOption(app, a.backend, timing, "default cpu (cuda: channels-last lays out half convolutions, float32 ones stay NCHW)");
    addThreadsOption(app, a.threads, timing);
    addTf32Option(app, a.tf32, timing);
    const std::string output = "output";
    app.add_flag("--json", a.json, "print the figures as JSON (schema fusescope.ablation/1)")->group(output);
    app.add_option("--csv", a.csvPath, "one row per variant")->type_name("FILE.csv")->group(output);
    app.add_option("--html", a.htmlPath, "a self-contained HTML page of the tables")->type_name("FILE.html")->group(output);
    const std::string inputs = "inputs (otherwise random from --seed)";
    addInputOptions(app, a.input, inputs);
    addSeedOption(app, a.seed, inputs);
    app.footer("Each pass is left out by name (every step of it, as --disable does) and the variant is\n"
               "timed against the full pipeline in alternating rounds. A variant whose graph is the\n"
               "full pipeline's is not timed; passes that apply less without it are the ones it enables.");
}

Status writeText(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) return Status(ErrorCode::Io, path + ": cannot write the file");
    return Status::ok();
}

int run(const CLI::App& app, const AblateArgs& args) {
    if (args.model.empty()) return usageError(app, "ablate needs a MODEL");
    if (Status s = checkCudaOnlyFlags(args.backend, args.tf32); !s) return usageError(app, s.message());
    auto target = chooseTarget(args.model, {.backend = args.backend, .threads = args.threads, .tf32 = args.tf32});
    if (!target) return fail(target.status().message());
    PipelineChoice choice;
    choice.pipeline = args.pipeline;
    auto spec = choice.spec(*target);
    if (!spec) return usageError(app, spec.status().message());
    auto model = importModel(args.model);
    if (!model) return fail(model.status());

    AblationOptions options;
    if (args.passes != "all") options.passes = splitCommaList(args.passes);
    options.cumulative = args.cumulative;
    options.rounds = args.rounds;
    options.runsPerRound = args.runsPerRound;
    options.warmup = args.warmup;
    options.feeds = feedOptions(args.input, args.seed);
    std::string lastLine;
    auto report = ablatePasses(*model, *spec, choice.name(), options, nullptr, [&lastLine](const AblationProgress& p) {
        if (p.what == lastLine) return;  // a new step, not every run
        lastLine = p.what;
        std::cerr << "ablate: " << p.what << "\n";
    });
    if (!report) {
        if (report.status().code() == ErrorCode::InvalidArgument) return usageError(app, report.status().message());
        return fail(report.status());
    }
    if (!args.csvPath.empty())
        if (Status s = writeText(args.csvPath, ablationCsv(*report)); !s) return fail(s);
    if (!args.htmlPath.empty())
        if (Status s = writeText(args.htmlPath, ablationHtml(*report)); !s) return fail(s);
    if (args.json)
        std::cout << ablationJson(*report).dump(2) << "\n";
    else
        std::cout << ablationText(*report);
    return kExitOk;
}

}  // namespace

Command ablateCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "ablate", "what each pass bought: every pass left out in turn, timed against the full pipeline");
    auto args = std::make_shared<AblateArgs>();
    addOptions(*app, *args);
    return {app, [app, args] { return run(*app, *args); }};
}

}  // namespace fsc::cli
