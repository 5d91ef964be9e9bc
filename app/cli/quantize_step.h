#pragma once
// `compile --quantize`: the precision passes put into the pipeline, and after compiling,
// the measured accuracy against the float32 model (and for INT8 the per-layer
// sensitivity), as text or JSON.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "compiler/quantization/accuracy.h"
#include "compiler/quantization/int8_options.h"

namespace fsc::cli {

struct QuantizeArgs {
    std::string kind;  // fp16, bf16, int8; empty: none
    std::optional<std::set<std::string>> keepFp32;
    std::string calibrationDir;
    std::string calibrator = "minmax";
    bool perChannel = false;
    bool symmetricActivations = false;
    std::vector<std::string> exclude;
    int samples = 16;  // generated when no --calibration
    bool sensitivity = true;
};

// Consumes argv[i] (and its value) when it is a quantization option: 1 taken, 0 not
// ours, -1 a usage error written to `error`.
// The "precision" option group of compile; checkQuantizeArgs() says what does not go
// together (empty when all is well).
void addQuantizeOptions(CLI::App& command, QuantizeArgs& args);
std::string checkQuantizeArgs(const QuantizeArgs& args);

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
};

Result<QuantizeReport> measureQuantization(const QuantizeArgs& a, const QuantizePlan& plan, const Model& float32,
                                           const CompileResult& result);
std::string quantizeReportText(const QuantizeReport& r, size_t maxLayers);
nlohmann::json quantizeReportJson(const QuantizeReport& r);

}  // namespace fsc::cli
