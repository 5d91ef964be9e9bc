#pragma once
// `fusescope-cli compile MODEL ...`: runs a compiler pipeline and shows what every pass
// did (--explain), a JSON summary (--json), per-pass dumps and the change log (--dump-dir).
namespace fsc::cli {

int compileCommand(int argc, char** argv, int first);

}  // namespace fsc::cli
