// Convolution and pooling: Conv and ConvTranspose (im2col / col2im around the BLAS),
// MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool. Any number of spatial
// dims; pads, strides, dilations, auto_pad and ceil_mode as ONNX defines them.
#include <cmath>
#include <limits>

#include "compiler/backends/cpu/conv_geometry.h"
#include "compiler/backends/cpu/activation.h"
#include "compiler/backends/cpu/conv_nhwc.h"
#include "compiler/backends/cpu/depthwise_plane.h"
#include "compiler/backends/cpu/conv_onednn.h"
#include "compiler/backends/cpu/conv_winograd.h"
#include "compiler/backends/cpu/pointwise_conv.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/backends/cpu/fused_kernels.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/im2col.h"

namespace fsc::cpu {

namespace {

template <typename T>
[[gnu::always_inline]] inline void depthwisePlane(const DepthwisePlane& g, const T* src, const T* taps, T bias,
                                                  T* dst, T* padded, T* strided) {
    borderedCopy(g, src, padded, T(0));
    depthwiseBordered(g, padded, taps, bias, dst, strided);
}

// The float version is built for AVX-512, AVX2 and the baseline, picked at load time: the
// portable build's SSE2 alone leaves three quarters of a modern core's vector width idle.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void depthwisePlaneFloat(
    const DepthwisePlane& g, const float* src, const float* taps, float bias, float* dst, float* padded,
    float* strided) {
    depthwisePlane<float>(g, src, taps, bias, dst, padded, strided);
}

// A 1-D window as a 2-D one of a single row: Conformer's and wav2vec's depthwise Conv1d (31
// taps over 256 channels: oneDNN took 545 us, ONNX Runtime 171) runs the 2-D depthwise loop.
ConvGeometry asOneRow(const ConvGeometry& g) {
    ConvGeometry r = g;
    r.in = {1, g.in[0]};
    r.kernel = {1, g.kernel[0]};
    r.strides = {1, g.strides[0]};
    r.dilations = {1, g.dilations[0]};
    r.padBegin = {0, g.padBegin[0]};
    r.out = {1, g.out[0]};
    return r;
}

template <typename T>
void depthwise2d(ThreadPool& pool, const T* x, const T* w, const T* bias, T* y, int64_t planes,
                 const ConvGeometry& geo, const Activation& act) {
    const DepthwisePlane g = planeGeometry(geo);
    pool.parallelFor(planes, 1, [&](int64_t b, int64_t e) {
        std::vector<T> padded(static_cast<size_t>(g.paddedH * g.paddedW));
        // Strided columns of one row, or a whole output plane at the padded width.
        std::vector<T> strided(static_cast<size_t>(std::max(g.ow, g.oh * g.paddedW)));
        for (int64_t p = b; p < e; ++p) {
            const int64_t channel = p % geo.channels;
            const T* taps = w + channel * g.kh * g.kw;
            const T b = bias ? bias[channel] : T(0);
            if constexpr (std::is_same_v<T, float>)
                depthwisePlaneFloat(g, x + p * g.ih * g.iw, taps, b, y + p * g.oh * g.ow, padded.data(), strided.data());
            else
                depthwisePlane<T>(g, x + p * g.ih * g.iw, taps, b, y + p * g.oh * g.ow, padded.data(), strided.data());
            act.apply(y + p * g.oh * g.ow, g.oh * g.ow);  // while the plane is in cache
        }
    });
}

// The reverse: adds columns back into an image (for ConvTranspose). A run along the last dim
// at a time, its taps inside the image worked out once: the index arithmetic per element was
// most of Mask R-CNN's mask upsampling (100 boxes, 256 channels, 2x2 at stride 2).
template <typename T>
void col2im(const T* col, int64_t channels, const ConvGeometry& g, T* image) {
    const size_t nd = g.in.size(), last = nd - 1;
    const int64_t kSize = product(g.kernel), outSize = product(g.out), inSize = product(g.in);
    const int64_t runLength = g.out[last], runs = outSize / std::max<int64_t>(runLength, 1);
    const int64_t stride = g.strides[last], inLast = g.in[last];
    std::vector<int64_t> kIdx(nd), oIdx(nd);
    for (int64_t row = 0; row < channels * kSize; ++row) {
        const int64_t c = row / kSize;
        int64_t rem = row % kSize;
        for (size_t d = nd; d-- > 0;) {
            kIdx[d] = rem % g.kernel[d];
            rem /= g.kernel[d];
        }
        // Along the last dim the tap lands at o * stride + shift: inside for o in [first, end).
        const int64_t shift = kIdx[last] * g.dilations[last] - g.padBegin[last];
        const int64_t first = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
        const int64_t end = std::min(runLength, inLast - shift <= 0 ? 0 : (inLast - shift + stride - 1) / stride);
        std::fill(oIdx.begin(), oIdx.end(), 0);
        for (int64_t r = 0; r < runs; ++r) {
            int64_t off = 0;
            bool inside = true;
            for (size_t d = 0; d < last; ++d) {
                const int64_t p = oIdx[d] * g.strides[d] + kIdx[d] * g.dilations[d] - g.padBegin[d];
                if (p < 0 || p >= g.in[d]) inside = false;
                off = off * g.in[d] + p;
            }
            if (inside) {
                T* dst = image + c * inSize + off * inLast + shift;
                const T* src = col + row * outSize + r * runLength;
                for (int64_t o = first; o < end; ++o) dst[o * stride] += src[o];
            }
            for (size_t d = last; d-- > 0;) {
                if (++oIdx[d] < g.out[d]) break;
                oIdx[d] = 0;
            }
        }
    }
}

class ConvKernel : public Kernel {
public:
    ConvKernel(const KernelInit& init, Status&) {
        m_attrs = readWindowAttrs(init);
        m_group = init.getInt("group", 1);
    }
    // FusedConv: the same, then `act` on the output (per plane where the kernel works by plane).
    ConvKernel(const KernelInit& init, Activation act) : m_act(act) {
        m_attrs = readWindowAttrs(init);
        m_group = init.getInt("group", 1);
        m_channelsLast = init.getInt("channels_last", 0) != 0;
        m_nchwInput = m_channelsLast && init.getString("input_layout", "NHWC") == "NCHW";
        m_residual = init.inputPresent(3);
        m_oneDnn.setActivation(act);
    }
    // Y may take Z's buffer: oneDNN accumulates onto it, the other paths copy Z aside first.
    int inPlaceInput() const override { return m_residual ? 3 : -1; }
    ConvKernel(WindowAttrs attrs, int64_t group, ConvPath path)
        : m_attrs(std::move(attrs)), m_group(group), m_path(path) {}
    Status compute(KernelContext& ctx) override {
        auto alloc = [&](DType t, std::vector<int64_t> d) { return ctx.output(0, t, std::move(d)); };
        const RtTensor* z = ctx.input(3);  // FusedConv's residual
        const bool means = ctx.outputCount() > 1 && ctx.outputWanted(1);  // se-pool-fusion's
        if (!m_channelsLast) {
            if (means) return bad(ctx, "channel means (a second output) need channels_last");
            return run(ctx, ctx.input(0), ctx.input(1), ctx.input(2), z, ctx.inputConstant(1), alloc);
        }
        RtTensor* y = nullptr;
        std::vector<float> rowSums;
        FSC_RETURN_IF_ERROR(runChannelsLast(ctx, ctx.input(0), ctx.input(1), ctx.input(2), z, ctx.inputConstant(1),
                                            [&](DType t, std::vector<int64_t> d) {
                                                auto r = alloc(t, std::move(d));
                                                if (r) y = *r;
                                                return r;
                                            },
                                            means ? &rowSums : nullptr));
        return means ? writeChannelMeans(ctx, *y, rowSums) : Status::ok();
    }
    Status run(KernelContext& ctx, const RtTensor* x, const RtTensor* w, const RtTensor* b, const RtTensor* z,
               bool weightsConstant, const OutputAlloc& alloc) {
        if (!x || !w || x->rank() < 3 || w->rank() != x->rank())
            return bad(ctx, "X and W must have the same rank >= 3");
        const int64_t n = x->dims[0], c = x->dims[1], m = w->dims[0];
        if (m_group <= 0 || c % m_group || m % m_group || w->dims[1] != c / m_group)
            return bad(ctx, "W " + dimsString(w->dims) + " does not fit X " + dimsString(x->dims) + " with group " + std::to_string(m_group));
        std::vector<int64_t> spatial(x->dims.begin() + 2, x->dims.end());
        std::vector<int64_t> kernel(w->dims.begin() + 2, w->dims.end());
        if (!m_attrs.kernelShape.empty() && m_attrs.kernelShape != kernel) return bad(ctx, "kernel_shape differs from W");
        auto geo = convGeometry(ctx, m_attrs, spatial, kernel, false);
        if (!geo) return geo.status();
        geo->channels = c;
        std::vector<int64_t> outDims{n, m};
        outDims.insert(outDims.end(), geo->out.begin(), geo->out.end());
        if (b && b->numel() != m) return bad(ctx, "B must have " + std::to_string(m) + " elements");
        FSC_RETURN_IF_ERROR(checkResidual(ctx, z, x->dtype, outDims));
        auto out = alloc(x->dtype, outDims);
        if (!out) return out.status();
        RtTensor* y = *out;
        if (m_path == ConvPath::Fastest && !keepsNchw(*geo, c, m)) {
            if (const auto done = m_oneDnn.run(*geo, m_group, *x, *w, b, z, weightsConstant, false, false, *y); done.ran)
                return finishEpilogue(ctx, *y, done.residual ? nullptr : z, done.activation);
        }
        RtTensor zAside;  // the paths below write Y before adding Z, except the tiles
        const bool tiles = x->dtype == DType::Float32 && m_group == 1 &&
                           ((isPointwise(*geo, kernel, spatial) && pointwiseTilesPay(c)) || takesTaps(*geo, c, m));
        if (z && z->data == y->data && !tiles) z = &(zAside = cloneTensor(*z));
        // With Z the activation waits until Z is added, at the end.
        const Activation& act = z ? kNoActivation : m_act;
        return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const int64_t cg = c / m_group, mg = m / m_group;
            const int64_t kSize = product(kernel), outSize = product(geo->out), inSize = product(spatial);
            const int64_t rows = cg * kSize;
            T* py = y->as<T>();
            const bool depthwise = cg == 1 && mg == 1 && m_group > 1 && (kernel.size() == 2 || kernel.size() == 1);
            if (depthwise) {
                depthwise2d<T>(ctx.pool(), x->as<T>(), w->as<T>(), b ? b->as<T>() : nullptr, py, n * c,
                               kernel.size() == 1 ? asOneRow(*geo) : *geo, act);
                return finishEpilogue(ctx, *y, z, true);
            }
            if constexpr (std::is_same_v<T, float>) {
                // The tiles add Z and apply the activation while the outputs are in registers.
                const float* pz = z ? z->as<float>() : nullptr;
                if (m_group == 1 && isPointwise(*geo, kernel, spatial) && pointwiseTilesPay(c)) {
                    pointwiseConv(ctx.pool(), x->as<float>(), w->as<float>(), b ? b->as<float>() : nullptr, pz, py, n, c,
                                  m, outSize, m_act);
                    return Status::ok();
                }
                if (takesTaps(*geo, c, m)) {
                    tapsConv(ctx.pool(), *x, m, w->as<float>(), b ? b->as<float>() : nullptr, pz, *geo, py, m_act);
                    return Status::ok();
                }
            }
            // The products first, then the bias and the activation together in one pass over
            // the output (filling the bias in first and accumulating onto it costs that pass
            // plus a read of the output inside the GEMM).
            const bool direct = isPointwise(*geo, kernel, spatial);  // the image is its own column matrix
            if (!direct && m_col.size() < size_t(rows * outSize) * sizeof(T)) m_col.resize(size_t(rows * outSize) * sizeof(T));
            T* col = reinterpret_cast<T*>(m_col.data());
            const T* px = x->as<T>();
            const T* pw = w->as<T>();
            for (int64_t img = 0; img < n; ++img)
                for (int64_t grp = 0; grp < m_group; ++grp) {
                    const T* src = px + (img * c + grp * cg) * inSize;
                    const T* cols = src;
                    if (!direct) {
                        im2col<T>(src, cg, *geo, col, ctx.pool());
                        cols = col;
                    }
                    gemm(false, false, mg, outSize, rows, T(1), pw + grp * mg * rows, rows, cols, outSize,
                         T(0), py + (img * m + grp * mg) * outSize, outSize);
                }
            if (!b) return finishEpilogue(ctx, *y, z, false);
            const T* pb = b->as<T>();
            ctx.pool().parallelFor(n * m, std::max<int64_t>(1, 16384 / std::max<int64_t>(outSize, 1)), [&](int64_t s, int64_t e) {
                for (int64_t r = s; r < e; ++r) {
                    T* plane = py + r * outSize;
                    const T bias = pb[r % m];
                    for (int64_t i = 0; i < outSize; ++i) plane[i] += bias;
                    act.apply(plane, outSize);  // while the plane is in cache
                }
            });
            return finishEpilogue(ctx, *y, z, true);
        });
    }

    // FusedConv with `channels_last`: X [N, H, W, C] (or [N, C, H, W] with `input_layout`
    // NCHW: a region's first convolution reading the graph's input) and Y [N, OH, OW, M], W
    // and B as ONNX has them. float32 runs in that layout: depthwise with the channels in the
    // vector lanes, a pointwise layer over a handful of pixels as dot products, the rest
    // through oneDNN told the layouts (its 1x1 kernels with the bias and activation inside
    // beat a GEMM plus a pass over the output: MobileNet 5.3 -> 4.1 ms), a pointwise one it
    // declines as one GEMM; other dtypes go through NCHW copies and the kernel above.
    // rowSums, when given, may be filled with each output row's per-channel sums ([N * OH, M],
    // by the depthwise loop while rows are in cache); left empty, the means come from Y.
    Status runChannelsLast(KernelContext& ctx, const RtTensor* x, const RtTensor* w, const RtTensor* b, const RtTensor* z,
                           bool weightsConstant, const OutputAlloc& alloc, std::vector<float>* rowSums = nullptr) {
        if (!x || !w || x->rank() != 4 || w->rank() != 4)
            return bad(ctx, "a channels-last convolution needs a 4-D X and W [M, C/group, kH, kW]");
        const bool nchwIn = m_nchwInput;
        const int64_t n = x->dims[0], c = x->dims[nchwIn ? 1 : 3], m = w->dims[0];
        const int64_t h = x->dims[nchwIn ? 2 : 1], wd = x->dims[nchwIn ? 3 : 2];
        if (m_group <= 0 || c % m_group || m % m_group || w->dims[1] != c / m_group)
            return bad(ctx, "W " + dimsString(w->dims) + " does not fit X " + dimsString(x->dims) +
                                (nchwIn ? " (NCHW)" : " (NHWC)") + " with group " + std::to_string(m_group));
        if (b && b->numel() != m) return bad(ctx, "B must have " + std::to_string(m) + " elements");
        std::vector<int64_t> kernel{w->dims[2], w->dims[3]};
        if (!m_attrs.kernelShape.empty() && m_attrs.kernelShape != kernel) return bad(ctx, "kernel_shape differs from W");
        auto geo = convGeometry(ctx, m_attrs, {h, wd}, kernel, false);
        if (!geo) return geo.status();
        geo->channels = c;
        FSC_RETURN_IF_ERROR(checkResidual(ctx, z, x->dtype, {n, geo->out[0], geo->out[1], m}));
        auto out = alloc(x->dtype, {n, geo->out[0], geo->out[1], m});
        if (!out) return out.status();
        RtTensor* y = *out;
        if (y->numel() == 0) return Status::ok();
        const int bytes = dtypeBits(x->dtype) / 8;
        if (!isFloatingPoint(x->dtype) || (bytes != 2 && bytes != 4 && bytes != 8))
            return bad(ctx, "a channels-last convolution takes float data, not " + std::string(dtypeName(x->dtype)));
        const bool depthwise = m_group == c && m == c;
        const bool dots = m_group == 1 && n * h * wd <= 4 && isPointwise(*geo, kernel, {h, wd});
        RtTensor zAside;  // Z's contents when Y took its buffer and a path writes Y before adding it
        if (x->dtype == DType::Float32 && w->dtype == DType::Float32 && m_path == ConvPath::Fastest) {
            const float* bias = b ? b->as<float>() : nullptr;
            const NhwcWindow s{n, c, h, wd, geo->out[0], geo->out[1], kernel[0], kernel[1],
                               geo->strides[0], geo->strides[1], geo->dilations[0], geo->dilations[1],
                               geo->padBegin[0], geo->padBegin[1]};
            if (!nchwIn && !depthwise && !dots)
                if (const int tile = WinogradConv::tileFor(s, m, m_group))
                    if (m_winograd.run(ctx.pool(), s, m, tile, x->as<float>(), w->as<float>(), weightsConstant, bias,
                                       z ? z->as<float>() : nullptr, y->as<float>(), m_act))
                        return Status::ok();
            if (!depthwise && !dots) {
                const auto done = m_oneDnn.run(*geo, m_group, *x, *w, b, z, weightsConstant, !nchwIn, true, *y);
                if (done.ran) return finishEpilogue(ctx, *y, done.residual ? nullptr : z, done.activation);
            }
            if (z && z->data == y->data) z = &(zAside = cloneTensor(*z));
            const Activation& act = z ? kNoActivation : m_act;  // with Z, after it
            std::vector<float> scratch;  // transposed weights that are not constant
            // The loops below read NHWC.
            RtTensor copy;
            if (nchwIn) {
                copy = allocateTensor(x->dtype, {n, h, wd, c});
                nchwToNhwc(x->data, copy.data, n, c, h, wd, bytes);
            }
            const float* px = nchwIn ? copy.as<float>() : x->as<float>();
            if (depthwise) {
                float* sums = nullptr;
                if (rowSums && !z) {  // with Z the sums would miss it: taken from Y after
                    rowSums->assign(size_t(n * geo->out[0] * m), 0.f);
                    sums = rowSums->data();
                }
                depthwiseNhwc(ctx.pool(), s, px, weightsByInput(*w, c, kernel[0] * kernel[1], weightsConstant, scratch), bias,
                              y->as<float>(), act, sums);
                return finishEpilogue(ctx, *y, z, true);
            }
            if (dots) {
                // A squeeze-and-excitation layer on a pooled [N, 1, 1, C]: a few dot products,
                // which a oneDNN call costs more to set up than to compute (4-12 us each).
                pointwiseDots(ctx.pool(), px, weightsByInput(*w, m, c, weightsConstant, scratch), bias, y->as<float>(),
                              n * h * wd, c, m, act);
                return finishEpilogue(ctx, *y, z, true);
            }
            if (m_group == 1 && isPointwise(*geo, kernel, {h, wd})) {  // oneDNN declined: one GEMM
                gemm(false, true, n * h * wd, m, c, 1.f, px, c, w->as<float>(), c, 0.f, y->as<float>(), m);
                biasActivationRows(ctx.pool(), y->as<float>(), n * h * wd, m, bias, act);
                return finishEpilogue(ctx, *y, z, true);
            }
        }
        RtTensor xn;
        if (!nchwIn) {
            xn = allocateTensor(x->dtype, {n, c, h, wd});
            nhwcToNchw(x->data, xn.data, n, h, wd, c, bytes);
        }
        if (z && z->data == y->data) z = &(zAside = cloneTensor(*z));
        RtTensor zn;  // Z as the NCHW kernel adds it
        if (z) {
            zn = allocateTensor(z->dtype, {n, m, geo->out[0], geo->out[1]});
            nhwcToNchw(z->data, zn.data, n, geo->out[0], geo->out[1], m, bytes);
        }
        RtTensor yn;
        FSC_RETURN_IF_ERROR(run(ctx, nchwIn ? x : &xn, w, b, z ? &zn : nullptr, weightsConstant,
                                [&](DType t, std::vector<int64_t> d) -> Result<RtTensor*> {
                                    yn = allocateTensor(t, std::move(d));
                                    return &yn;
                                }));
        nchwToNhwc(yn.data, y->data, n, m, geo->out[0], geo->out[1], bytes);
        return Status::ok();
    }

