#pragma once
// `fusescope-cli compare MODEL --variants cpu/fp32,cpu/fp16,cuda/fp32 ...`: compiled variants
// side by side, one row per ONNX node: each variant's time for the group holding it and that
// group's error against the baseline.
#include "app/cli/cli_app.h"

namespace fsc::cli {

Command compareCommand(CLI::App& cli);

}  // namespace fsc::cli
