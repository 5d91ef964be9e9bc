#pragma once
// The options that say what a model is fed, shared by run, profile and compile:
//   --dim NAME=VALUE    the size of a symbolic dim (else input_sizing.h's typical size)
//   --input-dir DIR     inputs from DIR (input_K.pb / .npy)
//   --input NAME=FILE   one input from a .pb or .npy file
#include <string>

#include "compiler/quantization/calibration_data.h"

namespace fsc::cli {

// Consumes argv[i] (and its value) when it is one of the above: 1 taken, 0 not ours, -1 a
// usage error written to `error`.
int parseInputOption(int argc, char** argv, int& i, InputChoice& choice, std::string& error);

}  // namespace fsc::cli
