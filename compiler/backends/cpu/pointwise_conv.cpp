#include "compiler/backends/cpu/pointwise_conv.h"

#include <algorithm>
#include <cstring>

#include "compiler/backends/cpu/thread_scratch.h"
#include "compiler/backends/cpu/vec16.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {

namespace {

using vec16::Vec16;
using vec16::load;
using vec16::store;

constexpr int64_t kRows = 4;     // output channels per tile
constexpr int64_t kBlock = 256;  // pixels per block: its outputs stay in cache for the activation

// Always inlined into the target-specific functions below, so no vector crosses a call
// (GCC's -Wpsabi note about vector arguments is moot).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// The shape of one image's product: c input rows of inLen floats, `taps` taps `dilation`
// apart (one tap for a 1x1 convolution), outLen outputs per row. Output column j's tap t reads
// input column j + t dilation - shift.
struct Rows {
    int64_t c, taps, dilation, inLen, outLen, shift = 0;
};

// Rows [r0, r0 + Rows) by columns [j0, j0 + 16 Vectors) of one image. Unrolled, so the
// Rows x Vectors accumulators stay in registers through the whole loop over the inputs.
template <int64_t Rows, int64_t Vectors>
[[gnu::always_inline]] inline void tile(const float* x, const float* w, const float* bias, const float* z, float* y,
                                        const struct Rows& g, int64_t r0, int64_t j0) {
    Vec16 acc[Rows][Vectors];
#pragma GCC unroll 8
    for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 8
        for (int64_t v = 0; v < Vectors; ++v) acc[i][v] = Vec16{} + (bias ? bias[r0 + i] : 0.0f);
    const int64_t k = g.c * g.taps;  // weights per output channel
    for (int64_t ch = 0; ch < g.c; ++ch)
        for (int64_t t = 0; t < g.taps; ++t) {
            const float* from = x + ch * g.inLen + t * g.dilation + j0 - g.shift;
            Vec16 in[Vectors];
#pragma GCC unroll 8
            for (int64_t v = 0; v < Vectors; ++v) in[v] = load(from + 16 * v);
#pragma GCC unroll 8
            for (int64_t i = 0; i < Rows; ++i) {
                const float s = w[(r0 + i) * k + ch * g.taps + t];
#pragma GCC unroll 8
                for (int64_t v = 0; v < Vectors; ++v) acc[i][v] += s * in[v];
            }
        }
    if (z)
#pragma GCC unroll 8
        for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 8
            for (int64_t v = 0; v < Vectors; ++v) acc[i][v] += load(z + (r0 + i) * g.outLen + j0 + 16 * v);
#pragma GCC unroll 8
    for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 8
        for (int64_t v = 0; v < Vectors; ++v) store(y + (r0 + i) * g.outLen + j0 + 16 * v, acc[i][v]);
}

// Columns from *j while a whole tile of 16 V fits before j1, every row.
template <int64_t V>
[[gnu::always_inline]] inline void tiles(const float* x, const float* w, const float* bias, const float* z, float* y,
                                         const Rows& g, int64_t r0, int64_t r1, int64_t& j, int64_t j1) {
    for (; j + 16 * V <= j1; j += 16 * V) {
        int64_t r = r0;
        for (; r + kRows <= r1; r += kRows) tile<kRows, V>(x, w, bias, z, y, g, r, j);
        for (; r < r1; ++r) tile<1, V>(x, w, bias, z, y, g, r, j);
    }
}

// Output channels [r0, r1) by columns [j0, j1) of one image: full tiles, then single
// vectors, then the last columns one at a time.
template <int64_t Vectors>
[[gnu::always_inline]] inline void blockOf(const float* x, const float* w, const float* bias, const float* z, float* y,
                                           const Rows& g, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    int64_t j = j0;
    tiles<Vectors>(x, w, bias, z, y, g, r0, r1, j, j1);
    if constexpr (Vectors > 1) tiles<1>(x, w, bias, z, y, g, r0, r1, j, j1);
    const int64_t k = g.c * g.taps;
    for (int64_t r = r0; r < r1; ++r)
        for (int64_t col = j; col < j1; ++col) {
            float sum = bias ? bias[r] : 0.0f;
            for (int64_t ch = 0; ch < g.c; ++ch)
                for (int64_t t = 0; t < g.taps; ++t)
                    sum += w[r * k + ch * g.taps + t] * x[ch * g.inLen + t * g.dilation + col - g.shift];
            y[r * g.outLen + col] = z ? sum + z[r * g.outLen + col] : sum;
        }
}

// AVX-512 has 32 registers: 4 x 4 accumulators of 16 floats. AVX2's 16 registers hold 4 x 1
// (each two halves); more would spill.
[[gnu::target("avx512f")]] void blockAvx512(const float* x, const float* w, const float* bias, const float* z, float* y,
                                            const Rows& g, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    blockOf<4>(x, w, bias, z, y, g, r0, r1, j0, j1);
}
[[gnu::target("avx2,fma")]] void blockAvx2(const float* x, const float* w, const float* bias, const float* z, float* y,
                                           const Rows& g, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    blockOf<1>(x, w, bias, z, y, g, r0, r1, j0, j1);
}
void blockBaseline(const float* x, const float* w, const float* bias, const float* z, float* y, const Rows& g, int64_t r0,
                   int64_t r1, int64_t j0, int64_t j1) {
    blockOf<1>(x, w, bias, z, y, g, r0, r1, j0, j1);
}
#pragma GCC diagnostic pop

using BlockFn = void (*)(const float*, const float*, const float*, const float*, float*, const Rows&, int64_t, int64_t,
                         int64_t, int64_t);

BlockFn blockForThisCpu() {
    static const BlockFn chosen = vec16::forThisCpu<BlockFn>(blockAvx512, blockAvx2, blockBaseline);
    return chosen;
}

}  // namespace

