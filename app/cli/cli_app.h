#pragma once
// fusescope-cli's command line on CLI11: the exit statuses, the help layout every command
// shares (the man page and the bash completion are generated from it), validators that
// say what a value needs, and the option groups several commands take.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/quantization/calibration_data.h"
#include "compiler/pipelines.h"
#include "compiler/runtime/feeds.h"
#include "app/common/target_choice.h"
#include "core/status.h"

namespace fsc::cli {

// Scripts tell a bad model (2) from a bad command line (64, as EX_USAGE).
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitUsage = 64;

// A subcommand: its options bound to its arguments, and what runs when it was chosen.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

// "usage: fusescope-cli run MODEL [options]", the description, then each option group as
// "group:" with its options, the subcommands under "commands:", and the footer.
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;
    std::string make_positionals(const CLI::App*) const override { return {}; }
    std::string make_option_opts(const CLI::Option* opt) const override;
};

// The top-level app with fusescope-cli's formatter and --help; subcommands inherit both.
void configureApp(CLI::App& app);
// A subcommand, listed under "commands:" in the top-level help.
CLI::App* addCommand(CLI::App& app, const std::string& name, const std::string& description);

// Writes "fusescope-cli CMD: message" and where to find the options; returns 64.
int usageError(const CLI::App& command, const std::string& message);
// Writes "error: message" (one line naming the file and the cause); returns 2.
int fail(const std::string& message);
int fail(const Status& status);

// Validators whose failure message says what the value needs.
CLI::Validator integerIn(int64_t low, int64_t high, const std::string& needs);
CLI::Validator oneOf(std::vector<std::string> choices, const std::string& needs);

// Option groups shared by run, profile and compile.
struct PipelineChoice {
    std::string pipeline, passes;  // at most one of them
    std::vector<std::string> disabled;
    // Why the choice cannot stand (both a pipeline and a pass list); empty when it can.
    std::string conflict() const;
    // What reports call it: "custom" for a pass list, else the pipeline (O2 by default).
    std::string name() const;
    // The passes to run, in order (an unknown pipeline or pass, or a conflict, is an error).
    Result<std::vector<std::string>> resolve() const;
    // The pipeline for `target`: these passes, marked custom for a pass list (buildPipeline
    // fits a named pipeline to the target).
    Result<PipelineSpec> spec(const Target& target) const;
};
// The target of a command's --backend, --threads, --tf32 (and run's --cuda-graphs); no GPU is
// one line naming the model and the way out.
Result<Target> chooseTarget(const std::string& model, const TargetChoice& choice);
void addPipelineOptions(CLI::App& command, PipelineChoice& choice, const std::string& group);
// --dim NAME=VALUE, --input-dir DIR, --input NAME=FILE (repeatable).
void addInputOptions(CLI::App& command, InputChoice& choice, const std::string& group);
// The runtime's inputs for those options and --seed.
FeedOptions feedOptions(const InputChoice& choice, uint64_t seed);
void addSeedOption(CLI::App& command, uint64_t& seed, const std::string& group);
void addThreadsOption(CLI::App& command, int& threads, const std::string& group);
void addIterationOptions(CLI::App& command, int& iterations, int& warmup, const std::string& group,
                         const std::string& iterationsHelp, const std::string& warmupHelp);
void addTf32Option(CLI::App& command, bool& tf32, const std::string& group);
// --tf32 and --device-io mean something on the GPU only: a usage error's reason otherwise.
Status checkCudaOnlyFlags(const std::string& backend, bool tf32, bool deviceIo = false);
void addBackendOption(CLI::App& command, std::string& backend, const std::string& group, const std::string& help);

}  // namespace fsc::cli
