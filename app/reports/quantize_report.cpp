#include "app/reports/quantize_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "compiler/backends/cpu/gemm.h"

namespace fsc {
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
    plan.int8.reduceRange = a.reduceRange;
    plan.int8.symmetricActivations = a.symmetricActivations;
    plan.int8.exclude = a.exclude;
    plan.int8.ranges = std::make_shared<ActivationRanges>();
    plan.int8.threads = a.threads;
    spec.precision = Precision::Int8;
    spec.int8 = plan.int8;
    return plan;
}

Result<QuantizeReport> measureQuantization(const QuantizeArgs& a, const QuantizePlan& plan, const Model& float32,
                                           const CompileResult& result, const LayerProgress& progress) {
    QuantizeReport r;
    r.kind = a.kind;
    r.dataSource = plan.calibration->source;
    r.generatedData = plan.calibration->generated;
    auto onCalibration = compareOutputs(float32, result.model, *plan.calibration, nullptr, a.threads);
    if (!onCalibration) return withSizingHint(onCalibration.status(), plan.calibration->sizing).withContext("accuracy");
    r.calibrationError = *onCalibration;
    if (!plan.heldBack->samples.empty()) {
        auto onHeldBack = compareOutputs(float32, result.model, *plan.heldBack, nullptr, a.threads);
        if (!onHeldBack) return withSizingHint(onHeldBack.status(), plan.heldBack->sizing).withContext("accuracy");
        r.heldBackError = *onHeldBack;
    }
    // The byte kernel takes the weights of integer convolutions; a MatMul's are its other
    // operand, which that kernel does not take.
    auto integerConvolution = [&] {
        const Graph& g = *result.model.graph;
        const auto order = g.order();
        return std::any_of(order.begin(), order.end(), [&](NodeId id) {
            return g.node(id).opType == "ConvInteger" || g.node(id).opType == "QLinearConv";
        });
    };
    if (a.kind == "int8" && !a.reduceRange && cpu::sevenBitWeightsAreFaster() && integerConvolution())
        r.advice = "this CPU has no VNNI: 7-bit weights (--reduce-range) multiply in about 0.75x the time of "
                   "8-bit ones in its integer convolutions, a little less accurately";
    if (a.kind != "int8" || !a.sensitivity) return r;
    // Sensitivity on the graph just before int8-quantization, with the ranges it fitted.
    const auto& passes = result.trace.passes;
    auto at = std::find_if(passes.begin(), passes.end(), [](const PassReport& p) { return p.name == "int8-quantization"; });
    if (at == passes.end()) return r;
    Model before = result.model;
    before.graph = at == passes.begin() ? result.trace.imported->materialize() : std::prev(at)->snapshot->materialize();
    const CalibrationData& data = plan.heldBack->samples.empty() ? *plan.calibration : *plan.heldBack;
    auto table = layerSensitivity(before, plan.int8, data, [&progress](size_t i, size_t n) {
        if (progress) progress(i, n);
    });
    if (!table) return table.status().withContext("sensitivity");
    r.sensitivity = std::move(*table);
    return r;
}

std::string quantizeReportText(const QuantizeReport& r, size_t maxLayers) {
    std::ostringstream s;
    s << "\naccuracy of " << r.kind << " against the float32 model, measured on " << r.dataSource << ":\n";
    s << (r.kind == "int8" ? "  calibration set: " : "  every sample:    ") << errorLine(r.calibrationError) << "\n";
    if (r.heldBackError.samples) s << "  held-back set:   " << errorLine(r.heldBackError) << "\n";
    if (!r.advice.empty()) s << "  note: " << r.advice << "\n";
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
    if (!r.advice.empty()) j["advice"] = r.advice;
    if (!r.sensitivity.empty()) {
        nlohmann::json layers = nlohmann::json::array();
        for (const LayerSensitivity& l : r.sensitivity)
            layers.push_back({{"node", l.node}, {"op", l.opType}, {"error", errorJson(l.error)}});
        j["sensitivity"] = layers;
    }
    return j;
}

}  // namespace fsc
