#pragma once
// The human-readable form of `fusescope-cli inspect`.
#include <string>

#include "core/model_summary.h"

namespace fsc::cli {

std::string summaryToText(const ModelSummary& summary, const std::string& file);

// "102.2 MB", "812 B": decimal units, as file managers show sizes.
std::string humanBytes(int64_t bytes);

}  // namespace fsc::cli