bool pointwiseTilesPay(int64_t inChannels) { return inChannels <= 64; }

void pointwiseConv(ThreadPool& pool, const float* x, const float* w, const float* bias, const float* z, float* y,
                   int64_t images, int64_t c, int64_t m, int64_t hw, const Activation& act) {
    tapsConv1d(pool, x, w, bias, z, y, images, c, m, hw, 1, 0, 0, hw, act);
}

void tapsConv1d(ThreadPool& pool, const float* x, const float* w, const float* bias, const float* z, float* y,
                int64_t images, int64_t c, int64_t m, int64_t inLen, int64_t taps, int64_t dilation, int64_t padBegin,
                int64_t outLen, const Activation& act) {
    const BlockFn block = blockForThisCpu();
    const int64_t hw = outLen, span = dilation * (taps - 1);
    // Work items are column blocks, and where an image has fewer blocks than the threads
    // want (late layers: 7x7 or 14x14 pixels) also slices of the output channels, a
    // multiple of the tile's rows each.
    const int64_t columnBlocks = (hw + kBlock - 1) / kBlock;
    const int64_t wanted = 2 * int64_t(pool.size());
    int64_t rowSlices = 1;
    if (images * columnBlocks < wanted) rowSlices = std::clamp<int64_t>(wanted / (images * columnBlocks), 1, std::max<int64_t>(1, m / (2 * kRows)));
    const int64_t sliceRows = ((m + rowSlices - 1) / rowSlices + kRows - 1) / kRows * kRows;
    rowSlices = (m + sliceRows - 1) / sliceRows;
    const int64_t perImage = columnBlocks * rowSlices;
    pool.parallelFor(images * perImage, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t img = b / perImage, slice = (b % perImage) / columnBlocks, column = b % columnBlocks;
            const int64_t j0 = column * kBlock, j1 = std::min(hw, j0 + kBlock);
            const int64_t r0 = slice * sliceRows, r1 = std::min(m, r0 + sliceRows);
            float* out = y + img * m * hw;
            const float* image = x + img * c * inLen;
            const int64_t first = j0 - padBegin, end = j1 + span - padBegin;  // the input columns read
            if (first >= 0 && end <= inLen) {
                block(image, w, bias, z ? z + img * m * hw : nullptr, out, Rows{c, taps, dilation, inLen, hw, padBegin}, r0, r1,
                      j0, j1);
            } else {
                // A block at the padded border reads a zero-padded copy of just its columns.
                const int64_t width = end - first;
                float* window = threadScratch<float, ScratchSlot::PaddedColumns>(size_t(c * width));
                for (int64_t ch = 0; ch < c; ++ch) {
                    float* row = window + ch * width;
                    for (int64_t q = 0; q < width; ++q) {
                        const int64_t at = first + q;
                        row[q] = at >= 0 && at < inLen ? image[ch * inLen + at] : 0.f;
                    }
                }
                block(window, w, bias, z ? z + img * m * hw : nullptr, out, Rows{c, taps, dilation, width, hw, j0}, r0, r1,
                      j0, j1);
            }
            if (act.kind != Activation::Kind::None)
                for (int64_t r = r0; r < r1; ++r) act.apply(out + r * hw + j0, j1 - j0);
        }
    });
}

}  // namespace fsc::cpu
