#include "app/cli/run_command.h"
#include "compiler/runtime/thread_pool.h"

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/reports/memory_report.h"
#include "app/common/session.h"
#include "app/profiling/trace_recorder.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "core/comma_list.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "compiler/runtime/tensor_stats.h"
#include "core/onnx_import.h"
#include "core/tensor_io.h"
#include "core/units.h"
#include "profiler/cpu_timer.h"
#include "profiler/node_stats.h"

namespace fsc::cli {
namespace {

struct RunArgs {
    std::string model;
    std::string outputDir;
    InputChoice input;
    uint64_t seed = 0;
    int iterations = 0, warmup = 1;  // 0 iterations: automatic (TimingBudget)
    int threads = 0;
    bool json = false, profile = false, tf32 = false, deviceIo = false;
    std::string backend = "cpu";
    std::string cudaGraphs = "on";
    PipelineChoice pipeline;
};

void addOptions(CLI::App& app, RunArgs& a) {
    app.add_option("MODEL", a.model, "the ONNX model");
    const std::string inputs = "inputs (in graph-input order; inputs backed by an initializer are not fed)";
    addInputOptions(app, a.input, inputs);
    addSeedOption(app, a.seed, inputs);
    const std::string outputs = "outputs";
    app.add_option("--output-dir", a.outputDir, "write DIR/output_0.pb, ... in graph-output order")
        ->type_name("DIR")
        ->group(outputs);
    app.add_flag("--json", a.json, "print a JSON summary (schema fusescope.run/1)")->group(outputs);
    const std::string timing = "timing";
    addIterationOptions(app, a.iterations, a.warmup, timing,
                        "timed runs (default: automatic, at least 3, then more while they fit in\n"
                        "about 1 s, at most 100)",
                        "untimed runs first (default 1: the first run allocates and warms caches)");
    app.add_flag("--profile", a.profile, "per-node time table (time, share, kernel id), largest first")->group(timing);
    addPipelineOptions(app, a.pipeline, "compilation (run before execution)");
    const std::string execution = "execution";
    addBackendOption(app, a.backend, execution,
                     "default cpu; cuda runs what the CUDA capability table claims on the first\n"
                     "GPU and the rest on the CPU, with explicit copies (channels-last then\n"
                     "lays out float16/bfloat16 convolutions; float32 ones stay NCHW)");
    app.add_option("--cuda-graphs", a.cudaGraphs,
                   "capture a run as a CUDA Graph and replay it (default on; used only when\n"
                   "every node runs on the GPU and --profile is off)")
        ->type_name("on|off")
        ->check(oneOf({"on", "off"}, "on or off"))
        ->group(execution);
    addTf32Option(app, a.tf32, execution);
    app.add_flag("--device-io", a.deviceIo,
                 "device-resident timing: inputs copied to the GPU once before the timed runs,\n"
                 "outputs left there (read back once after them), as PyTorch's are (needs\n"
                 "--backend cuda)")
        ->group(timing);
    addThreadsOption(app, a.threads, execution);
    app.footer("Without --input-dir or --input, inputs are random from a fixed seed: floats uniform in\n"
               "[-1, 1), integers uniform in [0, 10) (below the rows of an embedding they index), bools fair coins.");
}

// A run that fails for its sizes (out of memory, a kernel larger than the input) says which
// sizes it ran with and how to change them.
std::string sizesNote(const Status& status, const std::map<std::string, int64_t>& given, const InputSizing& sizing) {
    std::string note;
    if (status.code() == ErrorCode::OutOfMemory && !given.empty()) {
        note = ", planned for";
        for (const auto& [name, size] : given) note += " " + name + "=" + std::to_string(size);
    }
    return withSizingHint(Status(status.code(), note), sizing).message();
}

int run(const CLI::App& app, const RunArgs& args) {
    if (args.model.empty()) return usageError(app, "run needs a MODEL");
    if (std::string why = args.pipeline.conflict(); !why.empty()) return usageError(app, why);
    if (Status s = checkCudaOnlyFlags(args.backend, args.tf32, args.deviceIo); !s) return usageError(app, s.message());

    // The device is opened before the model is read, so a machine without a GPU hears it at once.
    auto target = chooseTarget(args.model, {.backend = args.backend,
                                            .threads = args.threads,
                                            .tf32 = args.tf32,
                                            .cudaGraphs = args.cudaGraphs == "on"});
    if (!target) return fail(target.status().message());
    auto spec = args.pipeline.spec(*target);
    if (!spec) return usageError(app, spec.status().message());
    Session session;
    if (Status s = session.open(args.model); !s) return fail(s.message());
    if (Status s = session.compile(*spec); !s) return fail(s.message());
    const Model* model = session.compiledModel().get();
    const std::string pipelineName = args.pipeline.name();
    const ExecutorOptions options = executorOptions(*target);
    auto executor = Executor::create(*model, options);
    if (!executor) return fail(executor.status().message());
    Executor& exec = **executor;
    const Graph& graph = exec.graph();

    auto built = buildFeeds(exec, feedOptions(args.input, args.seed));
    if (!built) return fail(args.model + ": " + built.status().message());
    const std::vector<RtTensor>& feeds = built->tensors;
    const std::vector<std::string>& sources = built->sources;
    // --device-io: the feeds cross to the device once, before any timed run.
    std::vector<RtTensor> runFeeds = feeds;
    if (args.deviceIo)
        for (RtTensor& feed : runFeeds) {
            auto uploaded = uploadToDevice(*exec.device(), feed);
            if (!uploaded) return fail(args.model + ": copying the inputs to the device: " + uploaded.status().message());
            feed = std::move(*uploaded);
        }

    // --profile: the profile command's recorder, on the timed runs only.
    Trace trace;
    TraceRecorder recorder(trace, nullptr);
    recorder.originNs = TraceRecorder::nowNs();
    RunOptions runOptions;
    runOptions.listener = args.profile ? &recorder : nullptr;
    runOptions.outputsOnDevice = args.deviceIo;
    std::vector<RtTensor> outputs;
    std::vector<double> samples;
    const bool automaticIterations = args.iterations == 0;
    double timedMs = 0;
    for (int i = 0;; ++i) {
        const int timedDone = i - args.warmup;
        if (timedDone >= 0 && (automaticIterations ? !TimingBudget::wantsMore(timedDone, timedMs) : timedDone >= args.iterations))
            break;
        std::vector<RtTensor> copy = runFeeds;
        recorder.recording = i >= args.warmup;
        recorder.iteration = i - args.warmup;
        Stopwatch watch;
        auto result = exec.run(std::move(copy), runOptions);
        // Outputs left on the device: the time counts until the device's work is done.
        if (result && args.deviceIo) {
            if (Status s = exec.device()->synchronize(); !s) result = s;
        }
        const double ms = watch.elapsedMs();
        if (!result) return fail(args.model + ": " + result.status().message() + sizesNote(result.status(), args.input.dims, built->sizing));
        if (i >= args.warmup) {
            samples.push_back(ms);
            timedMs += ms;
        }
        outputs = std::move(*result);
    }
    const SampleStats latency = computeStats(samples);
    const TransferStats lastRun = exec.lastTransfers();  // before reading device outputs back
    if (args.deviceIo)
        for (RtTensor& out : outputs) {
            auto host = downloadToHost(*exec.device(), out);
            if (!host) return fail(args.model + ": reading the outputs back: " + host.status().message());
            out = std::move(*host);
        }

    if (!args.outputDir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(args.outputDir, ec);
        for (size_t i = 0; i < outputs.size(); ++i) {
            const std::string file = args.outputDir + "/output_" + std::to_string(i) + ".pb";
            const std::string& name = graph.value(graph.outputs[i]).name;
            Status s = Status::ok();
            if (outputs[i].isSequence()) {  // a SequenceProto, as ONNX's test data stores one
                TensorSequence sequence{outputs[i].dtype, {}};
                for (const RtTensor& element : *outputs[i].sequence) sequence.elements.push_back(tensorToConstant(element, ""));
                s = writeSequenceProtoFile(file, name, sequence);
            } else {
                s = writeTensorProtoFile(file, tensorToConstant(outputs[i], name));
            }
            if (!s) return fail(s.message());
        }
    }

    const MemoryPlan* memory = exec.lastMemoryPlan();
    if (args.profile) addPlanNodes(exec, feeds, trace);
    const NodeStatsCollector stats = nodeTimes(trace);
    const auto profile = stats.sorted();
    const double totalNs = double(std::max<int64_t>(1, stats.topLevelMedianNs()));
    if (args.json) {
        nlohmann::json j;
        j["schema"] = "fusescope.run/1";
        j["model"] = args.model;
        j["backend"] = args.backend;
        j["pipeline"] = pipelineName;
        j["nodes"] = model->graph->nodeCount();
        j["threads"] = exec.threadsInUse();
        j["threads_automatic"] = options.threads == ThreadPool::kAutomatic;
        j["tf32"] = args.tf32;
        j["timing"] = args.deviceIo ? "device-resident" : "host to host";
        if (Device* device = exec.device()) {
            const TransferStats& t = lastRun;
            int onDevice = 0;
            nlohmann::json fallbacks = nlohmann::json::array();
            for (const PlanStep& step : exec.plan().steps) {
                if (step.backend == Backend::Cuda) ++onDevice;
                else fallbacks.push_back({{"node", step.nodeName}, {"op", step.opType}, {"reason", step.fallbackReason}});
            }
            j["device"] = {{"name", device->name()}, {"simulated", device->simulated()},
                           {"peak_allocated_bytes", device->memory().peakAllocatedBytes},
                           {"steps_on_device", onDevice}, {"cpu_fallbacks", fallbacks},
                           {"cuda_graph_replayed", t.graphReplayed},
                           {"last_run_copies", {{"count", t.copies}, {"host_to_device_bytes", t.hostToDeviceBytes},
                                                {"device_to_host_bytes", t.deviceToHostBytes}}}};
        }
        j["inputs"] = nlohmann::json::array();
        for (size_t i = 0; i < feeds.size(); ++i)
            j["inputs"].push_back({{"name", graph.value(exec.feeds()[i]).name},
                                   {"dtype", std::string(dtypeName(feeds[i].dtype))},
                                   {"shape", feeds[i].dims},
                                   {"source", sources[i]}});
        j["outputs"] = nlohmann::json::array();
        for (size_t i = 0; i < outputs.size(); ++i) {
            if (outputs[i].isSequence()) {  // its elements' shapes may differ: the count says what it is
                j["outputs"].push_back({{"name", graph.value(graph.outputs[i]).name},
                                        {"dtype", std::string(dtypeName(outputs[i].dtype))},
                                        {"sequence_length", outputs[i].sequence->size()}});
                continue;
            }
            const TensorStats s = computeTensorStats(outputs[i], 0);
            j["outputs"].push_back({{"name", graph.value(graph.outputs[i]).name},
                                    {"dtype", std::string(dtypeName(outputs[i].dtype))},
                                    {"shape", outputs[i].dims},
                                    {"min", s.min}, {"max", s.max}, {"mean", s.mean}});
        }
        j["latency_ms"] = {{"median", latency.median}, {"p90", latency.p90}, {"min", latency.min},
                           {"max", latency.max}, {"iterations", int(samples.size())},
                           {"iterations_automatic", automaticIterations}, {"warmup", args.warmup},
                           {"samples", samples}};  // each timed run, in order
        if (!latency.disturbed.empty()) j["latency_ms"]["warning"] = latency.disturbed;
        if (memory)
            j["memory"] = {{"arena_bytes", memory->arenaBytes}, {"naive_bytes", memory->naiveBytes},
                           {"lower_bound_bytes", memory->lowerBoundBytes}};
        if (args.profile) {
            j["profile"] = nlohmann::json::array();
            for (const NodeTime& t : profile)
                j["profile"].push_back({{"node", t.node}, {"op", t.opType}, {"kernel", t.kernelId},
                                        {"depth", t.depth}, {"launches", t.launches},
                                        {"ms_per_iteration", double(t.medianNs) / 1e6},  // median
                                        {"share", t.depth == 0 ? double(t.medianNs) / totalNs : 0.0}});
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "model: " << args.model << "  pipeline: " << pipelineName << " (" << model->graph->nodeCount()
              << " nodes)  backend: " << args.backend << "  threads: " << exec.threadsInUse()
              << (options.threads == ThreadPool::kAutomatic ? " (automatic: the cores other programs leave free)" : "");
    if (exec.libraryThreadsInUse() != exec.threadsInUse())
        std::cout << "; oneDNN on " << exec.libraryThreadsInUse() << ", our loops also on the taken cores";
    std::cout << "\n";
    if (Device* device = exec.device()) {
        int onDevice = 0;
        std::map<std::string, int> fallbackOps;
        for (const PlanStep& step : exec.plan().steps) {
            if (step.backend == Backend::Cuda) ++onDevice;
            else ++fallbackOps[step.opType];
        }
        const TransferStats& t = lastRun;
        std::cout << "device: " << device->name() << "  steps on the device: " << onDevice << " of "
                  << exec.plan().steps.size();
        if (!fallbackOps.empty()) {
            std::cout << "  on the CPU:";
            for (const auto& [op, n] : fallbackOps) std::cout << " " << op << " x" << n;
        }
        std::cout << "\ncopies in the last run: " << t.copies << " (" << bytesText(double(t.hostToDeviceBytes))
                  << " to the device, " << bytesText(double(t.deviceToHostBytes)) << " back)"
                  << (t.graphReplayed ? "  replayed as a CUDA Graph" : "") << "\n";
    }
    for (size_t i = 0; i < feeds.size(); ++i)
        std::cout << "input  " << graph.value(exec.feeds()[i]).name << "  " << feeds[i].typeString() << "  ("
                  << (sources[i] == "random" ? "random, seed " + std::to_string(args.seed) : sources[i]) << ")\n";
    for (size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i].isSequence()) {
            std::cout << "output " << graph.value(graph.outputs[i]).name << "  " << outputs[i].typeString() << " tensors\n";
            continue;
        }
        const TensorStats s = computeTensorStats(outputs[i], 0);
        std::cout << "output " << graph.value(graph.outputs[i]).name << "  " << outputs[i].typeString() << "  min "
                  << s.min << "  max " << s.max << "  mean " << s.mean << "\n";
    }
    std::cout << std::fixed << std::setprecision(3) << "latency: median " << latency.median << " ms, p90 "
              << latency.p90 << " ms over " << samples.size() << (samples.size() == 1 ? " iteration" : " iterations")
              << (automaticIterations ? " (automatic)" : "") << " after " << args.warmup << " warm-up"
              << (args.deviceIo ? " (device-resident: inputs and outputs stay on the device)" : "")
              << (args.tf32 ? ", TF32" : "") << "\n";
    if (!latency.disturbed.empty()) std::cout << "warning: " << latency.disturbed << "\n";
    if (memory)
        std::cout << "memory plan: " << memoryPlanText(*memory) << "\n";
    if (args.profile) {
        std::cout << "\n   median   share  launches  kernel                                  node   (ms per iteration)\n";
        for (const NodeTime& t : profile) {
            std::cout << std::setw(9) << std::setprecision(3) << double(t.medianNs) / 1e6 << "  "
                      << std::setw(5) << std::setprecision(1)
                      << (t.depth == 0 ? 100.0 * double(t.medianNs) / totalNs : 0.0) << "%  " << std::setw(8)
                      << t.launches << "  " << std::left << std::setw(38) << t.kernelId << "  "
                      << std::string(size_t(t.depth) * 2, ' ') << t.node << std::right << "\n";
        }
    }
    return kExitOk;
}

}  // namespace

Command runCommand(CLI::App& cli) {
    auto* app = addCommand(cli, "run", "run the model (CPU backend) and report outputs, latency, memory plan");
    auto args = std::make_shared<RunArgs>();
    addOptions(*app, *args);
    return {app, [app, args] { return run(*app, *args); }};
}

}  // namespace fsc::cli