private:
    // W [rows, cols, ...] as [cols, rows]: a depthwise convolution's taps by channel, a
    // pointwise one's weights by input channel. Kept for constant weights (shared, within
    // the copy budget), made per call into `scratch` otherwise.
    const float* weightsByInput(const RtTensor& w, int64_t rows, int64_t cols, bool weightsConstant,
                                std::vector<float>& scratch) {
        if (weightsConstant)
            if (const float* kept = m_weightsByInput.of(w, cols, rows, true, rows)) return kept;
        scratch.resize(size_t(rows * cols));
        transposeMatrix(w.as<float>(), rows, cols, scratch.data());
        return scratch.data();
    }

    // se-pool-fusion's second output, [N, 1, 1, M]: Y's mean over its pixels, from the row
    // sums the depthwise loop took, or read off Y (NHWC) by the other paths.
    static Status writeChannelMeans(KernelContext& ctx, const RtTensor& y, const std::vector<float>& rowSums) {
        const int64_t n = y.dims[0], oh = y.dims[1], pixels = y.dims[1] * y.dims[2], m = y.dims[3];
        auto out = ctx.output(1, y.dtype, {n, 1, 1, m});
        if (!out) return out.status();
        return dispatchFloat(ctx, y.dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const T* py = y.as<T>();
            T* means = (*out)->as<T>();
            std::vector<double> acc(static_cast<size_t>(m), 0.0);
            for (int64_t img = 0; img < n; ++img) {
                std::fill(acc.begin(), acc.end(), 0.0);
                if (!rowSums.empty()) {
                    for (int64_t r = img * oh; r < (img + 1) * oh; ++r)
                        for (int64_t ch = 0; ch < m; ++ch) acc[size_t(ch)] += rowSums[size_t(r * m + ch)];
                } else {
                    for (int64_t p = img * pixels; p < (img + 1) * pixels; ++p)
                        for (int64_t ch = 0; ch < m; ++ch) acc[size_t(ch)] += double(py[p * m + ch]);
                }
                for (int64_t ch = 0; ch < m; ++ch) means[img * m + ch] = T(acc[size_t(ch)] / double(pixels));
            }
            return Status::ok();
        });
    }

    // Z, FusedConv's residual, must be shaped and typed as Y.
    static Status checkResidual(KernelContext& ctx, const RtTensor* z, DType dtype, const std::vector<int64_t>& yDims) {
        if (!z) return Status::ok();
        if (z->dtype != dtype) return bad(ctx, "Z must have X's dtype, not " + std::string(dtypeName(z->dtype)));
        if (z->dims != yDims) return bad(ctx, "Z " + dimsString(z->dims) + " must have Y's dims " + dimsString(yDims));
        return Status::ok();
    }

    // What a path left of the epilogue: with Z (which the paths leave to here), Z added and
    // then the activation in one pass over the output; without, the activation where the
    // path did not apply it.
    Status finishEpilogue(KernelContext& ctx, RtTensor& y, const RtTensor* z, bool activationDone) const {
        if (!z) return activationDone ? Status::ok() : applyActivation(ctx, y);
        return dispatchFloat(ctx, y.dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            T* py = y.as<T>();
            const T* pz = z->as<T>();
            ctx.pool().parallelFor(y.numel(), 16384, [&](int64_t i0, int64_t i1) {
                for (int64_t i = i0; i < i1; ++i) py[i] += pz[i];
                m_act.apply(py + i0, i1 - i0);
            });
            return Status::ok();
        });
    }

    // The epilogue over the whole output, in long flat chunks so its loops run full width.
    Status applyActivation(KernelContext& ctx, RtTensor& y) const {
        if (m_act.kind == Activation::Kind::None) return Status::ok();
        return dispatchFloat(ctx, y.dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            T* py = y.as<T>();
            ctx.pool().parallelFor(y.numel(), 16384, [&](int64_t i0, int64_t i1) { m_act.apply(py + i0, i1 - i0); });
            return Status::ok();
        });
    }

    // A 1-D convolution of stride 1 (WaveNet's and TCNs' dilated causal layers) as shifted
    // products of the input in registers: no column matrix, none of oneDNN's reorders. Up to
    // 128 products per output, as for the 1x1 tiles' 64: WaveNet's 64 channels x 2 taps ran
    // 3.6 -> 2.6 ms, but Whisper's 80 x 3 took 1.65 ms against oneDNN's 1.24.
    bool takesTaps(const ConvGeometry& g, int64_t c, int64_t m) const {
        return m_group == 1 && g.in.size() == 1 && g.kernel[0] > 1 && g.strides[0] == 1 && m >= 4 &&
               c * g.kernel[0] <= 128;
    }
    void tapsConv(ThreadPool& pool, const RtTensor& x, int64_t m, const float* w, const float* bias, const float* z,
                  const ConvGeometry& g, float* y, const Activation& act) {
        tapsConv1d(pool, x.as<float>(), w, bias, z, y, x.dims[0], x.dims[1], m, g.in[0], g.kernel[0], g.dilations[0],
                   g.padBegin[0], g.out[0], act);
    }

    static bool isPointwise(const ConvGeometry& g, const std::vector<int64_t>& kernel, const std::vector<int64_t>& spatial) {
        for (size_t d = 0; d < kernel.size(); ++d)
            if (kernel[d] != 1 || g.strides[d] != 1 || g.padBegin[d] != 0 || g.out[d] != spatial[d]) return false;
        return true;
    }

    // Cases faster without oneDNN's layout reorders: a pointwise convolution is one GEMM
    // on the NCHW image as it is, and depthwise has its own direct loop.
    bool keepsNchw(const ConvGeometry& g, int64_t c, int64_t m) const {
        if (m_group > 1 && m_group == c && m == c && (g.in.size() == 2 || g.in.size() == 1)) return true;
        return (m_group == 1 && isPointwise(g, g.kernel, g.in)) || takesTaps(g, c, m);
    }

    WindowAttrs m_attrs;
    int64_t m_group = 1;
    ConvPath m_path = ConvPath::Fastest;
    Activation m_act;  // FusedConv's; None for Conv
    static inline const Activation kNoActivation{};
    bool m_channelsLast = false;  // FusedConv's `channels_last`
    bool m_nchwInput = false;     // ... with `input_layout` NCHW
    bool m_residual = false;      // FusedConv with a Z
    RelaidConstant m_weightsByInput;
    OneDnnConv m_oneDnn;
    WinogradConv m_winograd;  // 3x3 layers where oneDNN has no Winograd kernel
    std::vector<uint8_t> m_col;  // im2col scratch, kept across runs
};

}  // namespace

