#pragma once
// 1x1 convolution (stride 1, no padding) on NCHW, float32: Y[m, hw] = W[m, c] X[c, hw] + B,
// then the FusedConv's activation, computed in tiles of four output channels by 64 pixels
// (16 on AVX2) held in vector registers. The output is written once: bias, products and activation are
// applied before it leaves the cache. oneDNN's sgemm needs the bias written first and read
// back, and packs its operands on every call, which on MobileNet's expansions (few input
// channels, six times as many outputs) cost more than the products.
#include <cstdint>

#include "compiler/backends/cpu/activation.h"

namespace fsc {
class ThreadPool;
}

namespace fsc::cpu {

// Whether the tiles beat oneDNN's sgemm for this shape: few input channels, where the GEMM's
// packing and its passes over the output dominate (measured in docs/benchmarks.md).
bool pointwiseTilesPay(int64_t inChannels);

// One image at a time over `images`: x is [images, c, hw], w [m, c], bias [m] or null,
// z (a residual added before the activation, as FusedConv's Z) null or shaped as y, y
// [images, m, hw]. Column blocks are spread over the pool's threads. z may be y itself: each
// element is read before it is written.
void pointwiseConv(ThreadPool& pool, const float* x, const float* w, const float* bias, const float* z, float* y,
                   int64_t images, int64_t c, int64_t m, int64_t hw, const Activation& act);

// A 1-D convolution of stride 1 over x [images, c, inLen] in the same tiles: w is [m, c, taps],
// and output t of row r sums w[r, ch, k] x[ch, t + k dilation - padBegin] (zero outside x), so
// the taps read shifted columns of x with no column matrix; y is [images, m, outLen]. Only
// the blocks at a padded border copy their columns.
void tapsConv1d(ThreadPool& pool, const float* x, const float* w, const float* bias, const float* z, float* y,
                int64_t images, int64_t c, int64_t m, int64_t inLen, int64_t taps, int64_t dilation, int64_t padBegin,
                int64_t outLen, const Activation& act);

}  // namespace fsc::cpu
