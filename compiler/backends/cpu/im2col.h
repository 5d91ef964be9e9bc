#pragma once
// im2col for convolutions as GEMM: one image and one group of channels laid out as rows
// (channel, kernel offset...) by output positions, all of them or one slice along the first
// spatial dim. Positions in the padding take `pad` (0 for floats; the zero point for
// quantized images, so that x - zero_point is 0 there).
#include <algorithm>
#include <cstring>
#include <vector>

#include "compiler/backends/cpu/conv_geometry.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {

// Output positions along the first spatial dim: [first, first + count), the columns of one
// slice; count -1 is every position.
struct OutputSlice {
    int64_t first = 0, count = -1;
};

template <typename T>
inline void im2col(const T* image, int64_t channels, const ConvGeometry& g, T* col, ThreadPool& pool, T pad = T(0),
                   OutputSlice slice = {}) {
    const size_t nd = g.in.size();
    const int64_t kSize = product(g.kernel), inSize = product(g.in);
    const int64_t firstOut = slice.first, outRows = slice.count < 0 ? g.out[0] : slice.count;
    int64_t outSize = outRows;  // this slice's columns
    for (size_t d = 1; d < nd; ++d) outSize *= g.out[d];
    pool.parallelFor(channels * kSize, 4, [&](int64_t b, int64_t e) {
        std::vector<int64_t> kIdx(nd), oIdx(nd);
        for (int64_t row = b; row < e; ++row) {
            const int64_t c = row / kSize;
            int64_t rem = row % kSize;
            for (size_t d = nd; d-- > 0;) {
                kIdx[d] = rem % g.kernel[d];
                rem /= g.kernel[d];
            }
            T* dst = col + row * outSize;
            const T* src = image + c * inSize;
            if (nd == 2) {  // the common case without the generic index walk
                const int64_t ow = g.out[1], ih = g.in[0], iw = g.in[1];
                const int64_t sh = g.strides[0], sw = g.strides[1];
                const int64_t y0 = kIdx[0] * g.dilations[0] - g.padBegin[0];
                const int64_t x0 = kIdx[1] * g.dilations[1] - g.padBegin[1];
                for (int64_t oy = firstOut; oy < firstOut + outRows; ++oy) {
                    const int64_t y = y0 + oy * sh;
                    T* d = dst + (oy - firstOut) * ow;
                    if (y < 0 || y >= ih) {
                        std::fill(d, d + ow, pad);
                        continue;
                    }
                    const T* s = src + y * iw;
                    if (sw == 1) {  // padding on the left, a copied run, padding on the right
                        const int64_t left = std::clamp<int64_t>(-x0, 0, ow);
                        const int64_t end = std::clamp<int64_t>(iw - x0, left, ow);
                        std::fill(d, d + left, pad);
                        std::memcpy(d + left, s + x0 + left, size_t(end - left) * sizeof(T));
                        std::fill(d + end, d + ow, pad);
                        continue;
                    }
                    // Strided: the same three parts, the run without bounds checks (a stride of
                    // 2 as its own loop, which GCC vectorizes).
                    const int64_t left = x0 >= 0 ? 0 : std::min(ow, (sw - 1 - x0) / sw);
                    const int64_t end = iw - x0 <= 0 ? left : std::clamp<int64_t>((iw - x0 + sw - 1) / sw, left, ow);
                    std::fill(d, d + left, pad);
                    if (sw == 2)
                        for (int64_t ox = left; ox < end; ++ox) d[ox] = s[x0 + 2 * ox];
                    else
                        for (int64_t ox = left; ox < end; ++ox) d[ox] = s[x0 + ox * sw];
                    std::fill(d + end, d + ow, pad);
                }
                continue;
            }
            std::fill(oIdx.begin(), oIdx.end(), 0);
            oIdx[0] = firstOut;
            for (int64_t o = 0; o < outSize; ++o) {
                int64_t off = 0;
                bool inside = true;
                for (size_t d = 0; d < nd; ++d) {
                    const int64_t p = oIdx[d] * g.strides[d] + kIdx[d] * g.dilations[d] - g.padBegin[d];
                    if (p < 0 || p >= g.in[d]) inside = false;
                    off = off * g.in[d] + p;
                }
                dst[o] = inside ? src[off] : pad;
                for (size_t d = nd; d-- > 0;) {
                    if (++oIdx[d] < g.out[d]) break;
                    oIdx[d] = 0;
                }
            }
        }
    });
}

}  // namespace fsc::cpu
