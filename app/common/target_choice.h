#pragma once
// The target a command's flags or the GUI's settings choose, with its device opened.
#include <string>

#include "compiler/target.h"
#include "core/status.h"

namespace fsc {

struct TargetChoice {
    std::string backend = "cpu";  // "cpu" or "cuda"
    int threads = 0;              // ThreadPool::kAutomatic, or a count
    bool tf32 = false;
    bool cudaGraphs = true;
};

// "cuda" opens the first GPU (FUSESCOPE_DEVICE=simulated: the simulated one) and fails with
// why there is none; an unknown backend is an InvalidArgument.
Result<Target> makeTarget(const TargetChoice& choice);

}  // namespace fsc
