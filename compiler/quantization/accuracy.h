#pragma once
// How far a reduced-precision graph's outputs are from the float32 graph's on the same
// inputs: measured, never assumed. Also the per-layer sensitivity of INT8: the error each
// quantizable layer adds when it alone is quantized.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "compiler/quantization/calibration_data.h"
#include "compiler/quantization/int8_options.h"
#include "core/graph.h"

namespace fsc {

struct OutputError {
    int samples = 0;
    double maxAbs = 0;       // largest |reference - candidate| over every output element
    double meanRelative = 0; // sum |reference - candidate| / sum |reference|
    double cosine = 1;       // the lowest cosine similarity of one sample's outputs
    int top1Agree = 0;       // rows of the first output, if [batch, classes], with the same argmax
    int top1Rows = 0;        // 0 when the first output does not look like class scores
};

// Runs both models on every sample and compares all their outputs.
// `threads`: CPU threads of both (0: automatic, ThreadPool::kAutomatic).
Result<OutputError> compareOutputs(const Model& reference, const Model& candidate, const CalibrationData& data,
                                   const std::atomic<bool>* cancel = nullptr, int threads = 0);

struct LayerSensitivity {
    std::string node;
    std::string opType;
    OutputError error;
};

// For every Conv/MatMul/Gemm `int8-quantization` would quantize in `model` (the graph just
// before that pass), the error against `model` when that layer alone is quantized, largest
// cosine loss first. `options.ranges` should hold the calibrated ranges already.
Result<std::vector<LayerSensitivity>> layerSensitivity(const Model& model, const Int8Options& options,
                                                       const CalibrationData& data,
                                                       const std::function<void(size_t, size_t)>& progress = {},
                                                       const std::atomic<bool>* cancel = nullptr);

}  // namespace fsc