Result<RtTensor> convToNew(KernelContext& ctx, const WindowAttrs& attrs, int64_t group,
                           const RtTensor& x, const RtTensor& w, const RtTensor* b, ConvPath path) {
    ConvKernel conv(attrs, group, path);
    RtTensor result;
    Status s = conv.run(ctx, &x, &w, b, nullptr, false, [&](DType t, std::vector<int64_t> d) -> Result<RtTensor*> {
        result = allocateTensor(t, std::move(d));
        return &result;
    });
    if (!s.isOk()) return s;
    return result;
}

namespace {

// ConvTranspose's columns when the windows tile the output exactly (2-D, kernel = stride,
// no padding or dilation): output row oy of a channel takes kernel row oy % kh of the input
// row oy / kh, each element once, with the bias added as it is written.
template <typename T>
void writeTiles(const T* col, int64_t channels, const ConvGeometry& g, const T* bias, T* image) {
    const int64_t kh = g.kernel[0], kw = g.kernel[1], inH = g.out[0], inW = g.out[1];
    const int64_t outW = inW * kw, inSize = inH * inW, outSize = inH * kh * outW;
    for (int64_t c = 0; c < channels; ++c) {
        const T add = bias ? bias[c] : T(0);
        for (int64_t oy = 0; oy < inH * kh; ++oy) {
            T* dst = image + c * outSize + oy * outW;
            const T* rows = col + (c * kh + oy % kh) * kw * inSize + (oy / kh) * inW;  // kernel column 0's
            if (kw == 2) {
                const T* r0 = rows;
                const T* r1 = rows + inSize;
                for (int64_t ix = 0; ix < inW; ++ix) {
                    dst[2 * ix] = r0[ix] + add;
                    dst[2 * ix + 1] = r1[ix] + add;
                }
                continue;
            }
            for (int64_t kx = 0; kx < kw; ++kx) {
                const T* src = rows + kx * inSize;
                for (int64_t ix = 0; ix < inW; ++ix) dst[ix * kw + kx] = src[ix] + add;
            }
        }
    }
}

class ConvTransposeKernel : public Kernel {
public:
    ConvTransposeKernel(const KernelInit& init, Status&) {
        m_attrs = readWindowAttrs(init);
        m_group = init.getInt("group", 1);
        m_outputPadding = init.getInts("output_padding");
        m_outputShape = init.getInts("output_shape");
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        const RtTensor* w = ctx.input(1);
        const RtTensor* b = ctx.input(2);
        if (!x || !w || x->rank() < 3 || w->rank() != x->rank()) return bad(ctx, "X and W must have the same rank >= 3");
        const size_t nd = x->rank() - 2;
        const int64_t n = x->dims[0], c = x->dims[1];
        if (w->dims[0] != c || c % m_group) return bad(ctx, "W does not fit X");
        const int64_t mg = w->dims[1], m = mg * m_group, cg = c / m_group;
        std::vector<int64_t> kernel(w->dims.begin() + 2, w->dims.end());
        std::vector<int64_t> strides = m_attrs.strides.empty() ? std::vector<int64_t>(nd, 1) : m_attrs.strides;
        std::vector<int64_t> dil = m_attrs.dilations.empty() ? std::vector<int64_t>(nd, 1) : m_attrs.dilations;
        std::vector<int64_t> outPad = m_outputPadding.empty() ? std::vector<int64_t>(nd, 0) : m_outputPadding;
        std::vector<int64_t> pads = m_attrs.pads.empty() ? std::vector<int64_t>(2 * nd, 0) : m_attrs.pads;
        std::vector<int64_t> outSpatial(nd);
        for (size_t d = 0; d < nd; ++d) {
            const int64_t in = x->dims[d + 2];
            const int64_t full = strides[d] * (in - 1) + outPad[d] + (kernel[d] - 1) * dil[d] + 1;
            if (!m_outputShape.empty()) {
                outSpatial[d] = m_outputShape[m_outputShape.size() - nd + d];
                const int64_t total = std::max<int64_t>(0, full - outSpatial[d]);
                const bool upper = m_attrs.autoPad != "SAME_LOWER";
                pads[d] = upper ? total / 2 : total - total / 2;
                pads[d + nd] = total - pads[d];
            } else if (m_attrs.autoPad == "SAME_UPPER" || m_attrs.autoPad == "SAME_LOWER") {
                outSpatial[d] = in * strides[d];
                const int64_t total = std::max<int64_t>(0, full - outSpatial[d]);
                pads[d] = m_attrs.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
                pads[d + nd] = total - pads[d];
            } else {
                outSpatial[d] = full - pads[d] - pads[d + nd];
            }
        }
        // Geometry of the forward conv that this op is the transpose of.
        ConvGeometry g;
        g.in = outSpatial;
        g.kernel = kernel;
        g.strides = strides;
        g.dilations = dil;
        g.padBegin.assign(pads.begin(), pads.begin() + long(nd));
        g.out.assign(x->dims.begin() + 2, x->dims.end());
        std::vector<int64_t> outDims{n, m};
        outDims.insert(outDims.end(), outSpatial.begin(), outSpatial.end());
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
        RtTensor* y = *out;
        return dispatchFloat(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const int64_t kSize = product(kernel), inSize = product(g.out), outSize = product(outSpatial);
            T* py = y->as<T>();
            // One image: per group col[mg*k, in] = W_g^T [mg*k, cg] * X_g [cg, in]. In general
            // Y starts as the bias (one pass over it, not a zero fill and a bias pass) and the
            // columns are added into it by col2im. Windows that tile the output exactly (2-D, kernel = stride, no padding or
            // dilation: Mask R-CNN's and U-Nets' 2x upsampling) never overlap, so each output
            // element is one column element plus the bias, written once.
            const bool tiles = nd == 2 && outSpatial[0] == x->dims[2] * kernel[0] && outSpatial[1] == x->dims[3] * kernel[1];
            bool exact = tiles;
            for (size_t d = 0; d < nd; ++d)
                exact = exact && strides[d] == kernel[d] && dil[d] == 1 && g.padBegin[d] == 0;
            auto image = [&](int64_t img, std::vector<T>& col) {
                if (!exact)
                    for (int64_t r = 0; r < m; ++r)
                        std::fill_n(py + (img * m + r) * outSize, outSize, b ? b->as<T>()[r] : T(0));
                for (int64_t grp = 0; grp < m_group; ++grp) {
                    gemm(true, false, mg * kSize, inSize, cg, T(1), w->as<T>() + grp * cg * mg * kSize, mg * kSize,
                         x->as<T>() + (img * c + grp * cg) * inSize, inSize, T(0), col.data(), inSize);
                    T* dst = py + (img * m + grp * mg) * outSize;
                    if (exact)
                        writeTiles<T>(col.data(), mg, g, b ? b->as<T>() + grp * mg : nullptr, dst);
                    else
                        col2im<T>(col.data(), mg, g, dst);
                }
            };
            if (n >= 2 * ctx.pool().size()) {
                // A batch of images (Mask R-CNN's 100 boxes) an image per task: the col2im
                // scatter and the bias ran on one thread while the other waited (its
                // upsampling 139 -> 72 ms at two threads). The GEMMs inside run single-threaded.
                ctx.pool().parallelFor(n, 1, [&](int64_t first, int64_t last) {
                    std::vector<T> col(size_t(mg * kSize * inSize));
                    for (int64_t img = first; img < last; ++img) image(img, col);
                });
            } else {
                std::vector<T> col(size_t(mg * kSize * inSize));
                for (int64_t img = 0; img < n; ++img) image(img, col);
            }
            return Status::ok();
        });
    }

private:
    WindowAttrs m_attrs;
    int64_t m_group = 1;
    std::vector<int64_t> m_outputPadding, m_outputShape;
};

