#pragma once
// `fusescope-cli profile MODEL ...`: a profiled run (overhead measured), stored in a run
// store and written as a Perfetto trace, CSV and an HTML report on request.
namespace fsc::cli {

int profileCommand(int argc, char** argv, int first);

}  // namespace fsc::cli
