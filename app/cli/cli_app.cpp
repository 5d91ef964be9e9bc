#include "app/cli/cli_app.h"

#include <iostream>
#include <sstream>

#include "compiler/pipelines.h"
#include "core/comma_list.h"
#include "core/parse_int.h"

namespace fsc::cli {

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
    return opt->get_type_size() == 0 || opt->get_type_name().empty() ? std::string() : " " + opt->get_type_name();
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
    std::ostringstream out;
    // The usage line: the positionals by their names, then the options.
    out << "usage: " << name;
    for (const CLI::Option* p : app->get_options([](const CLI::Option* o) { return o->get_positional(); }))
        out << " " << p->get_name();
    if (!app->get_subcommands({}).empty()) out << " <command>";
    out << " [options]\n";
    if (!app->get_description().empty()) out << "\n" << app->get_description() << "\n";
    out << make_groups(app, mode);
    out << make_subcommands(app, mode);
    if (!app->get_footer().empty()) out << "\n" << app->get_footer() << "\n";
    // A command with a footer of its own still ends with the root's: the exit statuses.
    if (const CLI::App* root = app->get_parent(); root && !root->get_footer().empty() && root->get_footer() != app->get_footer())
        out << "\n" << root->get_footer() << "\n";
    std::string text = out.str();  // CLI11 ends each group with two blank lines: keep one
    for (size_t at; (at = text.find("\n\n\n")) != std::string::npos;) text.erase(at, 1);
    return text;
}

void configureApp(CLI::App& app) {
    auto formatter = std::make_shared<HelpFormatter>();
    formatter->column_width(27);
    app.formatter(formatter);
    app.set_help_flag("-h,--help", "this help")->group("");  // works, listed nowhere
    app.option_defaults()->always_capture_default(false);
}

CLI::App* addCommand(CLI::App& app, const std::string& name, const std::string& description) {
    CLI::App* command = app.add_subcommand(name, description);
    command->group("commands");
    command->set_help_flag("-h,--help", "this help")->group("");
    return command;
}

int usageError(const CLI::App& command, const std::string& message) {
    std::string path = command.get_name();
    for (const CLI::App* parent = command.get_parent(); parent; parent = parent->get_parent())
        path = parent->get_name() + " " + path;
    std::cerr << path << ": " << message << "\nsee '" << path << " --help' for the options\n";
    return kExitUsage;
}

int fail(const std::string& message) {
    std::cerr << "error: " << message << "\n";
    return kExitBadInput;
}

int fail(const Status& status) {
    return fail(status.message());
}

CLI::Validator integerIn(int64_t low, int64_t high, const std::string& needs) {
    return CLI::Validator(
        [low, high, needs](std::string& value) {
            int64_t n = 0;
            return parseInt(value, n) && n >= low && n <= high ? std::string() : "needs " + needs;
        },
        "");
}

CLI::Validator oneOf(std::vector<std::string> choices, const std::string& needs) {
    return CLI::Validator(
        [choices = std::move(choices), needs](std::string& value) {
            for (const std::string& c : choices)
                if (value == c) return std::string();
            return "needs " + needs;
        },
        "");
}

std::string PipelineChoice::conflict() const {
    return !passes.empty() && !pipeline.empty() ? "give --pipeline or --passes, not both" : std::string();
}

std::string PipelineChoice::name() const {
    return !passes.empty() ? "custom" : pipeline.empty() ? "O2" : pipeline;
}

Result<std::vector<std::string>> PipelineChoice::resolve() const {
    if (std::string why = conflict(); !why.empty()) return Status(ErrorCode::InvalidArgument, why);
    return resolvePipeline(pipeline, passes, disabled);
}

Result<PipelineSpec> PipelineChoice::spec(const Target& target) const {
    auto resolved = resolve();
    if (!resolved) return resolved.status();
    PipelineSpec spec;
    spec.passes = std::move(*resolved);
    spec.customPasses = !passes.empty();
    spec.target = target;
    return spec;
}

Result<Target> chooseTarget(const std::string& model, const TargetChoice& choice) {
    auto target = makeTarget(choice);
    if (!target && choice.backend == "cuda")
        return Status(target.status().code(),
                      model + ": --backend cuda: " + target.status().message() + "; use --backend cpu");
    return target;
}

void addPipelineOptions(CLI::App& command, PipelineChoice& choice, const std::string& group) {
    command.add_option("--pipeline", choice.pipeline, "named pipeline (default O2)")
        ->type_name("O0|O1|O2|O3")
        ->group(group);
    command.add_option("--passes", choice.passes, "run exactly these passes, in this order")
        ->type_name("a,b,c")
        ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("needs a,b,c") : std::string(); }, ""))
        ->group(group);
    command
        .add_option_function<std::string>(
            "--disable",
            [&choice](const std::string& v) {
                for (std::string& name : splitCommaList(v)) choice.disabled.push_back(std::move(name));
            },
            "leave these passes out")
        ->type_name("a,b")
        ->group(group);
}

