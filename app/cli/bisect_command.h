#pragma once
// `fusescope-cli bisect MODEL --candidate cuda/fp16 ...`: the first fused group along each
// path where the candidate's numbers leave the reference's.
#include "app/cli/cli_app.h"

namespace fsc::cli {

Command bisectCommand(CLI::App& cli);

}  // namespace fsc::cli
