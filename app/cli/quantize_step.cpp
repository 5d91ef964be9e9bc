#include "app/cli/quantize_step.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli/cli_app.h"
#include "compiler/passes/passes.h"
#include "compiler/pipelines.h"
#include "core/comma_list.h"

namespace fsc::cli {
namespace {

std::string errorLine(const OutputError& e) {
    std::ostringstream s;
    s << std::setprecision(4) << "max abs " << e.maxAbs << ", mean rel " << e.meanRelative << ", cosine "
      << std::setprecision(8) << e.cosine;
    if (e.top1Rows) s << ", top-1 agreement " << e.top1Agree << "/" << e.top1Rows;
    s << " (" << e.samples << " samples)";
    return s.str();
}

nlohmann::json errorJson(const OutputError& e) {
    nlohmann::json j{{"samples", e.samples}, {"max_abs", e.maxAbs}, {"mean_relative", e.meanRelative}, {"cosine", e.cosine}};
    if (e.top1Rows) j["top1_agreement"] = double(e.top1Agree) / e.top1Rows;
    return j;
}

}  // namespace

void addQuantizeOptions(CLI::App& command, QuantizeArgs& a) {
    const std::string group = "precision (each prints its error against the float32 model, measured)";
    command.add_option("--quantize", a.kind,
                       "fp16|bf16: store float32 work in float16 / bfloat16 after the fusions\n"
                       "(before the memory passes); Casts only at region boundaries.\n"
                       "int8: post-training INT8 after the clean-up and conv-bn folding: QDQ\n"
                       "form (int8-quantization), then integer ops (qdq-folding)")
        ->type_name("fp16|bf16|int8")
        ->check(oneOf({"fp16", "bf16", "int8"}, "fp16, bf16 or int8"))
        ->group(group);
    command
        .add_option_function<std::string>(
            "--keep-fp32",
            [&a](const std::string& v) {
                a.keepFp32.emplace();
                if (v != "none")
                    for (std::string& op : splitCommaList(v)) a.keepFp32->insert(std::move(op));
            },
            "ops fp16/bf16 leave in float32 (default: norms, Softmax, LogSoftmax,\n"
            "reductions, CumSum; 'none' narrows everything)")
        ->type_name("Op,Op")
        ->group(group);
    command.add_option("--calibration", a.calibrationDir,
                       "inputs: DIR/<set>/input_K.pb|.npy, DIR/input_K.pb, or DIR/*.npy for a\n"
                       "one-input model; a quarter is held back to measure accuracy (default:\n"
                       "generated samples, said so in every output)")
        ->type_name("DIR")
        ->group(group);
    command.add_option("--calibration-samples", a.samples, "how many to generate without --calibration (default 16)")
        ->type_name("N")
        ->check(integerIn(1, 100000, "a number >= 1"))
        ->group(group);
    command.add_option("--calibrator", a.calibrator, "minmax (default), percentile (99.99%) or entropy (KL)")
        ->type_name("NAME")
        ->check(CLI::Validator(
            [](std::string& v) {
                return parseCalibrationMethod(v) ? std::string() : std::string("needs minmax, percentile or entropy");
            },
            ""))
        ->group(group);
    command.add_flag("--per-channel", a.perChannel, "one weight scale per output channel (default: per tensor)")
        ->group(group);
    command.add_flag("--symmetric-activations", a.symmetricActivations,
                     "int8 activations with zero point 0 (default: asymmetric uint8)")
        ->group(group);
    command
        .add_option_function<std::vector<std::string>>(
            "--exclude",
            [&a](const std::vector<std::string>& all) {
                for (const std::string& v : all)
                    for (std::string& p : splitCommaList(v)) a.exclude.push_back(std::move(p));
            },
            "keep nodes in float by name, op type or scope (globs; repeatable)")
        ->type_name("PATTERN")
        ->allow_extra_args(false)
        ->group(group);
    command.add_flag("--no-sensitivity", [&a](int64_t) { a.sensitivity = false; },
                     "skip the per-layer sensitivity table (one run per layer)")
        ->group(group);
}

std::string checkQuantizeArgs(const QuantizeArgs& q) {
    if (q.keepFp32 && q.kind != "fp16" && q.kind != "bf16") return "--keep-fp32 goes with --quantize fp16|bf16";
    if (!q.calibrationDir.empty() && q.kind.empty()) return "--calibration goes with --quantize";
    const bool int8Options =
        q.calibrator != "minmax" || q.perChannel || q.symmetricActivations || !q.exclude.empty() || !q.sensitivity;
    if (int8Options && q.kind != "int8") return "calibration options go with --quantize int8";
    return {};
}

Result<QuantizePlan> planQuantization(const QuantizeArgs& a, const InputChoice& input, const Model& model,
                                      PipelineSpec& spec) {
    QuantizePlan plan;
    CalibrationData data;
    if (!a.calibrationDir.empty()) {
        auto loaded = loadCalibrationData(*model.graph, a.calibrationDir);
        if (!loaded) return loaded.status();
        data = std::move(*loaded);
    } else {
        // Without --calibration the given inputs (or generated ones of the given sizes) serve.
        auto chosen = checkInputs(*model.graph, input, a.samples, 1);
        if (!chosen) return chosen.status();
        data = std::move(*chosen);
    }
    if (a.kind != "int8") {  // nothing is fitted to the data: every sample measures
        plan.calibration = std::make_shared<CalibrationData>(std::move(data));
        plan.heldBack = std::make_shared<CalibrationData>();
    } else {
        CalibrationSplit split = holdBack(std::move(data));
        plan.calibration = std::make_shared<CalibrationData>(std::move(split.calibration));
        plan.heldBack = std::make_shared<CalibrationData>(std::move(split.heldBack));
    }

    if (a.kind == "fp16" || a.kind == "bf16") {
        spec.precision = a.kind == "fp16" ? Precision::Float16 : Precision::BFloat16;
        spec.keepInFloat32 = a.keepFp32;
        return plan;
    }
    plan.int8.calibration = plan.calibration;
    plan.int8.method = *parseCalibrationMethod(a.calibrator);
    plan.int8.perChannel = a.perChannel;
    plan.int8.symmetricActivations = a.symmetricActivations;
    plan.int8.exclude = a.exclude;
    plan.int8.ranges = std::make_shared<ActivationRanges>();
    spec.precision = Precision::Int8;
    spec.int8 = plan.int8;
    return plan;
}

Result<QuantizeReport> measureQuantization(const QuantizeArgs& a, const QuantizePlan& plan, const Model& float32,
                                           const CompileResult& result) {
    QuantizeReport r;
    r.kind = a.kind;
    r.dataSource = plan.calibration->source;
    r.generatedData = plan.calibration->generated;
    auto onCalibration = compareOutputs(float32, result.model, *plan.calibration);
    if (!onCalibration) return withSizingHint(onCalibration.status(), plan.calibration->sizing).withContext("accuracy");
    r.calibrationError = *onCalibration;
    if (!plan.heldBack->samples.empty()) {
        auto onHeldBack = compareOutputs(float32, result.model, *plan.heldBack);
        if (!onHeldBack) return withSizingHint(onHeldBack.status(), plan.heldBack->sizing).withContext("accuracy");
        r.heldBackError = *onHeldBack;
    }
    if (a.kind != "int8" || !a.sensitivity) return r;
    // Sensitivity on the graph just before int8-quantization, with the ranges it fitted.
    const auto& passes = result.trace.passes;
    auto at = std::find_if(passes.begin(), passes.end(), [](const PassReport& p) { return p.name == "int8-quantization"; });
    if (at == passes.end()) return r;
    Model before = result.model;
    before.graph = at == passes.begin() ? result.trace.imported->materialize() : std::prev(at)->snapshot->materialize();
    const CalibrationData& data = plan.heldBack->samples.empty() ? *plan.calibration : *plan.heldBack;
    auto table = layerSensitivity(before, plan.int8, data, [](size_t i, size_t n) {
        std::cerr << "\rsensitivity: layer " << i + 1 << "/" << n << std::flush;
    });
    std::cerr << "\n";
    if (!table) return table.status().withContext("sensitivity");
    r.sensitivity = std::move(*table);
    return r;
}

std::string quantizeReportText(const QuantizeReport& r, size_t maxLayers) {
    std::ostringstream s;
    s << "\naccuracy of " << r.kind << " against the float32 model, measured on " << r.dataSource << ":\n";
    s << (r.kind == "int8" ? "  calibration set: " : "  every sample:    ") << errorLine(r.calibrationError) << "\n";
    if (r.heldBackError.samples) s << "  held-back set:   " << errorLine(r.heldBackError) << "\n";
    if (!r.sensitivity.empty()) {
        s << "\nper-layer sensitivity (that layer alone in INT8, held-back set; worst first):\n";
        s << "  " << std::left << std::setw(48) << "node" << std::setw(8) << "op" << std::right << std::setw(14)
          << "cosine" << std::setw(12) << "mean rel" << std::setw(12) << "max abs\n";
        for (size_t i = 0; i < r.sensitivity.size() && i < maxLayers; ++i) {
            const LayerSensitivity& l = r.sensitivity[i];
            s << "  " << std::left << std::setw(48) << l.node.substr(0, 47) << std::setw(8) << l.opType << std::right
              << std::fixed << std::setprecision(8) << std::setw(14) << l.error.cosine << std::defaultfloat
              << std::setprecision(3) << std::setw(12) << l.error.meanRelative << std::setw(12) << l.error.maxAbs << "\n";
        }
        if (r.sensitivity.size() > maxLayers)
            s << "  ... " << r.sensitivity.size() - maxLayers << " more (--json lists every layer)\n";
        s << "  keep a layer in float with --exclude NAME\n";
    }
    return s.str();
}

nlohmann::json quantizeReportJson(const QuantizeReport& r) {
    nlohmann::json j{{"kind", r.kind},
                     {"data", r.dataSource},
                     {"generated_data", r.generatedData},
                     {"calibration_set", errorJson(r.calibrationError)}};
    if (r.heldBackError.samples) j["held_back_set"] = errorJson(r.heldBackError);
    if (!r.sensitivity.empty()) {
        nlohmann::json layers = nlohmann::json::array();
        for (const LayerSensitivity& l : r.sensitivity)
            layers.push_back({{"node", l.node}, {"op", l.opType}, {"error", errorJson(l.error)}});
        j["sensitivity"] = layers;
    }
    return j;
}

}  // namespace fsc::cli
