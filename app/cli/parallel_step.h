#pragma once
// `compile --tp N` / `--pp N`: the "parallel partitioning" option group (the measuring is
// app/common's parallel_report, shared with the walkthrough).
#include <CLI/CLI.hpp>

#include "app/reports/parallel_report.h"

namespace fsc::cli {

// The "parallel partitioning" option group of compile.
void addParallelOptions(CLI::App& command, ParallelArgs& args);

}  // namespace fsc::cli
