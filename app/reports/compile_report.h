#pragma once
// Renderings of a compile trace: the CLI's --explain text, its --json summary (also the
// walkthrough's pass figures) and the trace.json change log with provenance.
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/pass_manager.h"

namespace fsc {

std::string explainTrace(const CompileTrace& trace, const std::string& pipelineName,
                         size_t maxChangesPerPass);
nlohmann::json compileSummaryJson(const CompileResult& result, const std::string& modelPath,
                                  const std::string& pipelineName);
nlohmann::json traceJson(const CompileResult& result, const std::string& modelPath,
                         const std::string& pipelineName);

}  // namespace fsc
