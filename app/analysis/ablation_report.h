#pragma once
// An ablation's figures for people and for programs: a text table (the CLI), JSON (schema
// fusescope.ablation/1), CSV (one row per variant) and a self-contained HTML page. Every
// figure comes from the AblationReport; none is computed twice.
#include <string>

#include <nlohmann/json.hpp>

#include "app/analysis/ablation.h"

namespace fsc {

nlohmann::json ablationJson(const AblationReport& report);
std::string ablationCsv(const AblationReport& report);
std::string ablationHtml(const AblationReport& report);
std::string ablationText(const AblationReport& report);

// "paid 12.3 ms (1.25x)", "no effect above noise", "same graph", "does not compile": the
// one-phrase verdict the table, the HTML and the GUI's pass list show.
std::string effectVerdict(const PassEffect& effect);

}  // namespace fsc
