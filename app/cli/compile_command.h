#pragma once
// `fusescope-cli compile MODEL ...`: runs a compiler pipeline and shows what every pass
// did (--explain), a JSON summary (--json), per-pass dumps and the change log (--dump-dir).
#include "app/cli/cli_app.h"

namespace fsc::cli {

Command compileCommand(CLI::App& cli);

}  // namespace fsc::cli
