#pragma once
// Named pipelines O0..O3 and custom pass lists. The steps are declared in pipelines.cpp,
// one line per step with the reason it is there.
#include <string>
#include <vector>

#include "core/status.h"

namespace fsc {

struct PipelineStep {
    int level;          // first level that runs it (1 = O1, ...)
    const char* pass;   // registered pass name
    const char* why;
};

const std::vector<PipelineStep>& pipelineSteps();

// Whether `pass` belongs after the clean-up and conv-bn folding: the other fusions (which
// would hide plain Conv/MatMul/Gemm), the memory passes, and the float16/bfloat16 passes.
// INT8 quantization and tensor parallelism go before the first pass for which this holds.
bool runsAfterCleanUp(const std::string& pass);

// "O0".."O3" -> pass names; an unknown level is an InvalidArgument error.
Result<std::vector<std::string>> pipelinePasses(const std::string& level);

// Resolves the CLI's choices: a named pipeline, or an explicit comma-separated list, minus
// the disabled passes. Every name must be registered.
Result<std::vector<std::string>> resolvePipeline(const std::string& level, const std::string& passList,
                                                 const std::vector<std::string>& disabled);

}  // namespace fsc
