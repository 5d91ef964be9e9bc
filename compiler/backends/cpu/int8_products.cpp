#include "compiler/backends/cpu/int8_products.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/im2col.h"

namespace fsc::cpu {
namespace {

// x's bytes as the GEMM reads them, in place: int8, or uint8 (Uint8Operands), with its zero
// point in int8 terms (a uint8 one less 128) and the byte that stands for it in x's storage
// (what padding is filled with).
struct Int8View {
    const int8_t* data = nullptr;
    int8_t zero = 0;
    int8_t storedZero = 0;
    bool isUint8 = false;
};

Int8View int8View(const RtTensor& x, const RtTensor* zero) {
    const int64_t z = zero && zero->numel() == 1 ? elementAsInt(*zero, 0) : 0;
    const bool isUint8 = x.dtype == DType::UInt8;
    return {static_cast<const int8_t*>(x.data), int8_t(isUint8 ? z - 128 : z), int8_t(z), isUint8};
}

// The same values as int8 bytes: uint8 ones flipped into `copy` (x - 128, the zero point with
// it), across the pool; int8 ones as they are.
Int8View signedView(ThreadPool& pool, const RtTensor& x, const RtTensor* zero, std::unique_ptr<int8_t[]>& copy) {
    Int8View view = int8View(x, zero);
    if (!view.isUint8) return view;
    copy = std::make_unique_for_overwrite<int8_t[]>(size_t(x.numel()));
    pool.parallelFor(x.numel(), 1 << 16, [&](int64_t b, int64_t e) {
        const int8_t* __restrict in = view.data;
        int8_t* __restrict out = copy.get();
        for (int64_t i = b; i < e; ++i) out[i] = int8_t(in[i] ^ 0x80);
    });
    return {copy.get(), view.zero, view.zero, false};
}

// out[oy][ox] = sum over taps of tap * padded[oy sh + ky dh][ox sw + kx dw], int32.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void addDepthwiseTaps(
    const int32_t* padded, int64_t paddedW, const int32_t* taps, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh,
    int64_t dw, int64_t oh, int64_t ow, int32_t* out) {
    for (int64_t oy = 0; oy < oh; ++oy) {
        int32_t* __restrict row = out + oy * ow;
        std::fill(row, row + ow, 0);
        for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
                const int32_t t = taps[ky * kw + kx];
                const int32_t* __restrict in = padded + (oy * sh + ky * dh) * paddedW + kx * dw;
                if (sw == 1)
                    for (int64_t ox = 0; ox < ow; ++ox) row[ox] += t * in[ox];
                else
                    for (int64_t ox = 0; ox < ow; ++ox) row[ox] += t * in[ox * sw];
            }
    }
}

bool allZero(const RtTensor* zero) {
    if (!zero) return true;
    for (int64_t i = 0; i < zero->numel(); ++i)
        if (elementAsInt(*zero, i) != 0) return false;
    return true;
}

}  // namespace

bool fitsInt8Gemm(const RtTensor& x, const RtTensor* xZero, const RtTensor& w, const RtTensor* wZero,
                  int64_t wChannelAxis) {
    // X: one zero point, or per channel when every one is 0. W: the same, or one per output
    // channel (taken off after the GEMM, see perChannelZeros).
    auto eightBit = [](const RtTensor& t, const RtTensor* zero) {
        return (t.dtype == DType::Int8 || t.dtype == DType::UInt8) && (!zero || zero->dtype == t.dtype);
    };
    auto oneOffset = [](const RtTensor* zero) { return !zero || zero->numel() <= 1 || allZero(zero); };
    const bool wPerChannel = wZero && wZero->rank() == 1 && wChannelAxis < int64_t(w.rank()) &&
                             wZero->numel() == w.dims[size_t(wChannelAxis)];
    return eightBit(x, xZero) && oneOffset(xZero) && eightBit(w, wZero) && (oneOffset(wZero) || wPerChannel);
}

namespace {

// Zero points of W, one per output channel, that the GEMM cannot take (null when it can).
const RtTensor* perChannelZeros(const RtTensor* wZero) {
    return wZero && wZero->numel() > 1 && !allZero(wZero) ? wZero : nullptr;
}

}  // namespace

