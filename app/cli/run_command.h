#pragma once
// `fusescope-cli run MODEL ...`: runs a model on a backend and reports outputs, latency,
// the memory plan and (with --profile) per-node time.
#include "app/cli/cli_app.h"

namespace fsc::cli {

Command runCommand(CLI::App& cli);

}  // namespace fsc::cli