enum class PoolKind { Max, Average, Lp };

// The taps [first, last) of a window along one dim that land inside the input.
struct Taps {
    int64_t first, last;
};
inline Taps insideTaps(int64_t o, int64_t stride, int64_t pad, int64_t dil, int64_t k, int64_t in) {
    const int64_t start = o * stride - pad;
    int64_t first = start < 0 ? (-start + dil - 1) / dil : 0;
    int64_t last = start >= in ? 0 : std::min<int64_t>(k, (in - 1 - start) / dil + 1);
    return {first, std::max(first, last)};
}

// Max pooling of one plane without dilation, separably: the plane copied into a border of
// the type's lowest value, each row's windows reduced across (at the stride), then each
// column's down. Every loop runs at full vector width; ResNet's 3x3 stride-2 pool went from a
// scalar walk over every window to a few passes over the plane. For planes without NaN the
// result is the generic loop's (max is exact); a NaN is skipped rather than kept. INT8
// graphs pool their quantized bytes the same way.
// A 3-D pool is separable the same way: the depth window's slices (`depthTaps` of them,
// `depthStride` apart, all inside the input) reduced element by element into `slab` first.
template <typename T>
constexpr T maxPoolBorder() {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

template <typename T>
[[gnu::always_inline]] inline void maxPoolPlane(const DepthwisePlane& g, const T* src, int64_t depthTaps,
                                                int64_t depthStride, T* slab, T* dst, T* padded, T* across) {
    if (depthTaps > 1) {
        const int64_t size = g.ih * g.iw;
        T* __restrict acc = slab;
        std::memcpy(acc, src, size_t(size) * sizeof(T));
        for (int64_t t = 1; t < depthTaps; ++t) {
            const T* __restrict in = src + t * depthStride;
            for (int64_t i = 0; i < size; ++i) acc[i] = in[i] > acc[i] ? in[i] : acc[i];
        }
        src = slab;
    }
    borderedCopy(g, src, padded, maxPoolBorder<T>());
    // The sizes in locals: a store through a byte pointer may alias g, which would reload
    // them on every element and keep the byte loops scalar.
    const int64_t paddedH = g.paddedH, paddedW = g.paddedW, oh = g.oh, ow = g.ow, kh = g.kh, kw = g.kw, sh = g.sh;
    // Across each row at a stride known to the compiler where it is 2 (ResNet's stem pool):
    // at a run-time stride only floats vectorize (by gathers), bytes not at all.
    auto acrossRows = [&]<int64_t Stride>(std::integral_constant<int64_t, Stride>) {
        const int64_t sw = Stride ? Stride : g.sw;
        for (int64_t r = 0; r < paddedH; ++r) {
            const T* __restrict row = padded + r * paddedW;
            T* __restrict out = across + r * ow;
            for (int64_t ox = 0; ox < ow; ++ox) out[ox] = row[ox * sw];
            for (int64_t kx = 1; kx < kw; ++kx)
                for (int64_t ox = 0; ox < ow; ++ox) {
                    const T v = row[ox * sw + kx];
                    out[ox] = v > out[ox] ? v : out[ox];
                }
        }
    };
    if (g.sw == 2) acrossRows(std::integral_constant<int64_t, 2>());
    else acrossRows(std::integral_constant<int64_t, 0>());
    for (int64_t oy = 0; oy < oh; ++oy) {
        T* __restrict out = dst + oy * ow;
        std::memcpy(out, across + oy * sh * ow, size_t(ow) * sizeof(T));
        for (int64_t ky = 1; ky < kh; ++ky) {
            const T* __restrict in = across + (oy * sh + ky) * ow;
            for (int64_t ox = 0; ox < ow; ++ox) out[ox] = in[ox] > out[ox] ? in[ox] : out[ox];
        }
    }
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void maxPoolPlaneFloat(
    const DepthwisePlane& g, const float* src, int64_t depthTaps, int64_t depthStride, float* slab, float* dst,
    float* padded, float* across) {
    maxPoolPlane(g, src, depthTaps, depthStride, slab, dst, padded, across);
}
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void maxPoolPlaneU8(
    const DepthwisePlane& g, const uint8_t* src, int64_t depthTaps, int64_t depthStride, uint8_t* slab, uint8_t* dst,
    uint8_t* padded, uint8_t* across) {
    maxPoolPlane(g, src, depthTaps, depthStride, slab, dst, padded, across);
}
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]] void maxPoolPlaneS8(
    const DepthwisePlane& g, const int8_t* src, int64_t depthTaps, int64_t depthStride, int8_t* slab, int8_t* dst,
    int8_t* padded, int8_t* across) {
    maxPoolPlane(g, src, depthTaps, depthStride, slab, dst, padded, across);
}