Result<RtTensor> int8MatMul(KernelContext& ctx, const RtTensor& a, const RtTensor* aZero, const RtTensor& b,
                            const RtTensor* bZero) {
    if (a.rank() < 1 || b.rank() != 2 || a.dims.back() != b.dims[0])
        return bad(ctx, "cannot multiply " + dimsString(a.dims) + " by " + dimsString(b.dims));
    const int64_t k = b.dims[0], n = b.dims[1], rows = k ? a.numel() / k : 0;
    std::vector<int64_t> dims = a.dims;
    if (dims.size() == 1) dims = {n};
    else dims.back() = n;
    RtTensor out = allocateTensor(DType::Int32, dims);
    const RtTensor* columnZeros = perChannelZeros(bZero);
    const Int8View sa = int8View(a, aZero), sb = int8View(b, columnZeros ? nullptr : bZero);
    gemmS8S8(false, false, rows, n, k, sa.data, k, sa.zero, sb.data, n, sb.zero, out.as<int32_t>(), n, nullptr,
             {sa.isUint8, sb.isUint8});
    if (!columnZeros) return out;
    const int64_t az = aZero && aZero->numel() == 1 ? elementAsInt(*aZero, 0) : 0;
    std::vector<int32_t> zb(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) zb[size_t(j)] = int32_t(elementAsInt(*columnZeros, j));
    int32_t* po = out.as<int32_t>();
    ctx.pool().parallelFor(rows, 16, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) {
            int32_t rowSum = 0;  // of a - a_zero over the row
            if (a.dtype == DType::UInt8)
                for (int64_t p = 0; p < k; ++p) rowSum += int32_t(a.as<uint8_t>()[i * k + p]);
            else
                for (int64_t p = 0; p < k; ++p) rowSum += int32_t(a.as<int8_t>()[i * k + p]);
            rowSum -= int32_t(az * k);
            int32_t* row = po + i * n;
            for (int64_t j = 0; j < n; ++j) row[j] -= zb[size_t(j)] * rowSum;
        }
    });
    return out;
}

namespace {

// int8Conv for W with one zero point per output channel: the convolution with no W zero
// point, less zw[m] times each window's sum of x - zx, which is X convolved with ones (one
// output per group, through the same padding, strides and dilations).
Status int8ConvLessChannelZeros(KernelContext& ctx, const WindowAttrs& attrs, int64_t group, const RtTensor& x,
                                const RtTensor* xZero, const RtTensor& w, const RtTensor& wZero,
                                const Int32Alloc& alloc, OneDnnInt8Conv* primitive, bool weightsConstant,
                                PackedRowsCache* packed, Int8Winograd* winograd) {
    if (wZero.numel() != w.dims[0])
        return bad(ctx, "zero point " + dimsString(wZero.dims) + " does not fit W " + dimsString(w.dims));
    int32_t* y = nullptr;
    std::vector<int64_t> outDims;
    FSC_RETURN_IF_ERROR(int8Conv(
        ctx, attrs, group, x, xZero, w, nullptr,
        [&](const std::vector<int64_t>& dims) -> Result<int32_t*> {
            outDims = dims;
            auto out = alloc(dims);
            if (out) y = *out;
            return out;
        },
        primitive, weightsConstant, packed, winograd));
    std::vector<int64_t> onesDims = w.dims;
    onesDims[0] = group;
    RtTensor ones = allocateTensor(DType::UInt8, onesDims);
    std::memset(ones.data, 1, size_t(ones.bytes()));
    std::vector<int32_t> sums;
    FSC_RETURN_IF_ERROR(int8Conv(ctx, attrs, group, x, xZero, ones, nullptr,
                                 [&](const std::vector<int64_t>& dims) -> Result<int32_t*> {
                                     sums.resize(size_t(product(dims)));
                                     return sums.data();
                                 }));
    const int64_t m = outDims[1], mg = m / group, outSize = product(outDims, 2);
    std::vector<int32_t> zw(static_cast<size_t>(m));
    for (int64_t c = 0; c < m; ++c) zw[size_t(c)] = int32_t(elementAsInt(wZero, c));
    ctx.pool().parallelFor(outDims[0] * m, 1, [&](int64_t first, int64_t last) {
        for (int64_t plane = first; plane < last; ++plane) {
            const int64_t img = plane / m, channel = plane % m;
            const int32_t* __restrict s = sums.data() + (img * group + channel / mg) * outSize;
            int32_t* __restrict out = y + plane * outSize;
            const int32_t z = zw[size_t(channel)];
            for (int64_t p = 0; p < outSize; ++p) out[p] -= z * s[p];
        }
    });
    return Status::ok();
}

}  // namespace

