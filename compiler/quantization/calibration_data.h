#pragma once
// The inputs INT8 calibration runs the model on: sets read from a folder, or generated when
// the user gives none (and then said so wherever a figure computed from them is shown).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "compiler/runtime/input_sizing.h"
#include "compiler/runtime/rt_tensor.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct CalibrationData {
    std::vector<std::string> inputNames;         // the graph's fed inputs, in order
    std::vector<std::vector<RtTensor>> samples;  // one run's feeds per sample, in that order
    std::string source;                          // where they came from, for every report
    bool generated = false;
    InputSizing sizing;  // generated data: the sizes chosen for open dims (input_sizing.h)
};

// Reads DIR as one of:
//   DIR/<set>/input_K.pb or input_K.npy  one set per subfolder (ONNX's test_data_set_N layout)
//   DIR/input_K.pb or input_K.npy        a single set
//   DIR/*.npy                            one sample per file, for a model with one input
// Errors name the file and what does not fit (missing input, dtype, rank).
Result<CalibrationData> loadCalibrationData(const Graph& graph, const std::filesystem::path& dir);

// `count` samples: 4-D float inputs with 3 channels get smooth synthetic images normalised
// with ImageNet's mean and std; other float inputs standard normal values; integers small
// indices in [0, 10) (or below the rows of the table they index: generatedIntegerBound). Open dims take `dims` by name, else sizeInputs' typical sizes.
CalibrationData generateCalibrationData(const Graph& graph, int count, uint64_t seed,
                                        const std::map<std::string, int64_t>& dims = {});

// What the user gave for the inputs a check runs on (compile's accuracy and partition
// checks): sizes for open dims, a folder of sets, named files.
struct InputChoice {
    std::map<std::string, int64_t> dims;                     // --dim NAME=VALUE
    std::filesystem::path dir;                               // --input-dir: loadCalibrationData's layouts
    std::vector<std::pair<std::string, std::string>> files;  // --input NAME=FILE
    bool any() const { return !dir.empty() || !files.empty(); }
};

// The folder's sets when one is given; otherwise `count` generated samples, with the named
// files replacing the generated tensor of their input in every sample.
Result<CalibrationData> checkInputs(const Graph& graph, const InputChoice& choice, int count, uint64_t seed);

// The last quarter of the samples (at least one, when there are two or more) held back to
// measure accuracy on data the ranges were not fitted to.
struct CalibrationSplit {
    CalibrationData calibration;
    CalibrationData heldBack;
};
CalibrationSplit holdBack(CalibrationData data);

// The graph inputs a run feeds (those not backed by an initializer), in order.
std::vector<ValueId> fedInputs(const Graph& graph);

}  // namespace fsc
