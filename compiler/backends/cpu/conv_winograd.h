#pragma once
// Winograd's minimal filtering (Lavin and Gray, 2015) for dense 3x3 convolutions of stride 1
// on NHWC images, where oneDNN has no Winograd kernel of its own: below AVX-512 it has only
// direct kernels for them. F(m x m, 3 x 3) turns each m x m tile of outputs into (m + 2)^2
// independent products of the tile's transformed inputs with the transformed weights: one
// GEMM per point, [tiles, C] x [C, K], which sgemm runs near its peak, in 4/9 (m = 2) or
// 1/4 (m = 4) of the direct kernel's multiplies. The transforms add a few passes over
// cache-sized chunks of tiles.
#include <cstdint>
#include <mutex>
#include <vector>

#include "compiler/backends/cpu/activation.h"
#include "compiler/backends/cpu/conv_nhwc.h"

namespace fsc {
class ThreadPool;
}

namespace fsc::cpu {

class WinogradConv {
public:
    // m, the side of the output tile this route takes the case with (4 or 2), or 0 where it
    // leaves it to oneDNN: not a dense 3x3 window of stride 1 and dilation 1, channels that
    // are not multiples of 8, outputs under 14x14 (too few tiles to pay for the transforms),
    // no AVX2 and FMA, or oneDNN's own Winograd kernels are there (AVX-512).
    static int tileFor(const NhwcWindow& s, int64_t outChannels, int64_t group);
    // How many runs this route took (tests see it was taken).
    static uint64_t runs();

    // y [n, oh, ow, k] = act(conv(x, w) + bias + z) for x [n, ih, iw, c] (s.c channels) and
    // w [k, c, 3, 3] as ONNX has it; bias [k] and z (y's layout; may be y's own buffer) when
    // not null. With `weightsConstant` the transformed weights are kept for the next call
    // with the same w. tile is m, 2 or 4. Returns false, y untouched, where the window, the
    // channels or the CPU do not fit (see tileFor: all but the output size), or its buffers
    // would be too large (a tile row's over 64 MiB, the transformed weights over 256 MiB).
    bool run(ThreadPool& pool, const NhwcWindow& s, int64_t outChannels, int tile, const float* x,
             const float* w, bool weightsConstant, const float* bias, const float* z, float* y,
             const Activation& act);

private:
    std::mutex m_mutex;            // a plan may run on several threads; its kernels are shared
    std::vector<float> m_u;        // transformed weights [(m + 2)^2, c, ldu]
    const float* m_uOf = nullptr;  // the constant weights m_u holds, or null
    int m_uTile = 0;
};

}  // namespace fsc::cpu