namespace {

// Depthwise convolution (one input and one output channel a group) in int32: each plane's
// values less the zero point, widened into a bordered copy (the border adds nothing), then
// one row update per tap. The general path ran a GEMM of one row per channel: MobileNetV2's
// 960-channel 7 x 7 layers took 1.1 ms each, its 96-channel 112 x 112 one 1.2 ms.
template <typename X, typename W>
void depthwiseInt8Planes(ThreadPool& pool, const X* x, int32_t xZero, const W* w, int32_t wZero, const ConvGeometry& g,
                         int64_t planes, int64_t channels, int32_t* y) {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
    const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
    const int64_t ph = g.padBegin[0], pw = g.padBegin[1];
    const int64_t paddedH = (oh - 1) * sh + (kh - 1) * dh + 1, paddedW = (ow - 1) * sw + (kw - 1) * dw + 1;
    pool.parallelFor(planes, 1, [&](int64_t p0, int64_t p1) {
        std::vector<int32_t> padded(size_t(paddedH * paddedW)), taps(size_t(kh * kw));
        for (int64_t p = p0; p < p1; ++p) {
            const X* plane = x + p * ih * iw;
            std::fill(padded.begin(), padded.end(), 0);
            for (int64_t r = 0; r < paddedH; ++r) {
                const int64_t sy = r - ph;
                if (sy < 0 || sy >= ih) continue;
                const int64_t c0 = std::max<int64_t>(0, pw), c1 = std::min<int64_t>(paddedW, iw + pw);
                for (int64_t col = c0; col < c1; ++col)
                    padded[size_t(r * paddedW + col)] = int32_t(plane[sy * iw + col - pw]) - xZero;
            }
            const W* wp = w + (p % channels) * kh * kw;
            for (int64_t k = 0; k < kh * kw; ++k) taps[size_t(k)] = int32_t(wp[k]) - wZero;
            addDepthwiseTaps(padded.data(), paddedW, taps.data(), kh, kw, sh, sw, dh, dw, oh, ow, y + p * oh * ow);
        }
    });
}

}  // namespace

