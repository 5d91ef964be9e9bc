#pragma once
// The JSON form of `fusescope-cli inspect --json`. Its layout is a published interface
// (README, "inspect JSON"): add keys, never rename or remove them.
#include <nlohmann/json.hpp>

#include "core/model_summary.h"

namespace fsc {

inline constexpr const char* kInspectSchema = "fusescope.inspect/1";

nlohmann::json summaryToJson(const ModelSummary& summary, const std::string& file);

}  // namespace fsc
