#pragma once
// The walkthrough's figures as a reader sees them: schema keys as words ("median_ms" ->
// "Median", its value "94.2 µs"), sizes through bytesText, shares as percentages, ratios as
// "1.84x", counts with thousands separators, empty fields left out. The JSON keeps the raw
// numbers; only the page and the dock read them this way.
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace fsc {

// A schema key as a heading: underscores as spaces, a trailing unit word (ms, us) left to
// the value, the first letter capitalised.
std::string figureLabel(const std::string& key);

// One value, formatted for the key it sits under.
std::string figureValueText(const std::string& key, const nlohmann::json& value);

// Figures as HTML tables: an object as a two-column table, an array of objects as one table
// with a column per key. Keys of maps whose keys are data (op types, scopes, reasons) stay as
// they are.
void writeFiguresHtml(std::ostringstream& out, const nlohmann::json& figures);

}  // namespace fsc
