#pragma once
// Sizes for the dims of a model's inputs that the model leaves open (symbolic or unknown),
// wherever inputs are generated: run, profile, calibration, the partition and accuracy
// checks, the GUI's Run. A size the user gives (--dim NAME=VALUE) wins. Otherwise an
// image's spatial dims get a typical 224 (1 would be smaller than most kernels, so every
// Conv or pool would reject it) and a 1-D signal's length 1024; batch, sequence and the
// rest get 1. Every size chosen here is listed, so a message can name the dim and the flag.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct InputSizing {
    std::vector<std::vector<int64_t>> dims;  // per input asked about, in order
    // What was chosen here (not given): "height=224", "'image' dim 2=224" for unnamed dims.
    std::vector<std::string> chosen;

    // "; generated inputs gave batch=1, height=224: set sizes with --dim NAME=VALUE", or ""
    // when nothing was chosen (the sizes were all fixed or given).
    std::string hint() const;
};

// A failed run's status with the sizing's hint, unless the failure has nothing to do with
// sizes (an unsupported op).
Status withSizingHint(const Status& status, const InputSizing& sizing);

InputSizing sizeInputs(const Graph& graph, const std::vector<ValueId>& inputs,
                       const std::map<std::string, int64_t>& given);

// Generated integers stay below this for the input: 10, or fewer where the input (through
// Casts and reshapes) indexes a constant table of fewer rows (a Gather's data; the word,
// segment and position embeddings of EmbedLayerNormalization). A BERT's token_type_ids
// index two rows.
int64_t generatedIntegerBound(const Graph& graph, ValueId input);

}  // namespace fsc
