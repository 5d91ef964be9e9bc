// Chapters 8 (quantization) and 9 (tensor vs pipeline parallelism): the model compiled again
// with other precisions and partitions, measured by the code compile --quantize and
// compile --tp/--pp report with (quantize_report, parallel_report).
#include <algorithm>
#include <cstdio>
#include <map>

#include "app/reports/parallel_report.h"
#include "app/reports/quantize_report.h"
#include "app/profiling/simulated_trace.h"
#include "app/walkthrough/walkthrough_chapters.h"
#include "app/walkthrough/walkthrough_figures.h"
#include "compiler/runtime/memory_plan.h"
#include "compiler/parallel/simulated_timeline.h"
#include "core/model_summary.h"
#include "profiler/cpu_timer.h"
#include "profiler/report_charts.h"

namespace fsc {
namespace {

// Generated samples the precision comparison runs on: compile --quantize's
// --calibration-samples (a quarter held back for INT8's accuracy and sensitivity).
constexpr int kQuantizeSamples = 4;

struct Variant {
    std::string kind;  // float32, fp16, bf16, int8
    Model compiled;
    QuantizeReport report;
};

Result<Variant> compileQuantized(const WalkthroughInput& in, const std::string& kind) {
    const Model& model = *in.session.model();
    QuantizeArgs args;
    args.kind = kind;
    args.samples = in.calibrationSamples > 0 ? in.calibrationSamples : kQuantizeSamples;
    args.calibrationDir = in.calibrationDir;
    args.sensitivity = kind == "int8";
    // compile --quantize's calibration and accuracy runs take --threads: so do these, or a
    // reduction split for another count rounds the cosine differently from compile's.
    args.threads = in.target().threads;
    PipelineSpec spec = in.session.pipeline();
    spec.precision = Precision::Float32;
    if (in.progress) in.progress("compiling " + kind);
    auto plan = planQuantization(args, in.inputs, model, spec);
    if (!plan) return plan.status();
    auto result = Session::compileWith(model, spec);
    if (!result) return result.status();
    if (in.progress) in.progress("measuring " + kind + "'s accuracy");
    auto report = measureQuantization(args, *plan, model, *result, [&in](size_t i, size_t n) {
        if (in.progress) in.progress("INT8 sensitivity: layer " + std::to_string(i + 1) + " of " + std::to_string(n));
    });
    if (!report) return report.status();
    return Variant{kind, result->model, std::move(*report)};
}

}  // namespace

// Chapter 8: fp16, bf16 and INT8 against float32 on this model.
WalkthroughChapter quantizationChapter(const WalkthroughInput& in) {
    WalkthroughChapter c;
    c.paragraphs = {
        "Narrower numbers move fewer bytes and, on hardware built for them, compute faster. "
        "float16 keeps 10 bits of mantissa and a small range; bfloat16 keeps float32's range with "
        "7 bits of mantissa. Fusescope converts the float32 work after the fusions and keeps the "
        "numerically touchy ops (normalisations, Softmax, reductions) in float32, with Casts only "
        "where regions meet.",
        "INT8 post-training quantization maps each tensor's range onto 256 levels: calibration "
        "runs sample inputs through the model to find the activations' ranges, weights get a "
        "scale per tensor (or per output channel), and the matrix products run on integers with "
        "the scales folded in. Its error depends on the layer: one with a wide or spiky range "
        "loses more. The sensitivity table quantizes one layer at a time and measures the "
        "model's output, so the worst layers can be kept in float (--exclude).",
        "Accuracy is the quantized model's outputs against the float32 model's on the same inputs: "
        "cosine similarity (1 is identical) and, for a classifier, how often the top class agrees. "
        "Latency is measured on the walkthrough's backend (timing names it). Fusescope's CPU "
        "backend computes float16 and bfloat16 in float32, widening them around each kernel "
        "whatever half-precision instructions the CPU itself has: expect them slower there and "
        "faster on a GPU's tensor cores. The accuracy figures are compile --quantize's, on "
        "generated samples; the sensitivity table gives 1 - cosine, since the cosines themselves "
        "agree to more digits than a table shows."};
    std::vector<Variant> variants;
    variants.push_back({"float32", *in.session.compiledModel(), {}});
    for (const char* kind : {"fp16", "bf16", "int8"}) {
        if (cancelled(in)) return c;
        auto v = compileQuantized(in, kind);
        if (!v) {
            c.notApplicable = std::string(kind) + " could not be measured on this model (" + v.status().message() +
                              "); a model of float32 Conv/MatMul layers would show it.";
            return c;
        }
        variants.push_back(std::move(*v));
    }
    // float32 is the compiled model: its figure is the walkthrough's one measurement of it.
    auto float32 = compiledLatency(in);
    if (!float32) {
        if (float32.status().code() == ErrorCode::Cancelled) return c;
        c.notApplicable = "float32 does not run on the " + std::string(backendOf(in)) + " backend here (" +
                          float32.status().message() + ").";
        return c;
    }
    if (in.progress) in.progress("timing the other three precisions");
    std::vector<TimedSide> sides;
    for (size_t i = 1; i < variants.size(); ++i) {
        auto side = prepareSide(variants[i].compiled, in);
        if (!side) {
            c.notApplicable = variants[i].kind + " does not run on the " + std::string(backendOf(in)) + " backend here (" +
                              side.status().message() + ").";
            return c;
        }
        sides.push_back(std::move(*side));
    }
    std::vector<TimedSide*> pointers;
    for (TimedSide& s : sides) pointers.push_back(&s);
    const int kWarmup = in.warmupOr(1), kIterations = in.iterationsOr(5);
    if (Status ran = alternateRuns(pointers, kWarmup, kIterations, in.cancel); !ran) {
        if (ran.code() == ErrorCode::Cancelled) return c;
        c.notApplicable = "The model " + ran.message() + ", so the precisions cannot be timed.";
        return c;
    }
    TimedSide float32Side;  // its runs only: the executor that took them is gone
    float32Side.samplesMs = (*float32)->samplesMs;
    float32Side.threads = (*float32)->threads;
    sides.insert(sides.begin(), std::move(float32Side));
    pointers.clear();
    for (TimedSide& s : sides) pointers.push_back(&s);
    nlohmann::json rows = nlohmann::json::array();
    std::vector<ChartBar> latency;
    c.timingWarning = timingWarningOf(std::vector<const TimedSide*>(pointers.begin(), pointers.end()));
    const double float32Ms = computeStats(sides.front().samplesMs).median;
    for (size_t i = 0; i < variants.size(); ++i) {
        const Variant& v = variants[i];
        const double ms = computeStats(sides[i].samplesMs).median;
        nlohmann::json row{{"precision", v.kind},
                           {"weight_bytes", summarizeModel(v.compiled).parameterBytes},
                           {"median_ms", ms},
                           {"vs_float32", ms > 0 ? float32Ms / ms : 0.0}};
        if (i > 0) {
            const nlohmann::json report = quantizeReportJson(v.report);
            const nlohmann::json& error = report.contains("held_back_set") ? report["held_back_set"] : report["calibration_set"];
            row["cosine"] = error["cosine"];
            row["max_abs"] = error["max_abs"];
            if (error.contains("top1_agreement")) row["top1_agreement"] = error["top1_agreement"];
            row["measured_on"] = report.contains("held_back_set") ? "held-back samples" : "every sample";
        }
        rows.push_back(std::move(row));
        latency.push_back({v.kind, ms});
    }
    c.figures["precisions"] = rows;
    nlohmann::json sensitive = nlohmann::json::array();
    const QuantizeReport& int8 = variants.back().report;
    for (size_t i = 0; i < int8.sensitivity.size() && i < 8; ++i) {
        const LayerSensitivity& l = int8.sensitivity[i];
        sensitive.push_back({{"node", l.node},
                             {"op", l.opType},
                             {"cosine", l.error.cosine},
                             {"one_minus_cosine", 1.0 - l.error.cosine},  // the ranking, readable
                             {"max_abs", l.error.maxAbs}});
    }
    c.figures["int8_most_sensitive_layers"] = sensitive;
    c.figures["int8_layers_measured"] = int8.sensitivity.size();
    c.figures["data"] = {{"source", int8.dataSource}, {"calibrator", "minmax"}};
    if (in.calibrationDir.empty()) {
        const int samples = in.calibrationSamples > 0 ? in.calibrationSamples : kQuantizeSamples;
        c.figures["data"]["samples"] = samples;
        c.figures["data"]["note"] = "accuracy is measured on the " + std::string(samples >= 4 ? "quarter held back" : "samples") +
                                    " of " + std::to_string(samples) +
                                    " generated inputs: a top-1 agreement of 1 says each of those agreed, not that the "
                                    "model's accuracy is unchanged; give real inputs (walkthrough --calibration DIR) or "
                                    "more of them (--calibration-samples N) for a figure that means more";
    }
    c.figures["timing"] = {{"backend", backendOf(in)},
                           {"threads", sides.front().threads},
                           {"float32", (*float32)->method},
                           {"other_precisions", std::to_string(kIterations) + " runs after " + std::to_string(kWarmup) +
                                                    " warm-up, the three alternating"}};
    c.charts.push_back({"Median latency per iteration by precision (" + std::string(backendOf(in)) + " backend, measured)",
                        barChartSvg(latency, "ms")});
    return c;
}

namespace {

struct Partition {
    std::string kind;  // "tensor" or "pipeline"
    int devices = 0;
    ParallelReport report;
    std::map<std::string, double> usByLink;  // simulated time per interconnect preset
    std::vector<double> busyUs;              // per device, compute only
    std::vector<double> activationBytes;     // per device: the outputs its nodes write
    std::map<std::string, int> rejected;     // the partitioning pass's rejections, by reason
    nlohmann::json microbatchSweep;          // pipeline only: 1, 2, 4, 8 micro-batches on NVLink
};

Result<Partition> partitionAndSimulate(const WalkthroughInput& in, bool pipeline, int devices) {
    const Model& model = *in.session.model();
    PipelineSpec spec = in.session.pipeline();
    spec.precision = Precision::Float32;
    (pipeline ? spec.pipelineParallel : spec.tensorParallel) = devices;
    const std::string kind = pipeline ? "pipeline" : "tensor";
    if (in.progress) in.progress("partitioning for " + kind + " parallel " + std::to_string(devices));
    auto result = Session::compileWith(model, spec);
    if (!result) return result.status();
    ParallelArgs args;
    (pipeline ? args.pp : args.tp) = devices;
    auto report = measureParallel(args, in.inputs, model, *result);
    if (!report) return report.status();
    Partition p{kind, devices, std::move(*report), {}, std::vector<double>(size_t(devices), 0.0),
                std::vector<double>(size_t(devices), 0.0), {}, nlohmann::json::array()};
    for (const PassReport& pass : result->trace.passes)
        if (pass.name == "tensor-parallel" || pass.name == "pipeline-parallel")
            for (const Rejection& r : pass.rejections) ++p.rejected[r.pattern + ": " + r.reason];
    const Graph& g = *result->model.graph;
    for (const char* link : {"nvlink4", "pcie5", "ndr"}) {
        auto sim = simulateDevices(g, PartitionShape{devices, pipeline}, link, args.microbatches);
        if (!sim) return sim.status();
        p.usByLink[link] = sim->run.totalSeconds * 1e6;
        if (std::string(link) == "nvlink4")
            for (const SimulatedEvent& e : sim->run.events)
                if (e.kind == "compute" && e.device >= 0 && e.device < devices) p.busyUs[size_t(e.device)] += e.duration * 1e6;
    }
    if (pipeline) {
        // Micro-batches fill the pipeline: the same stages at 1, 2, 4 and 8 on the fast link.
        p.microbatchSweep = nlohmann::json::array();
        for (int m : {1, 2, 4, 8}) {
            auto sim = simulateDevices(g, PartitionShape{devices, true}, "nvlink4", m);
            if (!sim) return sim.status();
            p.microbatchSweep.push_back({{"microbatches", m},
                                         {"simulated_us", sim->run.totalSeconds * 1e6},
                                         {"bubble_fraction", sim->run.bubbleFraction},
                                         {"speedup", sim->run.speedup()}});
        }
    }
    const DimBindings batchOne = bindAllSymbols(g, 1);  // as the compiler plans
    for (NodeId id : g.order()) {
        const int d = deviceOfNode(g.node(id));
        for (ValueId out : g.node(id).outputs) {
            if (!out.valid()) continue;
            auto size = valueBytes(g.value(out), batchOne, 1);
            const double bytes = size ? double(*size) : 0.0;
            if (d >= 0 && d < devices) p.activationBytes[size_t(d)] += bytes;
            else
                for (double& b : p.activationBytes) b += bytes;  // replicated: every device writes it
        }
    }
    return p;
}

double speedup(const Partition& p, const char* link) {
    const double single = p.report.simulation["single_device_us"];
    return p.usByLink.at(link) > 0 ? single / p.usByLink.at(link) : 0.0;
}

// One sentence the four-device figures support, on the fastest link and the slowest.
std::string ruleOfThumb(const Partition& tp, const Partition& pp) {
    const double tpFast = speedup(tp, "nvlink4"), ppFast = speedup(pp, "nvlink4");
    const double tpSlow = speedup(tp, "ndr"), ppSlow = speedup(pp, "ndr");
    auto x = [](double ratio) { return figureValueText("speedup", ratio); };  // three significant digits: 0.00432x, not 0.00x
    const std::string figures = " (4 devices, simulated: TP " + x(tpFast) + " and PP " + x(ppFast) + " over NVLink, " +
                                x(tpSlow) + " and " + x(ppSlow) + " over NDR)";
    if (tp.report.allReduces == 0)
        return "Tensor parallelism found no linear-layer pairs to split in this model, so only pipeline parallelism "
               "applies" + figures + "; at one micro-batch its stages run one after another, so it buys memory per "
               "device, not speed.";
    if (std::max(tpFast, ppFast) < 1)
        return "This model is too small to gain from splitting" + figures +
               ": communication costs more than the compute it spreads. Parallelism pays when a layer's work "
               "outweighs its AllReduce (wider layers, longer sequences, larger batches) or when the weights do "
               "not fit on one device.";
    if (tpFast > ppFast && ppSlow > tpSlow)
        return "Tensor parallelism wins on the fast link and pipeline parallelism on the slow one" + figures +
               ": keep tensor parallelism inside a server's NVLink domain, and cut the pipeline across servers.";
    if (tpFast > ppFast)
        return "Tensor parallelism is faster here on every link" + figures +
               ": at one micro-batch pipeline stages run one after another, so pipelining buys memory per device, "
               "not speed, until micro-batches fill it.";
    return "Pipeline parallelism is faster here on every link" + figures +
           ": this model's AllReduces cost more than the work each device saves; tensor parallelism needs wider layers.";
}

}  // namespace

// Chapter 9: TP and PP at 2 and 4 devices, simulated on three interconnects.
WalkthroughChapter parallelChapter(const WalkthroughInput& in) {
    WalkthroughChapter c;
    c.paragraphs = {
        "Tensor parallelism splits each layer: a linear-layer pair is cut by columns and then by "
        "rows (attention by heads, where the pass can follow the heads through the model's "
        "reshapes; each partition lists what it would not split, and why), every device holds a "
        "slice of every layer's weights and "
        "computes its slice of every activation, and the devices meet in an AllReduce after each "
        "pair. Its communication is frequent and sits on the critical path, so it wants the "
        "fastest link (NVLink inside one server).",
        "Pipeline parallelism splits the model by depth: each device holds whole consecutive "
        "layers (a stage) and sends its activations on to the next with point-to-point Send/Recv "
        "at each cut, which little bandwidth suffices for. Its cost is idle time: with one batch, "
        "stage two waits for stage one (the bubble); micro-batches fill the pipeline, and a "
        "schedule such as 1F1B bounds how many are in flight.",
        "Fusescope partitions the graph with its passes and runs every shard on this one device to "
        "check that the partitioned program still computes the same outputs; the multi-device "
        "times are simulated (each node's cost-model time on a nominal H100, collectives and sends "
        "from an alpha-beta model of each interconnect): nothing multi-device here was measured.",
        "What the simulation leaves out: kernel launches (a few microseconds each without CUDA "
        "Graphs), the host's own work and any framework around it. It is a model of the "
        "arithmetic and the communication, not a prediction of wall time: a small model's real "
        "run is dominated by launches and can take ten or more times the simulated time (compare "
        "chapter 10's measured figure), while a large one comes closer."};
    std::vector<Partition> parts;
    for (bool pipeline : {false, true})
        for (int devices : {2, 4}) {
            if (cancelled(in)) return c;
            auto p = partitionAndSimulate(in, pipeline, devices);
            if (!p) {
                c.notApplicable = std::string(pipeline ? "Pipeline" : "Tensor") + " parallelism at " +
                                  std::to_string(devices) + " devices could not be shown (" + p.status().message() +
                                  "); a transformer encoder shows both.";
                return c;
            }
            parts.push_back(std::move(*p));
        }
    nlohmann::json rows = nlohmann::json::array();
    std::vector<ChartBar> bars;
    if (!parts.empty())  // the bar every partition is compared against
        bars.push_back({"one device (no split)", parts.front().report.simulation["single_device_us"].get<double>()});
    for (const Partition& p : parts) {
        const ParallelReport& r = p.report;
        const auto& sim = r.simulation;
        double busyMax = 0, busyMean = 0;
        for (double b : p.busyUs) busyMax = std::max(busyMax, b), busyMean += b / double(p.busyUs.size());
        nlohmann::json row{{"name", std::string(p.kind == "tensor" ? "TP " : "PP ") + std::to_string(p.devices)},  // as the chart labels it
                           {"partition", p.kind + " parallel"},
                           {"devices", p.devices},
                           {"all_reduces", r.allReduces},
                           {"bytes_per_all_reduce", r.allReduces ? r.allReduceBytes / r.allReduces : 0.0},
                           {"communication_bytes_per_device", sim["communication_bytes"]},
                           {"stage_balance", busyMax > 0 ? busyMean / busyMax : 0.0},
                           {"bubble_fraction", sim["bubble_fraction"]},
                           {"weight_bytes_per_device", sim["weight_bytes_per_device"]},
                           {"activation_bytes_per_device", p.activationBytes},
                           {"single_device_us", sim["single_device_us"]},
                           {"simulated_us", p.usByLink},
                           {"single_device_mean_relative_difference", r.meanRelativeDifference}};
        // What the pass would not split on this model, and why (attention that stays whole, say):
        // the text above describes the method, these say what happened here.
        nlohmann::json rejected = nlohmann::json::array();
        for (const auto& [reason, count] : p.rejected) rejected.push_back({{"reason", reason}, {"count", count}});
        if (!rejected.empty()) row["rejected"] = std::move(rejected);
        if (!r.notSplit.empty()) row["not_split"] = r.notSplit;
        rows.push_back(std::move(row));
        if (p.kind == "pipeline" && p.devices == 4) c.figures["pipeline_4_microbatches"] = p.microbatchSweep;
        for (const auto& [link, us] : p.usByLink)
            bars.push_back({(p.kind == "tensor" ? "TP " : "PP ") + std::to_string(p.devices) + ", " + link, us});
    }
    c.figures["partitions"] = rows;
    c.figures["simulated"] = {{"device", SimulatedDevice{}.name}, {"microbatches", 1}, {"schedule", "1f1b"},
                              {"interconnects", {"nvlink4", "pcie5", "ndr"}}};
    c.figures["rule_of_thumb"] = ruleOfThumb(parts[1], parts[3]);
    c.charts.push_back({"Simulated time per run by partition and interconnect (µs; nothing here was measured)",
                        barChartSvg(bars, "µs")});
    return c;
}

}  // namespace fsc
