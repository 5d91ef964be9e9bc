#pragma once
// The depthwise 2-D convolution's plane loops (the Conv kernel's, conv.cpp), shared with
// QLinearConv's depthwise layers (qlinear_depthwise.cpp), which run them on exact integers in
// float. Inline templates: each caller builds them into its own per-ISA clones, so a small
// plane (7 x 7) pays no call or dispatch per step.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc::cpu {

// Depthwise 2-D convolution (one input and one output channel per group), NCHW in and
// out. Each plane is copied once into a zero-bordered scratch so every tap is a
// branch-free, vectorizable row update; oneDNN would need layout reorders around every
// call, which cost more than the convolution itself on MobileNet's layers.
struct DepthwisePlane {
    int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t paddedH, paddedW;  // the window every output reads: rows [-ph, paddedH - ph)
};

// The plane `src` copied into `padded` (paddedH x paddedW) with a border of `fill`: zeros
// for a convolution, -infinity for max pooling.
template <typename T>
[[gnu::always_inline]] inline void borderedCopy(const DepthwisePlane& g, const T* src, T* padded, T fill) {
    for (int64_t r = 0; r < g.paddedH; ++r) {
        T* row = padded + r * g.paddedW;
        const int64_t sy = r - g.ph;
        std::fill(row, row + g.paddedW, fill);
        if (sy < 0 || sy >= g.ih) continue;
        const int64_t x0 = std::max<int64_t>(0, g.pw), x1 = std::min<int64_t>(g.paddedW, g.iw + g.pw);
        if (x0 < x1) std::memcpy(row + x0, src + sy * g.iw + (x0 - g.pw), size_t(x1 - x0) * sizeof(T));
    }
}

