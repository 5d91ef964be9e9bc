// fusescope-cli: the Fusescope engine without a window. Links no Qt, so it runs on a
// headless GPU server from the portable bundle.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/compile_command.h"
#include "app/cli/profile_command.h"
#include "app/cli/run_command.h"
#include "app/cli/summary_json.h"
#include "app/cli/summary_text.h"
#include "app/common/build_info.h"
#include "compiler/backends/device_query.h"
#include "core/out_of_memory.h"
#include "core/model_summary.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/text_printer.h"

namespace {

// Exit statuses: scripts tell a bad model (2) from a bad command line (64, as EX_USAGE).
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitUsage = 64;

const char* kUsage = R"(usage: fusescope-cli <command> [options]

commands:
  inspect MODEL [--json] [--no-infer]   summary of an ONNX model (IR version, opsets,
                                        inputs/outputs, node counts, op histogram,
                                        parameters, subgraphs, unknown shapes)
  dump MODEL [--no-infer]               the model as Fusescope's text form
  export MODEL OUT.onnx [--external-data]
                                        import and write back as ONNX
  compile MODEL [options]               run the compiler's passes and show what each did;
                                        `compile --help` for options
  run MODEL [options]                   run the model (CPU backend) and report outputs,
                                        latency, memory plan; `run --help` for options
  profile MODEL [options]               a profiled run: per-node times, overhead, a run store
                                        (.fsdb), Perfetto trace, CSV; `profile --help`
  devices                               the CUDA devices this build can use
  --version | --help

Errors print one line naming the file and the cause and exit with status 2.
)";

// The simple commands' own --help (compile, run and profile have theirs in their files).
struct CommandHelp {
    const char* command;
    const char* text;
};
constexpr CommandHelp kCommandHelp[] = {
    {"inspect", R"(usage: fusescope-cli inspect MODEL [--json] [--no-infer]

  --json       the summary as JSON (schema fusescope.inspect/1, keys only ever added)
  --no-infer   skip shape inference (shapes as stored in the file)
)"},
    {"dump", R"(usage: fusescope-cli dump MODEL [--no-infer]

  --no-infer   skip shape inference (shapes as stored in the file)
)"},
    {"export", R"(usage: fusescope-cli export MODEL OUT.onnx [--external-data] [--no-infer]

  --external-data   write every initializer to OUT.onnx.data beside the model
  --no-infer        skip shape inference (shapes as stored in the file)
)"},
    {"devices", R"(usage: fusescope-cli devices

Lists the CUDA devices this build can use, or says why there are none.
)"},
};

struct Args {
    std::vector<std::string> positional;
    std::vector<std::string> flags;
    bool has(const char* flag) const {
        for (const auto& f : flags)
            if (f == flag) return true;
        return false;
    }
};

Args parseArgs(int argc, char** argv, int first) {
    Args a;
    for (int i = first; i < argc; ++i) {
        std::string s = argv[i];
        if (s.size() > 2 && s.rfind("--", 0) == 0) a.flags.push_back(s);
        else a.positional.push_back(s);
    }
    return a;
}

int usageError(const std::string& message) {
    std::cerr << "fusescope-cli: " << message << "\n" << kUsage;
    return kExitUsage;
}

int unknownFlags(const Args& args, std::initializer_list<const char*> known) {
    for (const auto& f : args.flags) {
        bool ok = false;
        for (const char* k : known) ok |= f == k;
        if (!ok) return usageError("unknown option " + f);
    }
    return kExitOk;
}

fsc::Result<fsc::Model> load(const std::string& path, const Args& args) {
    fsc::ImportOptions options;
    options.inferShapes = !args.has("--no-infer");
    return fsc::importModel(path, options);
}

int fail(const fsc::Status& status) {
    std::cerr << "error: " << status.message() << "\n";
    return kExitBadInput;
}

int cmdInspect(const Args& args) {
    if (int rc = unknownFlags(args, {"--json", "--no-infer"})) return rc;
    if (args.positional.size() != 1) return usageError("inspect needs exactly one MODEL");
    const std::string& path = args.positional[0];
    auto model = load(path, args);
    if (!model) return fail(model.status());
    fsc::ModelSummary summary = fsc::summarizeModel(*model);
    if (args.has("--json")) std::cout << fsc::cli::summaryToJson(summary, path).dump(2) << "\n";
    else std::cout << fsc::cli::summaryToText(summary, path);
    return kExitOk;
}

int cmdDump(const Args& args) {
    if (int rc = unknownFlags(args, {"--no-infer"})) return rc;
    if (args.positional.size() != 1) return usageError("dump needs exactly one MODEL");
    auto model = load(args.positional[0], args);
    if (!model) return fail(model.status());
    std::cout << fsc::printModel(*model);
    return kExitOk;
}

int cmdExport(const Args& args) {
    if (int rc = unknownFlags(args, {"--external-data", "--no-infer"})) return rc;
    if (args.positional.size() != 2) return usageError("export needs MODEL and OUT.onnx");
    auto model = load(args.positional[0], args);
    if (!model) return fail(model.status());
    fsc::ExportOptions options;
    if (args.has("--external-data")) options.externalData = fsc::ExportOptions::ExternalData::Always;
    fsc::Status s = fsc::exportModel(*model, args.positional[1], options);
    if (!s) return fail(s);
    return kExitOk;
}

int cmdDevices() {
    fsc::CudaDeviceReport report = fsc::queryCudaDevices();
    if (report.builtWithCuda)
        std::cout << "CUDA runtime " << report.runtimeVersion << ", driver "
                  << report.driverVersion << "\n";
    if (report.devices.empty()) {
        std::cout << "no CUDA device: " << report.whyNone << " (the CPU backend is used)\n";
        return kExitOk;
    }
    for (const auto& d : report.devices)
        std::cout << "cuda:" << d.index << "  " << d.name << "  sm_" << d.computeMajor
                  << d.computeMinor << "  " << d.totalMemoryBytes / (1024 * 1024) << " MiB  "
                  << d.multiprocessors << " SMs\n";
    return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usageError("no command given");
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::cout << kUsage;
        return kExitOk;
    }
    if (cmd == "--version") {
        std::cout << fsc::versionLine("fusescope-cli") << "\n" << fsc::librariesLine() << "\n";
        return kExitOk;
    }
    Args args = parseArgs(argc, argv, 2);
    for (const CommandHelp& h : kCommandHelp)
        if (cmd == h.command && args.has("--help")) {
            std::cout << h.text;
            return kExitOk;
        }
    try {
        if (cmd == "inspect") return cmdInspect(args);
        if (cmd == "dump") return cmdDump(args);
        if (cmd == "export") return cmdExport(args);
        if (cmd == "devices") return cmdDevices();
        if (cmd == "run") return fsc::cli::runCommand(argc, argv, 2);
        if (cmd == "compile") return fsc::cli::compileCommand(argc, argv, 2);
        if (cmd == "profile") return fsc::cli::profileCommand(argc, argv, 2);
    } catch (const std::bad_alloc& e) {  // an allocation no Status was made for (see out_of_memory.h)
        std::cerr << "error: " << fsc::outOfMemoryStatus(e).message() << "\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        // Library code reports errors as Status; this is the last line of defence.
        std::cerr << "error: internal: " << e.what() << "\n";
        return kExitBadInput;
    }
    return usageError("unknown command '" + cmd + "'");
}
