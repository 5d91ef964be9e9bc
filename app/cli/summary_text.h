#pragma once
// The human-readable form of `fusescope-cli inspect`.
#include <string>

#include "core/model_summary.h"

namespace fsc::cli {

std::string summaryToText(const ModelSummary& summary, const std::string& file);

}  // namespace fsc::cli
