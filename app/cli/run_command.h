#pragma once
// `fusescope-cli run MODEL ...`: runs a model on a backend and reports outputs, latency,
// the memory plan and (with --profile) per-node time.
namespace fsc::cli {

int runCommand(int argc, char** argv, int first);

}  // namespace fsc::cli