template <typename T>
void maxPoolPlaneOf(const DepthwisePlane& g, const T* src, int64_t depthTaps, int64_t depthStride, T* slab, T* dst,
                    T* padded, T* across) {
    if constexpr (std::is_same_v<T, float>) maxPoolPlaneFloat(g, src, depthTaps, depthStride, slab, dst, padded, across);
    else if constexpr (std::is_same_v<T, uint8_t>) maxPoolPlaneU8(g, src, depthTaps, depthStride, slab, dst, padded, across);
    else maxPoolPlaneS8(g, src, depthTaps, depthStride, slab, dst, padded, across);
}

// Whether maxPoolPlanes takes a 2-D max pool of this element type.
template <typename T>
constexpr bool hasMaxPoolPlane() {
    return std::is_same_v<T, float> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>;
}

// Every plane of a max pool of 1, 2 or 3 spatial dims without dilation through
// maxPoolPlane: 1-D as planes one row high, 3-D as 2-D pools of each depth window's maximum
// (S3D's and I3D's 3x3x3 pools ran the generic index walk, 1.5 s of 1.8 here).
template <typename T>
void maxPoolPlanes(ThreadPool& pool, const T* x, T* y, int64_t planes, const ConvGeometry& g) {
    const size_t nd = g.in.size(), w = nd - 1;
    // The second-to-last dim, or what a 1-D pool's one row has there.
    auto rows = [&](const std::vector<int64_t>& v, int64_t oneDim) { return nd == 1 ? oneDim : v[w - 1]; };
    const int64_t ih = rows(g.in, 1), iw = g.in[w], oh = rows(g.out, 1), ow = g.out[w];
    const int64_t kh = rows(g.kernel, 1), kw = g.kernel[w], sh = rows(g.strides, 1), sw = g.strides[w];
    const DepthwisePlane m{ih, iw, oh, ow, kh, kw, sh, sw, 1, 1, rows(g.padBegin, 0), g.padBegin[w],
                           (oh - 1) * sh + kh, (ow - 1) * sw + kw};
    const int64_t id = nd == 3 ? g.in[0] : 1, od = nd == 3 ? g.out[0] : 1;
    const int64_t kd = nd == 3 ? g.kernel[0] : 1, sd = nd == 3 ? g.strides[0] : 1, pd = nd == 3 ? g.padBegin[0] : 0;
    pool.parallelFor(planes * od, 1, [&](int64_t b, int64_t e) {
        std::vector<T> padded(static_cast<size_t>(m.paddedH * m.paddedW));
        std::vector<T> across(static_cast<size_t>(m.paddedH * m.ow));
        std::vector<T> slab(static_cast<size_t>(kd > 1 ? ih * iw : 0));
        for (int64_t t = b; t < e; ++t) {
            const int64_t plane = t / od, z = t % od;
            T* dst = y + t * oh * ow;
            const Taps depth = insideTaps(z, sd, pd, 1, kd, id);
            if (depth.first >= depth.last) {  // a window all in the padding (ceil_mode)
                std::fill(dst, dst + oh * ow, maxPoolBorder<T>());
                continue;
            }
            const T* src = x + (plane * id + z * sd - pd + depth.first) * ih * iw;
            maxPoolPlaneOf(m, src, depth.last - depth.first, ih * iw, slab.data(), dst, padded.data(), across.data());
        }
    });
}

