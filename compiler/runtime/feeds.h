#pragma once
// The tensors a run feeds: read from files where the caller names them, random from a seed
// for the rest. Shared by `fusescope-cli run` and the GUI's Run panel so both mean the same
// thing by "random inputs".
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler/runtime/input_sizing.h"
#include "compiler/runtime/rt_tensor.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

class Executor;

struct FeedOptions {
    std::string inputDir;                                    // DIR/input_0.pb, input_1.pb, ...
    std::vector<std::pair<std::string, std::string>> files;  // input name -> .pb or .npy file
    std::map<std::string, int64_t> dims;                     // symbolic dims (else see input_sizing.h)
    uint64_t seed = 0;
};

struct Feeds {
    std::vector<RtTensor> tensors;     // in the executor's feed order
    std::vector<std::string> sources;  // "random" or the file each came from
    InputSizing sizing;                // the generated ones' sizes, and what was chosen for them
};

// Floats uniform in [-1, 1), integers uniform in [0, integerBound), bools fair coins.
RtTensor randomTensor(DType dtype, std::vector<int64_t> dims, std::mt19937_64& rng, int64_t integerBound = 10);

// A size given for a dim no input has is a mistake (a typo, another model's name), not
// something to ignore: an InvalidArgument that lists the names the inputs do have.
Status checkDimNames(const Graph& graph, const std::vector<ValueId>& inputs,
                     const std::map<std::string, int64_t>& dims);

// Errors name the file or the input that is missing or unknown.
Result<Feeds> buildFeeds(const Executor& executor, const FeedOptions& options);

}  // namespace fsc
