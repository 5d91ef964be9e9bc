#pragma once
// Quantization as compile --quantize and the walkthrough measure it: the precision put into
// a pipeline spec (with its calibration data), and after compiling, the accuracy against
// the float32 model (and for INT8 the per-layer sensitivity), as text or JSON.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "compiler/quantization/accuracy.h"
#include "compiler/quantization/int8_options.h"

namespace fsc {

struct QuantizeArgs {
    std::string kind;  // fp16, bf16, int8; empty: none
    std::optional<std::set<std::string>> keepFp32;
    std::string calibrationDir;
    std::string calibrator = "minmax";
    bool perChannel = false;
    bool reduceRange = false;
    bool symmetricActivations = false;
    std::vector<std::string> exclude;
    int samples = 16;  // generated when no --calibration
    bool sensitivity = true;
    int threads = 0;  // CPU threads of calibration and the accuracy runs (0: automatic)
};

struct QuantizePlan {
    std::shared_ptr<CalibrationData> calibration;  // the ranges are fitted to these
    std::shared_ptr<CalibrationData> heldBack;     // accuracy is also measured on these
    Int8Options int8;
};

// Loads or generates the data and sets the precision of `spec` (buildPipeline places the
// passes).
Result<QuantizePlan> planQuantization(const QuantizeArgs& a, const InputChoice& input, const Model& model,
                                      PipelineSpec& spec);

struct QuantizeReport {
    std::string kind, dataSource;
    bool generatedData = false;
    OutputError calibrationError, heldBackError;
    std::vector<LayerSensitivity> sensitivity;
    std::string advice;  // what would run faster on this machine, if anything
};

// `progress(layer, layers)` is called as the sensitivity table is measured.
using LayerProgress = std::function<void(size_t, size_t)>;
Result<QuantizeReport> measureQuantization(const QuantizeArgs& a, const QuantizePlan& plan, const Model& float32,
                                           const CompileResult& result, const LayerProgress& progress = {});
std::string quantizeReportText(const QuantizeReport& r, size_t maxLayers);
nlohmann::json quantizeReportJson(const QuantizeReport& r);

}  // namespace fsc
