#include "app/cli/walkthrough_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/walkthrough/walkthrough.h"
#include "compiler/runtime/feeds.h"
#include "compiler/backends/cuda/device.h"
#include "core/comma_list.h"
#include "core/parse_int.h"

namespace fsc::cli {
namespace {

struct WalkthroughArgs {
    std::string model, output, chapters;
    std::string backend = "cpu";
    bool json = false;
    int threads = 0;  // ThreadPool::kAutomatic
    int iterations = 0, warmup = -1;  // 0, -1: each timed chapter's own
    std::string calibrationDir;
    int calibrationSamples = 0;  // 0: chapter 8's own (4)
    PipelineChoice pipeline;
    InputChoice input;
};

int walkthrough(const CLI::App& app, const WalkthroughArgs& a) {
    if (a.model.empty()) return usageError(app, "walkthrough needs a MODEL");
    if (a.output.empty() && !a.json) return usageError(app, "say where the walkthrough goes: -o FILE.html, --json, or both");
    if (std::string why = a.pipeline.conflict(); !why.empty()) return usageError(app, why);
    std::vector<int> ids;
    for (const std::string& item : splitCommaList(a.chapters.empty() ? std::string("1,2,3,4,5,6,7,8,9,10") : a.chapters)) {
        int64_t id = 0;
        if (!parseInt(item, id)) return usageError(app, "--chapters needs numbers such as 1,3 (got '" + item + "')");
        const auto& contents = walkthroughContents();
        auto entry = std::find_if(contents.begin(), contents.end(), [id](const ChapterEntry& e) { return e.id == id; });
        if (entry == contents.end()) return usageError(app, "--chapters: there is no chapter " + item + " (1 to 10)");
        ids.push_back(int(id));
    }
    if (!a.calibrationDir.empty() && !std::filesystem::is_directory(a.calibrationDir))
        return fail(a.calibrationDir + ": not a folder of calibration inputs (--calibration)");
    // The device is opened before the model is read, so a machine without a GPU hears it at once.
    auto target = chooseTarget(a.model, {.backend = a.backend, .threads = a.threads});
    if (!target) return fail(target.status().message());
    auto spec = a.pipeline.spec(*target);
    if (!spec) return usageError(app, spec.status().message());

    Session session;
    std::cerr << "walkthrough: importing " << a.model << "\n";
    if (Status s = session.open(a.model); !s) return fail(s.message());
    std::cerr << "walkthrough: compiling with " << a.pipeline.name() << "\n";
    if (Status s = session.compile(*spec); !s) return fail(s.message());
    std::vector<WalkthroughChapter> chapters;
    if (Status s = checkDimNames(*session.model()->graph, session.model()->graph->inputs, a.input.dims); !s)
        return fail(a.model + ": " + s.message());
    const WalkthroughInput input{.session = session,
                                 .pipelineName = a.pipeline.name(),
                                 .progress = [](const std::string& what) { std::cerr << "walkthrough:   " << what << "\n"; },
                                 .inputs = a.input,
                                 .iterations = a.iterations,
                                 .warmup = a.warmup,
                                 .calibrationDir = a.calibrationDir,
                                 .calibrationSamples = a.calibrationSamples};
    for (size_t i = 0; i < ids.size(); ++i) {
        std::cerr << "walkthrough: chapter " << ids[i] << " (" << i + 1 << " of " << ids.size() << ")\n";
        auto chapter = walkthroughChapter(ids[i], input);
        if (!chapter) return fail(a.model + ": chapter " + std::to_string(ids[i]) + ": " + chapter.status().message());
        if (!chapter->timingWarning.empty())
            std::cerr << "walkthrough:   warning: chapter " << ids[i] << ": " << chapter->timingWarning << "\n";
        chapters.push_back(std::move(*chapter));
    }
    if (!a.output.empty()) {
        std::ofstream out(a.output, std::ios::binary);
        if (!out || !(out << walkthroughHtml(chapters, a.model))) return fail(a.output + ": cannot write the walkthrough");
        std::cerr << "walkthrough: wrote " << a.output << "\n";
    }
    if (a.json) std::cout << walkthroughJson(chapters, a.model).dump(2) << "\n";
    return kExitOk;
}

}  // namespace

Command walkthroughCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "walkthrough",
                           "the model-to-GPU pipeline explained on the model, with its own figures (HTML, JSON)");
    auto a = std::make_shared<WalkthroughArgs>();
    app->add_option("MODEL", a->model, "the ONNX model");
    const std::string output = "output";
    app->add_option("-o,--output", a->output, "write the chapters as one self-contained HTML page")
        ->type_name("FILE.html")
        ->group(output);
    app->add_flag("--json", a->json, "print the figures as JSON (schema fusescope.walkthrough/1)")->group(output);
    app->add_option("--chapters", a->chapters, "only these chapters (default: all ten)")
        ->type_name("1,3")
        ->group(output);
    addPipelineOptions(*app, a->pipeline, "compilation");
    addBackendOption(*app, a->backend, "execution",
                     "where the timed chapters run: cpu (default) or cuda (the first GPU; accuracy is always\n"
                     "measured against the CPU's float32 run)");
    addThreadsOption(*app, a->threads, "execution");
    addIterationOptions(*app, a->iterations, a->warmup, "execution",
                        "timed runs of the compiled model, measured once for chapters 2, 8 and 10,\n"
                        "and of chapter 8's other precisions (default: 30 and 5)",
                        "warm-up runs before them (default: 2 and 1)");
    app->add_option("--calibration", a->calibrationDir,
                    "chapter 8's inputs, as compile --quantize --calibration reads them (a quarter\n"
                    "held back to measure accuracy; default: generated samples)")
        ->type_name("DIR")
        ->group("quantization (chapter 8)");
    app->add_option("--calibration-samples", a->calibrationSamples, "how many to generate without --calibration (default 4)")
        ->type_name("N")
        ->check(integerIn(1, 100000, "a number >= 1"))
        ->group("quantization (chapter 8)");
    addInputOptions(*app, a->input, "inputs (every chapter runs on them; default: generated, sized as run sizes them)");
    return {app, [app, a] { return walkthrough(*app, *a); }};
}

}  // namespace fsc::cli
