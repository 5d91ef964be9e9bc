#pragma once
// `compile --tp N` / `--pp N`: the partitioning passes put into the pipeline, and after
// compiling, what they communicate, a check that the partitioned program still computes
// the unpartitioned outputs on this one device, and the simulated multi-device timeline.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "compiler/pass_manager.h"
#include "compiler/quantization/calibration_data.h"

namespace fsc::cli {

struct ParallelArgs {
    int tp = 1;
    int pp = 1;
    int microbatches = 1;
    std::string schedule = "1f1b";
    std::string interconnect = "nvlink4";
    bool any() const { return tp > 1 || pp > 1; }
};

// 1 taken, 0 not ours, -1 a usage error in `error`.
// The "parallel partitioning" option group of compile.
void addParallelOptions(CLI::App& command, ParallelArgs& args);

struct ParallelReport {
    int allReduces = 0, allGathers = 0;
    double allReduceBytes = 0, allGatherBytes = 0;
    double meanRelativeDifference = 0;  // partitioned vs unpartitioned, on one device
    int samples = 0;
    nlohmann::json simulation;    // the simulated timeline's summary
    std::string simulationText;
};

Result<ParallelReport> measureParallel(const ParallelArgs& a, const InputChoice& input, const Model& original,
                                       const CompileResult& result);
std::string parallelReportText(const ParallelArgs& a, const ParallelReport& r);
nlohmann::json parallelReportJson(const ParallelArgs& a, const ParallelReport& r);

}  // namespace fsc::cli
