#pragma once
// How `int8-quantization` quantizes: the calibration inputs, the calibrator, weight and
// activation schemes, what stays in float, and ranges already computed (shared so that the
// sensitivity analysis does not calibrate again for every layer).
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/quantization/calibration_data.h"
#include "compiler/quantization/range_calibrator.h"
#include "core/graph.h"

namespace fsc {

using ActivationRanges = std::map<std::string, ValueRange>;  // value name -> range

struct Int8Options {
    std::shared_ptr<const CalibrationData> calibration;  // none: 8 generated samples
    CalibrationMethod method = CalibrationMethod::MinMax;
    double percentile = 99.99;
    bool perChannel = false;            // weights: one scale per output channel, else one per tensor
    // Weights in [-64, 64] (7 bits), as ONNX Runtime's reduce_range: coarser, but multiplied
    // as bytes without saturating on x86 CPUs without VNNI (gemm_int8_bytes.cpp), else widened.
    bool reduceRange = false;
    bool symmetricActivations = false;  // int8 with zero point 0, else asymmetric uint8
    std::vector<std::string> exclude;   // node name, op type or scope (globs allowed)
    std::optional<std::set<std::string>> only;  // quantize these node names alone
    std::shared_ptr<ActivationRanges> ranges;   // read, and filled with what is calibrated
    int threads = 0;  // CPU threads of the calibration runs (0: automatic, ThreadPool::kAutomatic)
};

// The pattern of `exclude` that keeps node `n` in float, or empty. A pattern matches the
// node's name, its op type, or its scope and everything under it.
std::string exclusionMatch(const Node& n, const std::vector<std::string>& exclude);

// Runs `graph` on every sample and observes the named float32 values. `cancel` stops it.
Result<ActivationRanges> calibrateRanges(const Graph& graph,
                                         const std::vector<std::pair<std::string, int64_t>>& opsets,
                                         const std::vector<ValueId>& values, const CalibrationData& data,
                                         CalibrationMethod method, double percentile,
                                         const std::atomic<bool>* cancel, int threads = 0);

}  // namespace fsc
