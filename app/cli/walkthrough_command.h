#pragma once
// `fusescope-cli walkthrough MODEL`: the walkthrough's chapters on the model as one
// self-contained HTML page (-o) and as JSON (--json); progress on stderr.
#include "app/cli/cli_app.h"

namespace fsc::cli {

Command walkthroughCommand(CLI::App& cli);

}  // namespace fsc::cli
