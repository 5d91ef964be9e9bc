#pragma once
// Grid and block sizes for the kernels of kernels/: the real device launches them, the
// simulated device runs every thread of them, and tests check they cover the work.
#include <algorithm>
#include <cstdint>

#include "compiler/backends/cuda/kernels/row_kernels.h"

namespace fsc::dk {

struct LaunchGeometry {
    int64_t grid = 1;
    int block = 256;
};

// Element kernels use a grid-stride loop: a grid capped at 65535 blocks still covers any count.
inline LaunchGeometry elementGeometry(int64_t count) {
    const int block = 256;
    return {std::clamp<int64_t>((count + block - 1) / block, 1, 65535), block};
}

// Row kernels: one warp per row, kRowsPerBlock rows per block.
inline LaunchGeometry rowGeometry(int64_t rows) {
    return {std::max<int64_t>(1, (rows + kRowsPerBlock - 1) / kRowsPerBlock), kLanes * kRowsPerBlock};
}

// Attention: one warp per block and query row (its scores fill the block's shared memory).
inline LaunchGeometry attentionGeometry(int64_t rows) { return {std::max<int64_t>(1, rows), kLanes}; }

}  // namespace fsc::dk
