// fusescope-cli: the Fusescope engine without a window. Links no Qt, so it runs on a
// headless GPU server from the portable bundle.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/ablate_command.h"
#include "app/cli/bisect_command.h"
#include "app/cli/compare_command.h"
#include "app/cli/cli_app.h"
#include "app/profiling/heap_reuse.h"
#include "app/profiling/openmp_waiting.h"
#include "app/cli/compile_command.h"
#include "app/cli/profile_command.h"
#include "app/cli/run_command.h"
#include "app/cli/walkthrough_command.h"
#include "app/reports/summary_json.h"
#include "app/cli/summary_text.h"
#include "app/common/build_info.h"
#include "compiler/backends/cuda/device_query.h"
#include "core/model_summary.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/out_of_memory.h"
#include "core/text_printer.h"
#include "core/units.h"

namespace {

using namespace fsc::cli;

// --no-infer, which every command that reads a model takes.
struct ModelArgs {
    std::string model;
    bool noInfer = false;
    void add(CLI::App& command) {
        command.add_option("MODEL", model, "the ONNX model");
        command.add_flag("--no-infer", noInfer, "skip shape inference (shapes as stored in the file)")
            ->group("reading");
    }
    fsc::Result<fsc::Model> load() const {
        fsc::ImportOptions options;
        options.inferShapes = !noInfer;
        return fsc::importModel(model, options);
    }
};

Command inspectCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "inspect",
                           "summary of an ONNX model (IR version, opsets, inputs/outputs, node counts, op\n"
                           "histogram, parameters, subgraphs, unknown shapes)");
    auto args = std::make_shared<ModelArgs>();
    auto json = std::make_shared<bool>(false);
    args->add(*app);
    app->add_flag("--json", *json, "the summary as JSON (schema fusescope.inspect/1, keys only ever added)")
        ->group("output");
    return {app, [app, args, json] {
                if (args->model.empty()) return usageError(*app, "inspect needs exactly one MODEL");
                auto model = args->load();
                if (!model) return fail(model.status());
                const fsc::ModelSummary summary = fsc::summarizeModel(*model);
                if (*json)
                    std::cout << summaryToJson(summary, args->model).dump(2) << "\n";
                else
                    std::cout << summaryToText(summary, args->model);
                return kExitOk;
            }};
}

Command dumpCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "dump", "the model as Fusescope's text form");
    auto args = std::make_shared<ModelArgs>();
    args->add(*app);
    return {app, [app, args] {
                if (args->model.empty()) return usageError(*app, "dump needs exactly one MODEL");
                auto model = args->load();
                if (!model) return fail(model.status());
                std::cout << fsc::printModel(*model);
                return kExitOk;
            }};
}

Command exportCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "export", "import and write back as ONNX");
    auto args = std::make_shared<ModelArgs>();
    auto out = std::make_shared<std::string>();
    auto external = std::make_shared<bool>(false);
    args->add(*app);
    app->add_option("OUT.onnx", *out, "where to write");
    app->add_flag("--external-data", *external, "write every initializer to OUT.onnx.data beside the model")
        ->group("output");
    return {app, [app, args, out, external] {
                if (args->model.empty() || out->empty()) return usageError(*app, "export needs MODEL and OUT.onnx");
                auto model = args->load();
                if (!model) return fail(model.status());
                fsc::ExportOptions options;
                if (*external) options.externalData = fsc::ExportOptions::ExternalData::Always;
                const fsc::Status s = fsc::exportModel(*model, *out, options);
                return s ? kExitOk : fail(s);
            }};
}

Command devicesCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "devices", "the CUDA devices this build can use");
    app->footer("Lists the CUDA devices this build can use, or says why there are none.");
    return {app, [] {
                const fsc::CudaDeviceReport report = fsc::queryCudaDevices();
                if (report.builtWithCuda)
                    std::cout << "CUDA runtime " << report.runtimeVersion << ", driver " << report.driverVersion << "\n";
                if (report.devices.empty()) {
                    std::cout << "no CUDA device: " << report.whyNone << " (the CPU backend is used)\n";
                    return kExitOk;
                }
                for (const auto& d : report.devices)
                    std::cout << "cuda:" << d.index << "  " << d.name << "  sm_" << d.computeMajor << d.computeMinor
                              << "  " << fsc::bytesText(double(d.totalMemoryBytes)) << "  " << d.multiprocessors
                              << " SMs\n";
                return kExitOk;
            }};
}

// What a parse error says: CLI11's words for the common cases in ours.
std::string parseErrorMessage(const CLI::ParseError& e, const CLI::App& command) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
        const std::vector<std::string> extra = command.remaining();
        if (!extra.empty() && extra.front().rfind('-', 0) == 0) return "unknown option " + extra.front();
        if (!extra.empty())
            return (command.get_parent() ? "unexpected argument '" : "unknown command '") + extra.front() + "'";
    }
    return e.what();
}

}  // namespace

int main(int argc, char** argv) {
    fsc::boundOpenMpSpinning(argv);
    fsc::keepFreedTensorsOnHeap();
    CLI::App cli("", "fusescope-cli");
    configureApp(cli);
    cli.footer("Errors print one line naming the file and the cause and exit with status 2; a bad command\n"
               "line exits with status 64. Each command's --help lists its options; --version prints the\n"
               "version, the git commit and the libraries in use.");
    bool version = false;
    cli.add_flag("--version", version, "the version, the git commit and the libraries in use")->group("");
    std::vector<Command> commands = {inspectCommand(cli), dumpCommand(cli), exportCommand(cli),
                                     compileCommand(cli), runCommand(cli),  profileCommand(cli),
                                     walkthroughCommand(cli), ablateCommand(cli), bisectCommand(cli), compareCommand(cli),
                                     devicesCommand(cli)};
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args.front() == "help") args.front() = "--help";
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    try {
        cli.parse(args);
    } catch (const CLI::CallForHelp&) {
        std::cout << cli.help();
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        const CLI::App* command = &cli;
        for (const Command& c : commands)
            if (c.app->parsed()) command = c.app;
        return usageError(*command, parseErrorMessage(e, *command));
    }
    if (version) {
        std::cout << fsc::versionLine("fusescope-cli") << "\n" << fsc::librariesLine() << "\n";
        return kExitOk;
    }
    try {
        for (const Command& c : commands)
            if (c.app->parsed()) return c.run();
    } catch (const std::bad_alloc& e) {  // an allocation no Status was made for (see out_of_memory.h)
        std::cerr << "error: " << fsc::outOfMemoryStatus(e).message() << "\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        // Library code reports errors as Status; this is the last line of defence.
        std::cerr << "error: internal: " << e.what() << "\n";
        return kExitBadInput;
    }
    return usageError(cli, "no command given");
}