// Max and average pooling over 2-D planes without the generic index walk: each window is
// clipped to the input once, then read row by row. Same results as the generic loop.
// out[i] = sum of the n arrays' element i, n known at compile time up to 7 so each output is
// one vectorizable expression (a loop over the arrays inside would not vectorize).
template <int N>
[[gnu::always_inline]] inline void sumArraysOf(const float* const* in, float* out, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        float s = in[0][i];
#pragma GCC unroll 7
        for (int q = 1; q < N; ++q) s += in[q][i];
        out[i] = s;
    }
}
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void sumArrays(const float* const* in, int n, float* out,
                                                                               int64_t count) {
    switch (n) {
        case 1: sumArraysOf<1>(in, out, count); return;
        case 2: sumArraysOf<2>(in, out, count); return;
        case 3: sumArraysOf<3>(in, out, count); return;
        case 4: sumArraysOf<4>(in, out, count); return;
        case 5: sumArraysOf<5>(in, out, count); return;
        case 6: sumArraysOf<6>(in, out, count); return;
        case 7: sumArraysOf<7>(in, out, count); return;
        default:
            sumArraysOf<7>(in, out, count);
            for (int q = 7; q < n; ++q) accumulateArray(in[q], out, count);
    }
}

// Average pooling at stride 1 without dilation (PoolFormer's 3x3 token mixer on NCHW planes),
// separably in float: the windows' sums across each input row, then down each output
// column, then one division by a plane of divisors. Where the output row is as long as the
// input's, the sums across run over the whole plane at once (the columns near an edge,
// whose windows would wrap into the next row, are summed again on their own), and the
// rows whose windows lie inside the image sum down in one call: a 14 x 14 plane is then a
// handful of calls, not two per row. The scalar loop summed every window in double: 1.13 ms
// on 64 planes of 56 x 56.
void averagePoolStride1(ThreadPool& pool, bool countIncludePad, const float* x, float* y, int64_t planes,
                        const ConvGeometry& g, const std::vector<int64_t>& padEnd, const std::vector<Taps>& cols,
                        const std::vector<int64_t>& colPadCount) {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1],
                  ph = g.padBegin[0], pw = g.padBegin[1];
    std::vector<Taps> rows(static_cast<size_t>(oh));
    std::vector<float> divisors(static_cast<size_t>(oh * ow));
    for (int64_t oy = 0; oy < oh; ++oy) {
        rows[size_t(oy)] = insideTaps(oy, 1, ph, 1, kh, ih);
        const int64_t rowStart = oy - ph, rowEnd = std::min(rowStart + kh, ih + padEnd[0]);
        const int64_t rowCount = countIncludePad ? rowEnd - rowStart : rows[size_t(oy)].last - rows[size_t(oy)].first;
        for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t colCount = countIncludePad ? colPadCount[size_t(ox)] : cols[size_t(ox)].last - cols[size_t(ox)].first;
            divisors[size_t(oy * ow + ox)] = float(std::max<int64_t>(rowCount * colCount, 1));
        }
    }
    auto whole = [](const Taps& t, int64_t k) { return t.first == 0 && t.last == k; };
    // Columns [lo, hi) and rows [top, bottom) have every tap inside the image.
    int64_t lo = 0, top = 0;
    while (lo < ow && !whole(cols[size_t(lo)], kw)) ++lo;
    int64_t hi = lo;
    while (hi < ow && whole(cols[size_t(hi)], kw)) ++hi;
    while (top < oh && !whole(rows[size_t(top)], kh)) ++top;
    int64_t bottom = top;
    while (bottom < oh && whole(rows[size_t(bottom)], kh)) ++bottom;
    const bool flatAcross = ow == iw && hi > lo;
    pool.parallelFor(planes, 1, [&](int64_t b, int64_t e) {
        std::vector<float> across(static_cast<size_t>(ih * ow));
        std::vector<const float*> taps(static_cast<size_t>(std::max(kh, kw)));
        for (int64_t p = b; p < e; ++p) {
            const float* src = x + p * ih * iw;
            float* dst = y + p * oh * ow;
            auto sumAcrossColumn = [&](int64_t iy, int64_t ox) {
                const Taps c = cols[size_t(ox)];
                float acc = 0;
                for (int64_t kx = c.first; kx < c.last; ++kx) acc += src[iy * iw + ox - pw + kx];
                across[size_t(iy * ow + ox)] = acc;
            };
            if (flatAcross) {
                // Element i of the plane from i - pw .. i - pw + kw - 1: right inside each row's
                // interior, wrapped at its edges, which are then summed again.
                const int64_t first = lo, last = ih * ow - (ow - hi);
                for (int64_t kx = 0; kx < kw; ++kx) taps[size_t(kx)] = src + first - pw + kx;
                sumArrays(taps.data(), int(kw), across.data() + first, last - first);
                for (int64_t iy = 0; iy < ih; ++iy) {
                    for (int64_t ox = 0; ox < lo; ++ox) sumAcrossColumn(iy, ox);
                    for (int64_t ox = hi; ox < ow; ++ox) sumAcrossColumn(iy, ox);
                }
            } else {
                for (int64_t iy = 0; iy < ih; ++iy) {
                    if (hi > lo) {
                        for (int64_t kx = 0; kx < kw; ++kx) taps[size_t(kx)] = src + iy * iw + lo - pw + kx;
                        sumArrays(taps.data(), int(kw), across.data() + iy * ow + lo, hi - lo);
                    }
                    for (int64_t ox = 0; ox < ow; ++ox)
                        if (ox < lo || ox >= hi) sumAcrossColumn(iy, ox);
                }
            }
            auto sumDown = [&](int64_t oy0, int64_t oy1, const Taps& t) {
                if (t.last <= t.first) {
                    std::fill(dst + oy0 * ow, dst + oy1 * ow, 0.f);
                    return;
                }
                for (int64_t ky = t.first; ky < t.last; ++ky) taps[size_t(ky - t.first)] = across.data() + (oy0 - ph + ky) * ow;
                sumArrays(taps.data(), int(t.last - t.first), dst + oy0 * ow, (oy1 - oy0) * ow);
            };
            for (int64_t oy = 0; oy < top; ++oy) sumDown(oy, oy + 1, rows[size_t(oy)]);
            if (bottom > top) sumDown(top, bottom, rows[size_t(top)]);
            for (int64_t oy = std::max(bottom, top); oy < oh; ++oy) sumDown(oy, oy + 1, rows[size_t(oy)]);
            divideArrays(dst, divisors.data(), dst, oh * ow);
        }
    });
}

