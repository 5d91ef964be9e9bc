#pragma once
// `compile --quantize`: the "precision" option group (the measuring is app/common's
// quantize_report, shared with the walkthrough).
#include <string>

#include <CLI/CLI.hpp>

#include "app/reports/quantize_report.h"

namespace fsc::cli {

// The "precision" option group of compile; checkQuantizeArgs() says what does not go
// together (empty when all is well).
void addQuantizeOptions(CLI::App& command, QuantizeArgs& args);
std::string checkQuantizeArgs(const QuantizeArgs& args);

}  // namespace fsc::cli
