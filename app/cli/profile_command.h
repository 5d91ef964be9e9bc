#pragma once
// `fusescope-cli profile MODEL ...`: a profiled run (overhead measured), stored in a run
// store and written as a Perfetto trace, CSV and an HTML report on request.
#include "app/cli/cli_app.h"

namespace fsc::cli {

Command profileCommand(CLI::App& cli);

}  // namespace fsc::cli