// The convolution of a plane already copied into `padded` with its zero border.
template <typename T>
[[gnu::always_inline]] inline void depthwiseBordered(const DepthwisePlane& g, const T* padded, const T* taps, T bias,
                                                     T* dst, T* strided) {
    if (g.sh == 2 && g.sw == 2 && g.dh == 1 && g.dw == 1 && g.ow < 16) {
        // Stride 2 on late, narrow layers (7 or 14 wide): output i = oy P + ox (P the padded
        // width) reads padded values 2 i + ky P + kx, so all output rows of a kernel row are
        // one long vector loop at stride 2; the valid columns are kept after.
        const int64_t pitch = g.paddedW, n = (g.oh - 1) * pitch + g.ow;
        T* __restrict full = strided;
        std::fill(full, full + n, bias);
        for (int64_t ky = 0; ky < g.kh; ++ky) {
            const T* __restrict row = padded + ky * pitch;
            const T* w = taps + ky * g.kw;
            if (g.kw == 3) {
                const T w0 = w[0], w1 = w[1], w2 = w[2];
                for (int64_t i = 0; i < n; ++i) full[i] += w0 * row[2 * i] + w1 * row[2 * i + 1] + w2 * row[2 * i + 2];
            } else if (g.kw == 5) {
                const T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
                for (int64_t i = 0; i < n; ++i)
                    full[i] += w0 * row[2 * i] + w1 * row[2 * i + 1] + w2 * row[2 * i + 2] + w3 * row[2 * i + 3] +
                               w4 * row[2 * i + 4];
            } else {
                for (int64_t kx = 0; kx < g.kw; ++kx)
                    for (int64_t i = 0; i < n; ++i) full[i] += w[kx] * row[2 * i + kx];
            }
        }
        for (int64_t oy = 0; oy < g.oh; ++oy) std::memcpy(dst + oy * g.ow, full + oy * pitch, size_t(g.ow) * sizeof(T));
        return;
    }
    if (g.kh == 3 && g.kw == 3 && g.dh == 1 && g.dw == 1 && (g.sw == 1 || g.sw == 2)) {
        // MobileNet's case: all nine taps per output in registers, one store.
        const T w0 = taps[0], w1 = taps[1], w2 = taps[2], w3 = taps[3], w4 = taps[4], w5 = taps[5],
                w6 = taps[6], w7 = taps[7], w8 = taps[8];
        if (g.sw == 1 && g.sh == 1 && g.ow < 32) {
            // Rows are short on late layers (7 or 14 wide): run over the padded plane as one
            // long row, then keep the valid columns, so the loop fills the vector lanes.
            const int64_t pw = g.paddedW, n = (g.oh - 1) * pw + g.ow;
            const T* __restrict r0 = padded;
            const T* __restrict r1 = padded + pw;
            const T* __restrict r2 = padded + 2 * pw;
            T* __restrict full = strided;
            for (int64_t i = 0; i < n; ++i)
                full[i] = bias + w0 * r0[i] + w1 * r0[i + 1] + w2 * r0[i + 2] + w3 * r1[i] + w4 * r1[i + 1] +
                          w5 * r1[i + 2] + w6 * r2[i] + w7 * r2[i + 1] + w8 * r2[i + 2];
            for (int64_t oy = 0; oy < g.oh; ++oy) std::memcpy(dst + oy * g.ow, full + oy * pw, size_t(g.ow) * sizeof(T));
            return;
        }
        for (int64_t oy = 0; oy < g.oh; ++oy) {
            const T* __restrict r0 = padded + oy * g.sh * g.paddedW;
            const T* __restrict r1 = r0 + g.paddedW;
            const T* __restrict r2 = r1 + g.paddedW;
            T* __restrict out = dst + oy * g.ow;
            if (g.sw == 1)
                for (int64_t ox = 0; ox < g.ow; ++ox)
                    out[ox] = bias + w0 * r0[ox] + w1 * r0[ox + 1] + w2 * r0[ox + 2] + w3 * r1[ox] + w4 * r1[ox + 1] +
                              w5 * r1[ox + 2] + w6 * r2[ox] + w7 * r2[ox + 1] + w8 * r2[ox + 2];
            else
                for (int64_t ox = 0; ox < g.ow; ++ox)
                    out[ox] = bias + w0 * r0[2 * ox] + w1 * r0[2 * ox + 1] + w2 * r0[2 * ox + 2] + w3 * r1[2 * ox] +
                              w4 * r1[2 * ox + 1] + w5 * r1[2 * ox + 2] + w6 * r2[2 * ox] + w7 * r2[2 * ox + 1] +
                              w8 * r2[2 * ox + 2];
        }
        return;
    }
    if (g.sw == 1 && g.sh == 1) {
        // Any kernel at stride 1 (EfficientNet's 5x5): the same long row over the padded
        // plane, one pass per tap, so a 7- or 14-wide layer still fills the vector lanes.
        const int64_t pw = g.paddedW, n = (g.oh - 1) * pw + g.ow;
        T* __restrict full = strided;
        std::fill(full, full + n, bias);
        for (int64_t ky = 0; ky < g.kh; ++ky) {
            const T* __restrict row = padded + ky * g.dh * pw;
            const T* w = taps + ky * g.kw;
            if (g.kw == 5 && g.dw == 1) {  // a kernel row's five taps in registers: one store per output
                const T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
                for (int64_t i = 0; i < n; ++i)
                    full[i] += w0 * row[i] + w1 * row[i + 1] + w2 * row[i + 2] + w3 * row[i + 3] + w4 * row[i + 4];
                continue;
            }
            for (int64_t kx = 0; kx < g.kw; ++kx) {
                const T wv = w[kx];
                const T* __restrict in = row + kx * g.dw;
                for (int64_t i = 0; i < n; ++i) full[i] += wv * in[i];
            }
        }
        for (int64_t oy = 0; oy < g.oh; ++oy) std::memcpy(dst + oy * g.ow, full + oy * pw, size_t(g.ow) * sizeof(T));
        return;
    }
    if (g.sw == 2 && g.dw == 1 && g.kw == 5) {
        // EfficientNet's 5x5 at stride 2 on wide rows: a kernel row's five taps in registers,
        // read at stride 2 straight from the padded row: one pass over the output per
        // kernel row (splitting the columns first costs more here).
        for (int64_t oy = 0; oy < g.oh; ++oy) {
            T* __restrict out = dst + oy * g.ow;
            std::fill(out, out + g.ow, bias);
            for (int64_t ky = 0; ky < g.kh; ++ky) {
                const T* __restrict row = padded + (oy * g.sh + ky * g.dh) * g.paddedW;
                const T* w = taps + ky * g.kw;
                const T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
                for (int64_t ox = 0; ox < g.ow; ++ox)
                    out[ox] += w0 * row[2 * ox] + w1 * row[2 * ox + 1] + w2 * row[2 * ox + 2] + w3 * row[2 * ox + 3] +
                               w4 * row[2 * ox + 4];
            }
        }
        return;
    }
    for (int64_t oy = 0; oy < g.oh; ++oy) {
        T* __restrict out = dst + oy * g.ow;
        std::fill(out, out + g.ow, bias);
        for (int64_t ky = 0; ky < g.kh; ++ky) {
            const T* row = padded + (oy * g.sh + ky * g.dh) * g.paddedW;
            for (int64_t kx = 0; kx < g.kw; ++kx) {
                const T wv = taps[ky * g.kw + kx];
                const T* __restrict in = row + kx * g.dw;
                if (g.sw != 1) {  // gather the strided columns so the update stays contiguous
                    for (int64_t ox = 0; ox < g.ow; ++ox) strided[ox] = in[ox * g.sw];
                    in = strided;
                }
                for (int64_t ox = 0; ox < g.ow; ++ox) out[ox] += wv * in[ox];
            }
        }
    }
}


inline DepthwisePlane planeGeometry(const ConvGeometry& geo) {
    DepthwisePlane g{geo.in[0], geo.in[1], geo.out[0], geo.out[1], geo.kernel[0], geo.kernel[1],
                     geo.strides[0], geo.strides[1], geo.dilations[0], geo.dilations[1],
                     geo.padBegin[0], geo.padBegin[1], 0, 0};
    g.paddedH = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
    g.paddedW = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
    return g;
}

// Floats `depthwiseBordered` needs in `strided`.
inline int64_t stridedScratchSize(const DepthwisePlane& g) { return std::max(g.ow, g.oh * g.paddedW); }

}  // namespace fsc::cpu