FeedOptions feedOptions(const InputChoice& choice, uint64_t seed) {
    FeedOptions feeds;
    feeds.inputDir = choice.dir.string();
    feeds.files = choice.files;
    feeds.dims = choice.dims;
    feeds.seed = seed;
    return feeds;
}

void addInputOptions(CLI::App& command, InputChoice& choice, const std::string& group) {
    auto nameEquals = [](const std::string& what) {
        return CLI::Validator(
            [what](std::string& v) {
                const size_t eq = v.find('=');
                return eq == std::string::npos || eq == 0 ? "needs " + what : std::string();
            },
            "");
    };
    command
        .add_option_function<std::vector<std::string>>(
            "--dim",
            [&choice](const std::vector<std::string>& all) {
                for (const std::string& v : all) {
                    const size_t eq = v.find('=');
                    int64_t n = 0;
                    parseInt(v.substr(eq + 1), n);  // checked below
                    choice.dims[v.substr(0, eq)] = n;
                }
            },
            "the size of a symbolic dim (repeatable; default: 224 for an image's height and\n"
            "width, 1024 for a 1-D signal's length, else 1)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false)
        ->check(CLI::Validator(
            [](std::string& v) {
                const size_t eq = v.find('=');
                int64_t n = 0;
                return eq == std::string::npos || eq == 0 || !parseInt(v.substr(eq + 1), n) || n < 1
                           ? std::string("needs NAME=VALUE with VALUE >= 1")
                           : std::string();
            },
            ""))
        ->group(group);
    command.add_option("--input-dir", choice.dir, "inputs from DIR (input_K.pb|.npy, or folders of them)")
        ->type_name("DIR")
        ->group(group);
    command
        .add_option_function<std::vector<std::string>>(
            "--input",
            [&choice](const std::vector<std::string>& all) {
                for (const std::string& v : all) {
                    const size_t eq = v.find('=');
                    choice.files.emplace_back(v.substr(0, eq), v.substr(eq + 1));
                }
            },
            "one input from a .pb (TensorProto) or .npy file (repeatable)")
        ->type_name("NAME=FILE")
        ->allow_extra_args(false)
        ->check(nameEquals("NAME=FILE"))
        ->group(group);
}

void addSeedOption(CLI::App& command, uint64_t& seed, const std::string& group) {
    command.add_option("--seed", seed, "seed of the random inputs (default 0)")
        ->type_name("N")
        ->check(integerIn(0, INT64_MAX, "a number"))
        ->group(group);
}

void addThreadsOption(CLI::App& command, int& threads, const std::string& group) {
    command.add_option("--threads", threads,
                       "CPU threads (default: automatic, every core that other programs leave free,\n"
                       "looked at as each run starts)")
        ->type_name("N")
        ->check(integerIn(1, 1024, "a number >= 1"))
        ->group(group);
}

void addIterationOptions(CLI::App& command, int& iterations, int& warmup, const std::string& group,
                         const std::string& iterationsHelp, const std::string& warmupHelp) {
    command.add_option("--iterations", iterations, iterationsHelp)
        ->type_name("N")
        ->check(integerIn(1, INT32_MAX, "a number >= 1"))
        ->group(group);
    command.add_option("--warmup", warmup, warmupHelp)
        ->type_name("N")
        ->check(integerIn(0, INT32_MAX, "a number >= 0"))
        ->group(group);
}

void addTf32Option(CLI::App& command, bool& tf32, const std::string& group) {
    command.add_flag("--tf32", tf32,
                     "float32 GEMMs and convolutions on tensor cores from TF32-rounded inputs\n"
                     "(cuBLASLt's FAST_TF32, cuDNN's default math): faster, within about 5e-3 of\n"
                     "strict float32 (needs --backend cuda)")
        ->group(group);
}

Status checkCudaOnlyFlags(const std::string& backend, bool tf32, bool deviceIo) {
    if (backend == "cuda") return Status::ok();
    if (tf32) return Status(ErrorCode::InvalidArgument, "--tf32 needs --backend cuda (TF32 is a GPU tensor-core format)");
    if (deviceIo) return Status(ErrorCode::InvalidArgument, "--device-io needs --backend cuda");
    return Status::ok();
}

void addBackendOption(CLI::App& command, std::string& backend, const std::string& group, const std::string& help) {
    command.add_option("--backend", backend, help)
        ->type_name("cpu|cuda")
        ->check(oneOf({"cpu", "cuda"}, "cpu or cuda"))
        ->group(group);
}

}  // namespace fsc::cli