template <typename T>
void pool2d(ThreadPool& pool, PoolKind kind, bool countIncludePad, const T* x, T* y, int64_t planes,
            const ConvGeometry& g, const std::vector<int64_t>& padEnd) {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
    const int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
    const int64_t dh = g.dilations[0], dw = g.dilations[1], ph = g.padBegin[0], pw = g.padBegin[1];
    if constexpr (hasMaxPoolPlane<T>()) {
        if (kind == PoolKind::Max && dh == 1 && dw == 1 && oh > 0 && ow > 0) {
            maxPoolPlanes(pool, x, y, planes, g);
            return;
        }
    }
    std::vector<Taps> cols(static_cast<size_t>(ow));
    std::vector<int64_t> colPadCount(static_cast<size_t>(ow));
    for (int64_t ox = 0; ox < ow; ++ox) {
        cols[size_t(ox)] = insideTaps(ox, sw, pw, dw, kw, iw);
        const int64_t start = ox * sw - pw, end = std::min(start + (kw - 1) * dw + 1, iw + padEnd[1]);
        colPadCount[size_t(ox)] = (end - start + dw - 1) / dw;
    }
    if constexpr (std::is_same_v<T, float>) {
        if (kind == PoolKind::Average && sh == 1 && sw == 1 && dh == 1 && dw == 1 && oh > 0 && ow > 0) {
            averagePoolStride1(pool, countIncludePad, x, y, planes, g, padEnd, cols, colPadCount);
            return;
        }
    }
    pool.parallelFor(planes, 1, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
            const T* src = x + p * ih * iw;
            T* dst = y + p * oh * ow;
            for (int64_t oy = 0; oy < oh; ++oy) {
                const Taps rows = insideTaps(oy, sh, ph, dh, kh, ih);
                const int64_t rowStart = oy * sh - ph;
                const int64_t rowEnd = std::min(rowStart + (kh - 1) * dh + 1, ih + padEnd[0]);
                const int64_t rowPadCount = (rowEnd - rowStart + dh - 1) / dh;
                for (int64_t ox = 0; ox < ow; ++ox) {
                    const Taps c = cols[size_t(ox)];
                    const int64_t colStart = ox * sw - pw;
                    if (kind == PoolKind::Max) {
                        T acc = -std::numeric_limits<T>::infinity();
                        if (rows.first < rows.last && c.first < c.last) {
                            // Seeded with the first tap, as the generic loop is (NaN stays NaN).
                            acc = src[(rowStart + rows.first * dh) * iw + colStart + c.first * dw];
                            for (int64_t ky = rows.first; ky < rows.last; ++ky) {
                                const T* row = src + (rowStart + ky * dh) * iw + colStart;
                                for (int64_t kx = c.first; kx < c.last; ++kx) {
                                    const T v = row[kx * dw];
                                    acc = v > acc ? v : acc;
                                }
                            }
                        }
                        dst[oy * ow + ox] = acc;
                    } else {
                        double acc = 0;
                        for (int64_t ky = rows.first; ky < rows.last; ++ky) {
                            const T* row = src + (rowStart + ky * dh) * iw + colStart;
                            for (int64_t kx = c.first; kx < c.last; ++kx) acc += double(row[kx * dw]);
                        }
                        const int64_t count = (rows.last - rows.first) * (c.last - c.first);
                        const int64_t divisor = countIncludePad ? rowPadCount * colPadCount[size_t(ox)] : std::max<int64_t>(count, 1);
                        dst[oy * ow + ox] = T(acc / double(divisor));
                    }
                }
            }
        }
    });
}

// GlobalAveragePool / GlobalMaxPool over float planes: eight running lanes per plane so the
// loop vectorizes (the sum widened to double, as the windowed path sums).
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void globalPoolPlane(bool average, const float* src, int64_t n,
                                                                         float* dst) {
    constexpr int64_t kLanes = 8;
    const int64_t whole = n / kLanes * kLanes;
    if (average) {
        double lanes[kLanes] = {};
        for (int64_t i = 0; i < whole; i += kLanes)
            for (int64_t j = 0; j < kLanes; ++j) lanes[j] += double(src[i + j]);
        double sum = 0;
        for (double v : lanes) sum += v;
        for (int64_t i = whole; i < n; ++i) sum += double(src[i]);
        *dst = float(sum / double(std::max<int64_t>(n, 1)));
        return;
    }
    float lanes[kLanes];
    std::fill(lanes, lanes + kLanes, -std::numeric_limits<float>::infinity());
    bool nan = false;
    for (int64_t i = 0; i < whole; i += kLanes)
        for (int64_t j = 0; j < kLanes; ++j) {
            const float v = src[i + j];
            nan = nan || v != v;
            lanes[j] = v > lanes[j] ? v : lanes[j];
        }
    float best = -std::numeric_limits<float>::infinity();
    for (float v : lanes) best = v > best ? v : best;
    for (int64_t i = whole; i < n; ++i) {
        nan = nan || src[i] != src[i];
        best = src[i] > best ? src[i] : best;
    }
    *dst = nan ? std::numeric_limits<float>::quiet_NaN() : best;
}

