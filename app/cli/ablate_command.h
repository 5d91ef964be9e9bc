#pragma once
// `fusescope-cli ablate MODEL ...`: what each pass of a pipeline bought on this model and
// machine, each pass left out in turn and timed against the full pipeline.
#include "app/cli/cli_app.h"

namespace fsc::cli {

Command ablateCommand(CLI::App& cli);

}  // namespace fsc::cli