Status int8Conv(KernelContext& ctx, const WindowAttrs& attrs, int64_t group, const RtTensor& x,
                const RtTensor* xZero, const RtTensor& w, const RtTensor* wZero, const Int32Alloc& alloc,
                OneDnnInt8Conv* primitive, bool weightsConstant, PackedRowsCache* packed, Int8Winograd* winograd) {
    if (x.rank() < 3 || w.rank() != x.rank()) return bad(ctx, "X and W must have the same rank >= 3");
    const int64_t n = x.dims[0], c = x.dims[1], m = w.dims[0];
    if (group <= 0 || c % group || m % group || w.dims[1] != c / group)
        return bad(ctx, "W " + dimsString(w.dims) + " does not fit X " + dimsString(x.dims));
    const std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end()), kernel(w.dims.begin() + 2, w.dims.end());
    auto geo = convGeometry(ctx, attrs, spatial, kernel, false);
    if (!geo) return geo.status();
    geo->channels = c;
    std::vector<int64_t> outDims{n, m};
    outDims.insert(outDims.end(), geo->out.begin(), geo->out.end());
    if (const RtTensor* channelZeros = perChannelZeros(wZero))
        return int8ConvLessChannelZeros(ctx, attrs, group, x, xZero, w, *channelZeros, alloc, primitive,
                                        weightsConstant, packed, winograd);
    auto out = alloc(outDims);
    if (!out) return out.status();
    if (group > 1 && group == c && m == c && spatial.size() == 2 && (!xZero || xZero->numel() <= 1)) {
        // (per-channel weight zero points that differ were taken off above: these are one value)
        const int32_t xz = xZero && xZero->numel() ? int32_t(elementAsInt(*xZero, 0)) : 0;
        const int32_t wz = wZero && wZero->numel() ? int32_t(elementAsInt(*wZero, 0)) : 0;
        const bool xu = x.dtype == DType::UInt8, wu = w.dtype == DType::UInt8;
        if ((xu || x.dtype == DType::Int8) && (wu || w.dtype == DType::Int8)) {
            if (xu && wu) depthwiseInt8Planes(ctx.pool(), x.as<uint8_t>(), xz, w.as<uint8_t>(), wz, *geo, n * c, c, *out);
            else if (xu) depthwiseInt8Planes(ctx.pool(), x.as<uint8_t>(), xz, w.as<int8_t>(), wz, *geo, n * c, c, *out);
            else if (wu) depthwiseInt8Planes(ctx.pool(), x.as<int8_t>(), xz, w.as<uint8_t>(), wz, *geo, n * c, c, *out);
            else depthwiseInt8Planes(ctx.pool(), x.as<int8_t>(), xz, w.as<int8_t>(), wz, *geo, n * c, c, *out);
            return Status::ok();
        }
    }
    if (primitive && OneDnnInt8Conv::preferred() && w.dtype == DType::Int8 && allZero(wZero) &&
        primitive->run(*geo, group, x, xZero ? int32_t(elementAsInt(*xZero, 0)) : 0, w, weightsConstant, *out))
        return Status::ok();
    if (winograd && winograd->run(ctx.pool(), *geo, group, x, xZero, w, wZero, weightsConstant, *out))
        return Status::ok();
    // Where the GEMM would flip a copy of each uint8 operand (oneDNN's), the image and W are
    // flipped once here instead: the im2col columns are up to kernel-size times the image.
    std::unique_ptr<int8_t[]> xCopy, wCopy;
    const bool inPlace = int8GemmReadsUint8InPlace();
    const Int8View sx = inPlace ? int8View(x, xZero) : signedView(ctx.pool(), x, xZero, xCopy);
    const Int8View sw = inPlace ? int8View(w, wZero) : signedView(ctx.pool(), w, wZero, wCopy);
    const Uint8Operands stored{sw.isUint8, sx.isUint8};
    PackedRowsCache* keep = weightsConstant && !wCopy ? packed : nullptr;  // a copy's address is new each call
    const int64_t cg = c / group, mg = m / group, rows = cg * product(kernel);
    const int64_t outSize = product(geo->out), inSize = product(spatial);
    // A 1x1 convolution with stride 1 and no padding reads the image as its own columns.
    bool pointwise = true;
    for (size_t d = 0; d < kernel.size(); ++d)
        pointwise &= kernel[d] == 1 && geo->strides[d] == 1 && geo->padBegin[d] == 0 && geo->out[d] == spatial[d];
    // Otherwise the columns are made a slice of output rows at a time, each slice small enough
    // to stay in cache between im2col writing it and the GEMM reading it (a 64-channel 3x3
    // layer at 128 x 128 has 9 MiB of columns).
    constexpr int64_t kSliceBytes = 1 << 20;
    const int64_t perOutRow = outSize / std::max<int64_t>(geo->out[0], 1);
    const int64_t bytesPerOutRow = std::max<int64_t>(rows * perOutRow, 1);
    const int64_t sliceRows = std::min(geo->out[0], std::max<int64_t>(1, kSliceBytes / bytesPerOutRow));
    const auto col = std::make_unique_for_overwrite<int8_t[]>(pointwise ? 0 : size_t(rows * sliceRows * perOutRow));
    for (int64_t img = 0; img < n; ++img)
        for (int64_t g = 0; g < group; ++g) {
            const int8_t* image = sx.data + (img * c + g * cg) * inSize;
            const int8_t* weights = sw.data + g * mg * rows;
            int32_t* y = *out + (img * m + g * mg) * outSize;
            if (pointwise) {
                gemmS8S8(false, false, mg, outSize, rows, weights, rows, sw.zero, image, outSize, sx.zero, y, outSize,
                         keep, stored);
                continue;
            }
            for (int64_t first = 0; first < geo->out[0]; first += sliceRows) {
                const int64_t count = std::min(sliceRows, geo->out[0] - first), columns = count * perOutRow;
                im2col<int8_t>(image, cg, *geo, col.get(), ctx.pool(), sx.storedZero, OutputSlice{first, count});
                gemmS8S8(false, false, mg, columns, rows, weights, rows, sw.zero, col.get(), columns, sx.zero,
                         y + first * perOutRow, outSize, keep, stored);
            }
        }
    return Status::ok();
}

}  // namespace fsc::cpu
