#pragma once
// Parallel partitioning as compile --tp/--pp and the walkthrough measure it: what the
// partitioning passes communicate, a check that the partitioned program still computes the
// unpartitioned outputs on this one device, and the simulated multi-device timeline.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/pass_manager.h"
#include "compiler/quantization/calibration_data.h"

namespace fsc {

struct ParallelArgs {
    int tp = 1;
    int pp = 1;
    int microbatches = 1;
    std::string schedule = "1f1b";
    std::string interconnect = "nvlink4";
    int threads = 0;  // CPU threads of the partitioned-against-unpartitioned check (0: automatic)
    bool any() const { return tp > 1 || pp > 1; }
};

struct ParallelReport {
    int allReduces = 0, allGathers = 0;
    double allReduceBytes = 0, allGatherBytes = 0;
    double meanRelativeDifference = 0;  // partitioned vs unpartitioned, on one device
    int samples = 0;
    // Tensor parallelism that split nothing: why, from the pass's rejections (empty otherwise).
    std::string notSplit;
    nlohmann::json simulation;    // the simulated timeline's summary
    std::string simulationText;
};

Result<ParallelReport> measureParallel(const ParallelArgs& a, const InputChoice& input, const Model& original,
                                       const CompileResult& result);
std::string parallelReportText(const ParallelArgs& a, const ParallelReport& r);
nlohmann::json parallelReportJson(const ParallelArgs& a, const ParallelReport& r);

}  // namespace fsc
