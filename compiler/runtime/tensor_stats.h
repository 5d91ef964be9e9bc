#pragma once
// Summary statistics of a tensor's values: min, max, mean, standard deviation, the share of
// zeros and a histogram. For the GUI's tensor properties and the CLI's output summary.
#include <cstdint>
#include <vector>

#include "compiler/runtime/rt_tensor.h"

namespace fsc {

struct TensorStats {
    int64_t count = 0;      // elements
    int64_t nonFinite = 0;  // NaN and infinities: counted, left out of the figures below
    double min = 0, max = 0, mean = 0, stddev = 0;
    double sparsity = 0;  // share of elements that are exactly zero
    // Equal-width bins over [min, max] of the finite values (one bin when min == max).
    std::vector<int64_t> histogram;
};

// Strings (and empty tensors) give only `count`.
TensorStats computeTensorStats(const RtTensor& tensor, int bins = 32);

}  // namespace fsc