class PoolKernel : public Kernel {
public:
    PoolKernel(const KernelInit& init, PoolKind kind, bool global) : m_kind(kind), m_global(global) {
        m_attrs = readWindowAttrs(init);
        m_ceil = init.getInt("ceil_mode", 0) != 0;
        m_countIncludePad = init.getInt("count_include_pad", 0) != 0;
        m_p = init.getInt("p", 2);
        m_storageOrder = init.getInt("storage_order", 0);
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x || x->rank() < 3) return bad(ctx, "X must have rank >= 3");
        const int64_t n = x->dims[0], c = x->dims[1];
        std::vector<int64_t> spatial(x->dims.begin() + 2, x->dims.end());
        WindowAttrs attrs = m_attrs;
        std::vector<int64_t> kernel = m_global ? spatial : attrs.kernelShape;
        if (m_global) attrs = WindowAttrs{};
        if (kernel.size() != spatial.size()) return bad(ctx, "kernel_shape does not match the input rank");
        auto geo = convGeometry(ctx, attrs, spatial, kernel, m_ceil);
        if (!geo) return geo.status();
        std::vector<int64_t> outDims{n, c};
        outDims.insert(outDims.end(), geo->out.begin(), geo->out.end());
        auto out = ctx.output(0, x->dtype, outDims);
        if (!out) return out.status();
        RtTensor* indices = nullptr;
        if (ctx.outputWanted(1)) {
            auto idx = ctx.output(1, DType::Int64, outDims);
            if (!idx) return idx.status();
            indices = *idx;
        }
        const size_t nd = spatial.size();
        const int64_t inSize = product(spatial), outSize = product(geo->out), kSize = product(kernel);
        // Padded extent used by count_include_pad (the explicit pads, clipped by ceil_mode).
        std::vector<int64_t> padEnd(nd, 0);
        if (!m_global && !attrs.pads.empty() && attrs.autoPad == "NOTSET")
            for (size_t d = 0; d < nd; ++d) padEnd[d] = attrs.pads[d + nd];
        const auto inStrides = stridesOf(spatial);
        return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const T* px = x->as<T>();
            T* py = (*out)->template as<T>();
            if constexpr (std::is_same_v<T, float>) {
                if (m_global && !indices && m_kind != PoolKind::Lp) {
                    ctx.pool().parallelFor(n * c, std::max<int64_t>(1, 16384 / std::max<int64_t>(inSize, 1)),
                                           [&](int64_t b, int64_t e) {
                                               for (int64_t p = b; p < e; ++p)
                                                   globalPoolPlane(m_kind == PoolKind::Average, px + p * inSize, inSize, py + p);
                                           });
                    return Status::ok();
                }
            }
            if constexpr (hasMaxPoolPlane<T>()) {
                const bool undilated = std::all_of(geo->dilations.begin(), geo->dilations.end(), [](int64_t d) { return d == 1; });
                if ((nd == 1 || nd == 3) && !indices && m_kind == PoolKind::Max && undilated && outSize > 0) {
                    maxPoolPlanes<T>(ctx.pool(), px, py, n * c, *geo);
                    return Status::ok();
                }
            }
            if constexpr (std::is_floating_point_v<T> || hasMaxPoolPlane<T>()) {
                if (nd == 2 && !indices && (std::is_floating_point_v<T> ? m_kind != PoolKind::Lp : m_kind == PoolKind::Max)) {
                    pool2d<T>(ctx.pool(), m_kind, m_countIncludePad, px, py, n * c, *geo, padEnd);
                    return Status::ok();
                }
            }
            ctx.pool().parallelFor(n * c, 1, [&](int64_t b, int64_t e) {
                std::vector<int64_t> oIdx(nd), kIdx(nd);
                for (int64_t plane = b; plane < e; ++plane) {
                    const T* src = px + plane * inSize;
                    std::fill(oIdx.begin(), oIdx.end(), 0);
                    for (int64_t o = 0; o < outSize; ++o) {
                        double acc = m_kind == PoolKind::Max ? -std::numeric_limits<double>::infinity() : 0.0;
                        int64_t count = 0, best = -1, padCount = 1;
                        for (size_t d = 0; d < nd; ++d) {
                            // Window extent within [−padBegin, in + padEnd) for count_include_pad.
                            const int64_t start = oIdx[d] * geo->strides[d] - geo->padBegin[d];
                            const int64_t end = std::min(start + (kernel[d] - 1) * geo->dilations[d] + 1, spatial[d] + padEnd[d]);
                            padCount *= (end - start + geo->dilations[d] - 1) / geo->dilations[d];
                        }
                        std::fill(kIdx.begin(), kIdx.end(), 0);
                        for (int64_t k = 0; k < kSize; ++k) {
                            int64_t off = 0;
                            bool inside = true;
                            for (size_t d = 0; d < nd; ++d) {
                                const int64_t p = oIdx[d] * geo->strides[d] + kIdx[d] * geo->dilations[d] - geo->padBegin[d];
                                if (p < 0 || p >= spatial[d]) inside = false;
                                off += p * inStrides[d];
                            }
                            if (inside) {
                                const double v = double(src[off]);
                                if (m_kind == PoolKind::Max) {
                                    if (v > acc || best < 0) {
                                        acc = v;
                                        best = off;
                                    }
                                } else if (m_kind == PoolKind::Average) {
                                    acc += v;
                                } else {
                                    acc += std::pow(std::fabs(v), double(m_p));
                                }
                                ++count;
                            }
                            for (size_t d = nd; d-- > 0;) {
                                if (++kIdx[d] < kernel[d]) break;
                                kIdx[d] = 0;
                            }
                        }
                        double value = acc;
                        if (m_kind == PoolKind::Average) value = acc / double(m_countIncludePad ? padCount : std::max<int64_t>(count, 1));
                        if (m_kind == PoolKind::Lp) value = std::pow(acc, 1.0 / double(m_p));
                        py[plane * outSize + o] = T(value);
                        if (indices) {
                            int64_t flat = best;
                            if (m_storageOrder == 1 && nd == 2 && best >= 0)
                                flat = (best % spatial[1]) * spatial[0] + best / spatial[1];
                            indices->as<int64_t>()[plane * outSize + o] = plane * inSize + flat;
                        }
                        for (size_t d = nd; d-- > 0;) {
                            if (++oIdx[d] < geo->out[d]) break;
                            oIdx[d] = 0;
                        }
                    }
                }
            });
            return Status::ok();
        });
    }

private:
    PoolKind m_kind;
    bool m_global;
    WindowAttrs m_attrs;
    bool m_ceil = false;
    bool m_countIncludePad = false;
    int64_t m_p = 2;
    int64_t m_storageOrder = 0;
};

KernelFactory pool(PoolKind kind, bool global) {
    return [kind, global](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new PoolKernel(init, kind, global));
    };
}

}  // namespace

// ai.fusescope.MaxPool: ONNX's MaxPool (its attributes, one output) on X [N, H, W, C].
class ChannelsLastMaxPool : public Kernel {
public:
    explicit ChannelsLastMaxPool(const KernelInit& init) : m_attrs(readWindowAttrs(init)), m_ceil(init.getInt("ceil_mode", 0) != 0) {}
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        if (!x || x->rank() != 4) return bad(ctx, "a channels-last MaxPool needs X [N, H, W, C]");
        if (m_attrs.kernelShape.size() != 2) return bad(ctx, "kernel_shape must have 2 dims");
        const int64_t n = x->dims[0], c = x->dims[3];
        auto geo = convGeometry(ctx, m_attrs, {x->dims[1], x->dims[2]}, m_attrs.kernelShape, m_ceil);
        if (!geo) return geo.status();
        auto out = ctx.output(0, x->dtype, {n, geo->out[0], geo->out[1], c});
        if (!out) return out.status();
        const NhwcWindow s{n, c, x->dims[1], x->dims[2], geo->out[0], geo->out[1], geo->kernel[0], geo->kernel[1],
                           geo->strides[0], geo->strides[1], geo->dilations[0], geo->dilations[1],
                           geo->padBegin[0], geo->padBegin[1]};
        if ((*out)->numel() == 0) return Status::ok();
        if (x->dtype == DType::Float32) maxPoolNhwc(ctx.pool(), s, x->as<float>(), (*out)->as<float>());
        else if (x->dtype == DType::Float64) maxPoolNhwc(ctx.pool(), s, x->as<double>(), (*out)->as<double>());
        else if (x->dtype == DType::UInt8) maxPoolNhwc(ctx.pool(), s, x->as<uint8_t>(), (*out)->as<uint8_t>());
        else if (x->dtype == DType::Int8) maxPoolNhwc(ctx.pool(), s, x->as<int8_t>(), (*out)->as<int8_t>());
        else return bad(ctx, "a channels-last MaxPool takes float32, float64, uint8 or int8");
        return Status::ok();
    }

private:
    WindowAttrs m_attrs;
    bool m_ceil;
};

KernelFactory fusedConv() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        auto act = Activation::fromInit(init);
        if (!act) return act.status();
        return std::unique_ptr<Kernel>(new ConvKernel(init, *act));
    };
}

KernelFactory channelsLastMaxPool() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        if (init.getInt("storage_order", 0) != 0) return init.invalid("a channels-last MaxPool has no storage_order");
        return std::unique_ptr<Kernel>(new ChannelsLastMaxPool(init));
    };
}

}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerConvKernels(KernelRegistry& r) {
    r.add("Conv", factoryOf<ConvKernel>(), {.variant = "onednn"});
    r.add("ConvTranspose", factoryOf<ConvTransposeKernel>(), {.variant = "col2im_gemm"});
    r.add("MaxPool", pool(PoolKind::Max, false));
    r.add("AveragePool", pool(PoolKind::Average, false));
    r.add("LpPool", pool(PoolKind::Lp, false));
    r.add("GlobalAveragePool", pool(PoolKind::Average, true));
    r.add("GlobalMaxPool", pool(PoolKind::Max, true));
    r.add("GlobalLpPool", pool(PoolKind::Lp, true));
}

}  // namespace fsc
