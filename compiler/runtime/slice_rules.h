#pragma once
// ONNX's rules for the boxes Slice and Split take out of a tensor, shared by the CPU and
// CUDA kernels so both read the same elements. Errors are InvalidModel without the node;
// the caller adds it.
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace fsc {

// The box Slice reads: per dim of the input, the first index, the step and the count.
struct SliceBox {
    std::vector<int64_t> start, step, dims;
};

// starts/ends/axes/steps as Slice-10+ takes them (empty axes: 0..n-1; empty steps: 1).
Result<SliceBox> sliceBox(const std::vector<int64_t>& inputDims, const std::vector<int64_t>& starts,
                          const std::vector<int64_t>& ends, std::vector<int64_t> axes, std::vector<int64_t> steps);

// Split's part sizes along an axis of length `total`: `sizes` when given, else `parts`
// near-equal chunks (the last one shorter); they must add up and number `outputs`.
Result<std::vector<int64_t>> splitSizes(int64_t total, std::vector<int64_t> sizes, int64_t parts, int64_t outputs);

}  // namespace fsc
