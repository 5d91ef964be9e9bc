// Data-movement and shape kernels: Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Split,
// Slice, Gather*, Scatter*, Expand, Tile, Pad, Shape, Size, ConstantOfShape, Constant,
// Range, NonZero, Trilu, OneHot, DepthToSpace/SpaceToDepth.
#include <cmath>
#include <numeric>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/runtime/slice_rules.h"

namespace fsc::cpu {
namespace {

void copyData(const RtTensor& from, RtTensor& to) {
    if (from.dtype == DType::String) *to.strings = *from.strings;
    else if (from.bytes()) std::memcpy(to.data, from.data, from.bytes());
}

Status emitReshaped(KernelContext& ctx, const RtTensor& x, std::vector<int64_t> dims) {
    if (product(dims) != x.numel())
        return bad(ctx, "cannot reshape " + dimsString(x.dims) + " to " + dimsString(dims));
    auto out = ctx.output(0, x.dtype, std::move(dims));
    if (!out) return out.status();
    // In place (Reshape's output took X's buffer) the bytes are already where they belong.
    if (x.dtype == DType::String || !x.data || (*out)->data != x.data) copyData(x, **out);
    return Status::ok();
}

// ---- reshape family ------------------------------------------------------------------

// Flatten, Squeeze and Unsqueeze as Reshape: the output may take X's buffer when nothing
// reads X later (MViT builds its index tensors through 747 Unsqueezes, each a copy).
class InPlaceReshapeKernel : public FunctionKernel {
public:
    using FunctionKernel::FunctionKernel;
    int inPlaceInput() const override { return 0; }
};

class ReshapeKernel : public Kernel {
public:
    ReshapeKernel(const KernelInit& init, Status&) {
        m_allowZero = init.getInt("allowzero", 0) != 0;
        if (init.opset() < 5) m_attrShape = init.getInts("shape");
        m_useAttr = init.opset() < 5;
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        std::vector<int64_t> shape = m_attrShape;
        if (!m_useAttr) {
            if (!ctx.input(1)) return bad(ctx, "missing shape input");
            auto s = readInts(*ctx.input(1), "shape");
            if (!s) return s.status().withContext(ctx.where());
            shape = *s;
        }
        int64_t inferIndex = -1, known = 1;
        for (size_t i = 0; i < shape.size(); ++i) {
            if (shape[i] == 0 && !m_allowZero) {
                if (i >= x->rank()) return bad(ctx, "shape has 0 at a dim the input lacks");
                shape[i] = x->dims[i];
            }
            if (shape[i] == -1) {
                if (inferIndex >= 0) return bad(ctx, "shape has more than one -1");
                inferIndex = int64_t(i);
            } else if (shape[i] < 0) {
                return bad(ctx, "shape has a negative dim");
            } else {
                known *= shape[i];
            }
        }
        if (inferIndex >= 0) {
            if (known == 0 || x->numel() % known)
                return bad(ctx, "cannot reshape " + dimsString(x->dims) + " to " + dimsString(shape));
            shape[size_t(inferIndex)] = x->numel() / known;
        }
        return emitReshaped(ctx, *x, shape);
    }
    // The output may take X's buffer when nothing reads X later: no copy at all (ViT-B/16
    // runs 61 Reshapes, a copy each).
    int inPlaceInput() const override { return 0; }

private:
    bool m_allowZero = false;
    bool m_useAttr = false;
    std::vector<int64_t> m_attrShape;
};

KernelFactory flatten() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axis = init.getInt("axis", 1);
        return std::unique_ptr<Kernel>(new InPlaceReshapeKernel([axis](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const int64_t rank = int64_t(x->rank());
            int64_t a = axis < 0 ? axis + rank : axis;
            if (a < 0 || a > rank) return bad(ctx, "axis out of range");
            return emitReshaped(ctx, *x, {product(x->dims, 0, size_t(a)), product(x->dims, size_t(a))});
        }));
    };
}

// Axes from the attribute (older opsets) or input 1.
Result<std::vector<int64_t>> axesOf(KernelContext& ctx, const std::vector<int64_t>& attr,
                                    bool fromInput) {
    if (!fromInput) return attr;
    if (!ctx.input(1)) return std::vector<int64_t>{};
    return readInts(*ctx.input(1), "axes");
}

KernelFactory squeeze(bool unsqueeze) {
    return [unsqueeze](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const auto attr = init.getInts("axes");
        const bool fromInput = init.opset() >= 13;
        return std::unique_ptr<Kernel>(new InPlaceReshapeKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            auto axes = axesOf(ctx, attr, fromInput);
            if (!axes) return axes.status().withContext(ctx.where());
            const int64_t outRank = int64_t(x->rank()) + (unsqueeze ? int64_t(axes->size()) : 0);
            std::vector<bool> marked(size_t(unsqueeze ? outRank : int64_t(x->rank())), false);
            for (int64_t a : *axes) {
                auto n = normAxis(ctx, a, unsqueeze ? outRank : int64_t(x->rank()));
                if (!n) return n.status();
                if (marked[size_t(*n)]) return bad(ctx, "axis repeated");
                marked[size_t(*n)] = true;
            }
            std::vector<int64_t> dims;
            if (unsqueeze) {
                size_t k = 0;
                for (int64_t i = 0; i < outRank; ++i) dims.push_back(marked[size_t(i)] ? 1 : x->dims[k++]);
            } else {
                for (size_t i = 0; i < x->rank(); ++i) {
                    const bool drop = axes->empty() ? x->dims[i] == 1 : marked[i];
                    if (drop && x->dims[i] != 1) return bad(ctx, "cannot squeeze a dim of size " + std::to_string(x->dims[i]));
                    if (!drop) dims.push_back(x->dims[i]);
                }
            }
            return emitReshaped(ctx, *x, dims);
        }));
    };
}

// ---- Transpose -----------------------------------------------------------------------

// Dims that stay neighbours in the same order under `perm` merged into one: NCHW -> NHWC
// is [N, C, HW] -> [N, HW, C].
void coalesceTranspose(std::vector<int64_t>& dims, std::vector<int64_t>& perm) {
    std::vector<int64_t> mergedDims, mergedPerm;
    std::vector<int64_t> groupOf(dims.size(), -1);
    for (size_t i = 0; i < perm.size(); ++i) {
        if (i > 0 && perm[i] == perm[i - 1] + 1) {
            mergedDims[size_t(groupOf[size_t(perm[i - 1])])] *= dims[size_t(perm[i])];
            groupOf[size_t(perm[i])] = groupOf[size_t(perm[i - 1])];
            continue;
        }
        groupOf[size_t(perm[i])] = int64_t(mergedDims.size());
        mergedDims.push_back(dims[size_t(perm[i])]);
    }
    // mergedDims is in output order; the input order of the groups is by their first dim.
    std::vector<std::pair<int64_t, int64_t>> firstDim;  // (first input dim, group)
    for (size_t d = 0; d < dims.size(); ++d)
        if (d == 0 || groupOf[d] != groupOf[d - 1]) firstDim.push_back({int64_t(d), groupOf[d]});
    std::vector<int64_t> inputRank(mergedDims.size());
    std::vector<int64_t> inDims;
    for (size_t k = 0; k < firstDim.size(); ++k) {
        inputRank[size_t(firstDim[k].second)] = int64_t(k);
        inDims.push_back(mergedDims[size_t(firstDim[k].second)]);
    }
    for (size_t g = 0; g < mergedDims.size(); ++g) mergedPerm.push_back(inputRank[g]);
    dims = std::move(inDims);
    perm = std::move(mergedPerm);
}

// out[b][j][i] = in[b][i][j] for `batches` matrices of rows x cols, in square tiles so both
// sides are read and written a cache line at a time.
// A matrix with R rows (an image's 3 colour planes) interleaved into R columns: the
// compiler turns the fixed-R inner loop into vector shuffles.
template <int64_t R, typename T>
void fewRowsTranspose(const T* __restrict in, T* __restrict out, int64_t cols) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < R; ++i) out[j * R + i] = in[i * cols + j];
}
// ... and back: R columns spread out into R rows.
template <int64_t R, typename T>
void fewColumnsTranspose(const T* __restrict in, T* __restrict out, int64_t rows) {
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < R; ++j) out[j * rows + i] = in[i * R + j];
}

template <typename T>
bool narrowTranspose(const T* in, T* out, int64_t batches, int64_t rows, int64_t cols) {
    using Fn = void (*)(const T*, T*, int64_t);
    static constexpr Fn byRows[] = {nullptr, nullptr, fewRowsTranspose<2, T>, fewRowsTranspose<3, T>,
                                    fewRowsTranspose<4, T>};
    static constexpr Fn byCols[] = {nullptr, nullptr, fewColumnsTranspose<2, T>, fewColumnsTranspose<3, T>,
                                    fewColumnsTranspose<4, T>};
    const bool fewRows = rows >= 2 && rows <= 4, fewCols = cols >= 2 && cols <= 4;
    if (!fewRows && !fewCols) return false;
    for (int64_t b = 0; b < batches; ++b) {
        const T* src = in + b * rows * cols;
        T* dst = out + b * rows * cols;
        if (fewRows) byRows[rows](src, dst, cols);
        else byCols[cols](src, dst, rows);
    }
    return true;
}

template <typename T>
void batchedTranspose(ThreadPool& pool, const T* in, T* out, int64_t batches, int64_t rows, int64_t cols) {
    if (narrowTranspose(in, out, batches, rows, cols)) return;
    constexpr int64_t kTile = 32;
    const int64_t rowTiles = (rows + kTile - 1) / kTile;
    pool.parallelFor(batches * rowTiles, std::max<int64_t>(1, 8192 / (kTile * std::max<int64_t>(cols, 1))),
                     [&](int64_t b, int64_t e) {
                         for (int64_t t = b; t < e; ++t) {
                             const int64_t batch = t / rowTiles, i0 = (t % rowTiles) * kTile;
                             const int64_t i1 = std::min(rows, i0 + kTile);
                             const T* src = in + batch * rows * cols;
                             T* dst = out + batch * rows * cols;
                             for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
                                 const int64_t j1 = std::min(cols, j0 + kTile);
                                 for (int64_t j = j0; j < j1; ++j)
                                     for (int64_t i = i0; i < i1; ++i) dst[j * rows + i] = src[i * cols + j];
                             }
                         }
                     });
}

template <typename T>
void transposeTyped(ThreadPool& pool, const T* in, T* out, std::vector<int64_t> dims, std::vector<int64_t> perm) {
    coalesceTranspose(dims, perm);
    if (perm == std::vector<int64_t>{1, 0}) return batchedTranspose(pool, in, out, 1, dims[0], dims[1]);
    if (perm == std::vector<int64_t>{0, 2, 1}) return batchedTranspose(pool, in, out, dims[0], dims[1], dims[2]);
    const size_t rank = dims.size();
    const auto inStrides = stridesOf(dims);
    std::vector<int64_t> outDims(rank), srcStride(rank);
    for (size_t i = 0; i < rank; ++i) {
        outDims[i] = dims[size_t(perm[i])];
        srcStride[i] = inStrides[size_t(perm[i])];
    }
    const int64_t inner = rank ? outDims[rank - 1] : 1;
    const int64_t innerStride = rank ? srcStride[rank - 1] : 1;
    const int64_t rows = product(outDims) / std::max<int64_t>(inner, 1);
    if (inner == 0) return;
    pool.parallelFor(rows, std::max<int64_t>(1, 8192 / inner), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            int64_t rem = r, src = 0;
            for (size_t i = rank - 1; i-- > 0;) {
                src += (rem % outDims[i]) * srcStride[i];
                rem /= outDims[i];
            }
            T* o = out + r * inner;
            const T* s = in + src;
            if (innerStride == 1) std::memcpy(o, s, size_t(inner) * sizeof(T));
            else
                for (int64_t k = 0; k < inner; ++k) o[k] = s[k * innerStride];
        }
    });
}

KernelFactory transpose() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const auto permAttr = init.getInts("perm");
        return std::unique_ptr<Kernel>(new FunctionKernel([permAttr](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const size_t rank = x->rank();
            std::vector<int64_t> perm = permAttr;
            if (perm.empty())
                for (size_t i = 0; i < rank; ++i) perm.push_back(int64_t(rank - 1 - i));
            if (perm.size() != rank) return bad(ctx, "perm has the wrong length");
            std::vector<bool> seen(rank, false);
            std::vector<int64_t> outDims;
            for (int64_t& p : perm) {
                if (p < 0) p += int64_t(rank);
                if (p < 0 || p >= int64_t(rank) || seen[size_t(p)]) return bad(ctx, "perm is not a permutation");
                seen[size_t(p)] = true;
                outDims.push_back(x->dims[size_t(p)]);
            }
            auto out = ctx.output(0, x->dtype, outDims);
            if (!out) return out.status();
            if (rank == 0 || x->numel() == 0) {
                copyData(*x, **out);
                return Status::ok();
            }
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                transposeTyped<T>(ctx.pool(), x->as<T>(), (*out)->template as<T>(), x->dims, perm);
                return Status::ok();
            });
        }));
    };
}

// ---- Concat / Split ------------------------------------------------------------------

KernelFactory concat() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([axisAttr](KernelContext& ctx) -> Status {
            const RtTensor* first = nullptr;
            for (size_t i = 0; i < ctx.inputCount() && !first; ++i) first = ctx.input(i);
            if (!first) return bad(ctx, "needs inputs");
            const int64_t rank = int64_t(first->rank());
            auto axis = normAxis(ctx, axisAttr, rank);
            if (!axis) return axis.status();
            std::vector<int64_t> dims = first->dims;
            dims[size_t(*axis)] = 0;
            for (size_t i = 0; i < ctx.inputCount(); ++i) {
                const RtTensor* in = ctx.input(i);
                if (!in) continue;
                if (int64_t(in->rank()) != rank || in->dtype != first->dtype)
                    return bad(ctx, "inputs differ in rank or dtype");
                for (int64_t d = 0; d < rank; ++d)
                    if (d != *axis && in->dims[size_t(d)] != first->dims[size_t(d)])
                        return bad(ctx, "input shapes " + dimsString(first->dims) + " and " + dimsString(in->dims) + " differ off the axis");
                dims[size_t(*axis)] += in->dims[size_t(*axis)];
            }
            auto out = ctx.output(0, first->dtype, dims);
            if (!out) return out.status();
            const int64_t outer = product(dims, 0, size_t(*axis));
            const int64_t innerUnit = product(dims, size_t(*axis) + 1);
            const int64_t outRow = dims[size_t(*axis)] * innerUnit;
            if (first->dtype == DType::String) {
                int64_t offset = 0;
                for (size_t i = 0; i < ctx.inputCount(); ++i) {
                    const RtTensor* in = ctx.input(i);
                    if (!in) continue;
                    const int64_t row = in->dims[size_t(*axis)] * innerUnit;
                    for (int64_t o = 0; o < outer; ++o)
                        for (int64_t k = 0; k < row; ++k)
                            (*(*out)->strings)[o * outRow + offset + k] = (*in->strings)[o * row + k];
                    offset += row;
                }
                return Status::ok();
            }
            // Each output row whole, from every input in turn, rows shared among the threads:
            // a channels-last Concat (SqueezeNet's Fire modules, DenseNet's blocks) is many short
            // rows, and input by input it wrote every output line twice on one thread
            // (squeezenet1_1: 150 us a Concat at one thread, slower at two).
            struct Piece {
                const uint8_t* data;
                size_t bytes;
            };
            const size_t esize = size_t(dtypeBits(first->dtype) / 8);
            std::vector<Piece> pieces;
            for (size_t i = 0; i < ctx.inputCount(); ++i)
                if (const RtTensor* in = ctx.input(i); in && in->numel())
                    pieces.push_back(
                        {in->as<uint8_t>(), size_t(in->dims[size_t(*axis)] * innerUnit) * esize});
            uint8_t* po = (*out)->as<uint8_t>();
            const size_t outBytes = size_t(outRow) * esize;
            // Few long rows (a tensor grown along its first axis a step at a time: Mask R-CNN's
            // paste loop appends a [1, 320, 320] mask to [n, 320, 320], 2 GB of copies a run):
            // each row's bytes in stretches over the threads instead of one thread per row.
            constexpr size_t kStretch = size_t(256) << 10;
            if (outer < int64_t(ctx.pool().size()) && outBytes >= 2 * kStretch) {
                const int64_t stretches = int64_t((outBytes + kStretch - 1) / kStretch);
                for (int64_t o = 0; o < outer; ++o)
                    ctx.pool().parallelFor(stretches, 1, [&](int64_t b, int64_t e) {
                        const size_t from = size_t(b) * kStretch, to = std::min(outBytes, size_t(e) * kStretch);
                        size_t at = 0;  // where the current piece starts in the row
                        for (const Piece& p : pieces) {
                            const size_t lo = std::max(from, at), hi = std::min(to, at + p.bytes);
                            if (lo < hi) std::memcpy(po + size_t(o) * outBytes + lo, p.data + size_t(o) * p.bytes + (lo - at), hi - lo);
                            at += p.bytes;
                        }
                    });
                return Status::ok();
            }
            ctx.pool().parallelFor(
                outer, std::max<int64_t>(1, int64_t(32768 / std::max<size_t>(outBytes, 1))),
                [&](int64_t b, int64_t e) {
                    for (int64_t o = b; o < e; ++o) {
                        uint8_t* dst = po + size_t(o) * outBytes;
                        for (const Piece& p : pieces) {
                            // One element a piece (index tuples stacked along a last axis of
                            // 4: 10 million rows in MViT's ScatterND indices) is a load and a
                            // store, not a call.
                            if (p.bytes == 8) std::memcpy(dst, p.data + size_t(o) * 8, 8);
                            else if (p.bytes == 4) std::memcpy(dst, p.data + size_t(o) * 4, 4);
                            else std::memcpy(dst, p.data + size_t(o) * p.bytes, p.bytes);
                            dst += p.bytes;
                        }
                    }
                });
            return Status::ok();
        }));
    };
}

KernelFactory split() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        const auto splitAttr = init.getInts("split");
        const bool fromInput = init.opset() >= 13;
        const int64_t numOutputs = init.getInt("num_outputs", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            const int64_t total = x->dims[size_t(*axis)];
            std::vector<int64_t> sizes = splitAttr;
            if (fromInput && ctx.input(1)) {
                auto s = readInts(*ctx.input(1), "split");
                if (!s) return s.status().withContext(ctx.where());
                sizes = *s;
            }
            const int64_t n = int64_t(ctx.outputCount());
            auto split = splitSizes(total, sizes, numOutputs, n);
            if (!split) return split.status().withContext(ctx.where());
            sizes = *split;
            const int64_t outer = product(x->dims, 0, size_t(*axis));
            const int64_t inner = product(x->dims, size_t(*axis) + 1);
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                int64_t offset = 0;
                for (int64_t i = 0; i < n; ++i) {
                    std::vector<int64_t> dims = x->dims;
                    dims[size_t(*axis)] = sizes[size_t(i)];
                    auto out = ctx.output(size_t(i), x->dtype, dims);
                    if (!out) return out.status();
                    T* po = (*out)->template as<T>();
                    const T* pi = x->as<T>();
                    const int64_t row = sizes[size_t(i)] * inner;
                    // One piece is the whole input in one copy; rows of one element are assigned
                    // (a call per element took 3.9 ms of RetinaNet's Split of a million indices).
                    if (row == total * inner) std::memcpy(po, pi, size_t(outer * row) * sizeof(T));
                    else if (row == 1)
                        for (int64_t o = 0; o < outer; ++o) po[o] = pi[o * total * inner + offset];
                    else
                        for (int64_t o = 0; o < outer; ++o)
                            std::memcpy(po + o * row, pi + o * total * inner + offset, size_t(row) * sizeof(T));
                    offset += row;
                }
                return Status::ok();
            });
        }));
    };
}

// ---- Slice ---------------------------------------------------------------------------

class SliceKernel : public Kernel {
public:
    SliceKernel(const KernelInit& init, Status&) {
        m_fromInputs = init.opset() >= 10;
        m_starts = init.getInts("starts");
        m_ends = init.getInts("ends");
        m_axes = init.getInts("axes");
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        std::vector<int64_t> starts = m_starts, ends = m_ends, axes = m_axes, steps;
        if (m_fromInputs) {
            auto read = [&](size_t i, std::vector<int64_t>& v, const char* what) -> Status {
                if (!ctx.input(i)) return Status::ok();
                auto r = readInts(*ctx.input(i), what);
                if (!r) return r.status().withContext(ctx.where());
                v = *r;
                return Status::ok();
            };
            FSC_RETURN_IF_ERROR(read(1, starts, "starts"));
            FSC_RETURN_IF_ERROR(read(2, ends, "ends"));
            FSC_RETURN_IF_ERROR(read(3, axes, "axes"));
            FSC_RETURN_IF_ERROR(read(4, steps, "steps"));
        }
        const int64_t rank = int64_t(x->rank());
        auto box = sliceBox(x->dims, starts, ends, axes, steps);
        if (!box) return box.status().withContext(ctx.where());
        const std::vector<int64_t>& start = box->start;
        const std::vector<int64_t>& step = box->step;
        const std::vector<int64_t>& dims = box->dims;
        auto out = ctx.output(0, x->dtype, dims);
        if (!out) return out.status();
        const int64_t n = product(dims);
        if (n == 0) return Status::ok();
        const auto inStrides = stridesOf(x->dims);
        return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const T* pi = x->as<T>();
            T* po = (*out)->template as<T>();
            const int64_t inner = rank ? dims[size_t(rank - 1)] : 1;
            const int64_t innerStep = rank ? step[size_t(rank - 1)] * inStrides[size_t(rank - 1)] : 1;
            const int64_t rows = n / inner;
            // Over the threads: WaveNet's gates are halves of a 128 x 16,000 product, 4 MB each.
            ctx.pool().parallelFor(rows, std::max<int64_t>(1, 32768 / (inner * int64_t(sizeof(T)))), [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r) {
                    int64_t rem = r, src = 0;
                    for (int64_t i = rank - 2; i >= 0; --i) {
                        const int64_t idx = rem % dims[size_t(i)];
                        rem /= dims[size_t(i)];
                        src += (start[size_t(i)] + idx * step[size_t(i)]) * inStrides[size_t(i)];
                    }
                    if (rank) src += start[size_t(rank - 1)] * inStrides[size_t(rank - 1)];
                    T* o = po + r * inner;
                    if (innerStep == 1) std::memcpy(o, pi + src, size_t(inner) * sizeof(T));
                    else
                        for (int64_t k = 0; k < inner; ++k) o[k] = pi[src + k * innerStep];
                }
            });
            return Status::ok();
        });
    }

private:
    bool m_fromInputs = true;
    std::vector<int64_t> m_starts, m_ends, m_axes;
};

// ---- Gather family -------------------------------------------------------------------

// The index tensors of the Gather and Scatter kernels: int64 read in place (elementAsInt's
// type switch per index was most of a ScatterND of 10 million single elements, MViT's
// relative positions), negative indices counted from the end of their axis.
class IndexReader {
public:
    explicit IndexReader(const RtTensor& indices)
        : m_indices(indices), m_int64(indices.dtype == DType::Int64 ? indices.as<int64_t>() : nullptr) {}
    // Index i along an axis of `len`, in [0, len); -1 when it is out of range.
    int64_t at(int64_t i, int64_t len) const {
        int64_t v = m_int64 ? m_int64[i] : elementAsInt(m_indices, i);
        if (v < 0) v += len;
        return v >= 0 && v < len ? v : -1;
    }
    Status outOfRange(const KernelContext& ctx, int64_t i, int64_t len) const {
        const int64_t v = m_int64 ? m_int64[i] : elementAsInt(m_indices, i);
        return bad(ctx, "index " + std::to_string(v) + " is out of range for an axis of " + std::to_string(len));
    }

private:
    const RtTensor& m_indices;
    const int64_t* m_int64;
};

KernelFactory gather() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([axisAttr](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* idx = ctx.input(1);
            if (!x || !idx) return bad(ctx, "needs data and indices");
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            const int64_t a = *axis;
            std::vector<int64_t> dims(x->dims.begin(), x->dims.begin() + a);
            dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
            dims.insert(dims.end(), x->dims.begin() + a + 1, x->dims.end());
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            const int64_t outer = product(x->dims, 0, size_t(a));
            const int64_t axisLen = x->dims[size_t(a)];
            const int64_t inner = product(x->dims, size_t(a) + 1);
            const int64_t count = idx->numel();
            std::vector<int64_t> indices(static_cast<size_t>(count));
            const IndexReader read(*idx);
            for (int64_t i = 0; i < count; ++i) {
                indices[size_t(i)] = read.at(i, axisLen);
                if (indices[size_t(i)] < 0) return read.outOfRange(ctx, i, axisLen);
            }
            if (x->dtype == DType::String) {
                for (int64_t o = 0; o < outer; ++o)
                    for (int64_t i = 0; i < count; ++i)
                        for (int64_t k = 0; k < inner; ++k)
                            (*(*out)->strings)[(o * count + i) * inner + k] = (*x->strings)[(o * axisLen + indices[size_t(i)]) * inner + k];
                return Status::ok();
            }
            const size_t es = size_t(dtypeBits(x->dtype) / 8);
            const uint8_t* pi = x->as<uint8_t>();
            uint8_t* po = (*out)->as<uint8_t>();
            for (int64_t o = 0; o < outer; ++o)
                for (int64_t i = 0; i < count; ++i)
                    std::memcpy(po + size_t((o * count + i) * inner) * es, pi + size_t((o * axisLen + indices[size_t(i)]) * inner) * es, size_t(inner) * es);
            return Status::ok();
        }));
    };
}

// Shared by GatherElements and ScatterElements: walks every index position, calling
// fn(position in the indices, offset in data). A row of the indices' last dim at a time, with
// the other dims' offset carried along: the per-element divisions and type switch made Faster
// R-CNN's ScatterElements of 1.9 million positions (MultiScaleRoIAlign's export) 40 ms.
template <typename Fn>
Status walkElements(KernelContext& ctx, const RtTensor& data, const RtTensor& idx, int64_t axis, Fn fn) {
    const int64_t rank = int64_t(idx.rank());
    if (rank != int64_t(data.rank())) return bad(ctx, "indices and data differ in rank");
    for (int64_t d = 0; d < rank; ++d)
        if (d != axis && idx.dims[size_t(d)] > data.dims[size_t(d)])
            return bad(ctx, "indices " + dimsString(idx.dims) + " exceed data " + dimsString(data.dims) + " in dim " +
                                std::to_string(d));
    const int64_t n = idx.numel();
    if (n == 0) return Status::ok();
    const auto dataStrides = stridesOf(data.dims);
    const int64_t len = data.dims[size_t(axis)], axisStride = dataStrides[size_t(axis)];
    const int64_t last = rank - 1, rowLength = idx.dims[size_t(last)];
    // Along the last dim a position moves one element in data too, unless that dim is the axis.
    const int64_t step = axis == last ? 0 : 1;
    const IndexReader read(idx);
    std::vector<int64_t> pos(size_t(rank), 0);
    int64_t base = 0;  // the offset of pos in data, the axis's dim left out
    for (int64_t row = 0; row * rowLength < n; ++row) {
        const int64_t first = row * rowLength;
        for (int64_t j = 0; j < rowLength; ++j) {
            const int64_t v = read.at(first + j, len);
            if (v < 0) return read.outOfRange(ctx, first + j, len);
            fn(first + j, base + j * step + v * axisStride);
        }
        for (int64_t d = last - 1; d >= 0; --d) {  // the next row
            if (d != axis) base += dataStrides[size_t(d)];
            if (++pos[size_t(d)] < idx.dims[size_t(d)]) break;
            if (d != axis) base -= pos[size_t(d)] * dataStrides[size_t(d)];
            pos[size_t(d)] = 0;
        }
    }
    return Status::ok();
}

KernelFactory gatherElements() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([axisAttr](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* idx = ctx.input(1);
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            auto out = ctx.output(0, x->dtype, idx->dims);
            if (!out) return out.status();
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                const T* pi = x->as<T>();
                return walkElements(ctx, *x, *idx, *axis, [&](int64_t i, int64_t off) { po[i] = pi[off]; });
            });
        }));
    };
}

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reductionOf(const std::string& s) {
    if (s == "add") return Reduction::Add;
    if (s == "mul") return Reduction::Mul;
    if (s == "max") return Reduction::Max;
    if (s == "min") return Reduction::Min;
    return Reduction::None;
}

template <typename T>
void combine(T& dst, T v, Reduction r) {
    switch (r) {
        case Reduction::None: dst = v; break;
        case Reduction::Add: dst = T(dst + v); break;
        case Reduction::Mul: dst = T(dst * v); break;
        case Reduction::Max: dst = std::max(dst, v); break;
        case Reduction::Min: dst = std::min(dst, v); break;
    }
}

KernelFactory scatterElements() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", 0);
        const Reduction red = reductionOf(init.getString("reduction", "none"));
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* idx = ctx.input(1);
            const RtTensor* upd = ctx.input(2);
            auto axis = normAxis(ctx, axisAttr, int64_t(x->rank()));
            if (!axis) return axis.status();
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            copyData(*x, **out);
            return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                const T* pu = upd->as<T>();
                if (red == Reduction::None)  // combine() is a call per element
                    return walkElements(ctx, *x, *idx, *axis, [&](int64_t i, int64_t off) { po[off] = pu[i]; });
                return walkElements(ctx, *x, *idx, *axis, [&](int64_t i, int64_t off) { combine(po[off], pu[i], red); });
            });
        }));
    };
}

KernelFactory scatterND() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const Reduction red = reductionOf(init.getString("reduction", "none"));
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* idx = ctx.input(1);
            const RtTensor* upd = ctx.input(2);
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            copyData(*x, **out);
            const int64_t k = idx->dims.empty() ? 0 : idx->dims.back();
            if (k > int64_t(x->rank())) return bad(ctx, "index depth exceeds data rank");
            const int64_t slice = product(x->dims, size_t(k));
            const int64_t count = idx->numel() / std::max<int64_t>(k, 1);
            const auto strides = stridesOf(x->dims);
            return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                const T* pu = upd->as<T>();
                const IndexReader read(*idx);
                std::vector<int64_t> offsets(static_cast<size_t>(count));
                for (int64_t i = 0; i < count; ++i) {
                    int64_t off = 0;
                    for (int64_t d = 0; d < k; ++d) {
                        const int64_t v = read.at(i * k + d, x->dims[size_t(d)]);
                        if (v < 0) return read.outOfRange(ctx, i * k + d, x->dims[size_t(d)]);
                        off += v * strides[size_t(d)];
                    }
                    offsets[size_t(i)] = off;
                }
                // Columns [c0, c1) of every slice, in index order (repeated indices combine in
                // order): a graph network's 20,000 messages of 128 features summed into their
                // nodes split across the threads by columns, each row's add one vector loop.
                auto apply = [&](int64_t c0, int64_t c1) {
                    for (int64_t i = 0; i < count; ++i) {
                        T* dst = po + offsets[size_t(i)];
                        const T* src = pu + i * slice;
                        if (red == Reduction::None)
                            std::copy(src + c0, src + c1, dst + c0);
                        else if (red == Reduction::Add)
                            for (int64_t j = c0; j < c1; ++j) dst[j] += src[j];
                        else
                            for (int64_t j = c0; j < c1; ++j) combine(dst[j], src[j], red);
                    }
                };
                constexpr int64_t kColumns = 32;
                if (slice >= 2 * kColumns && count * slice >= 65536)
                    ctx.pool().parallelFor((slice + kColumns - 1) / kColumns, 1, [&](int64_t b, int64_t e) {
                        apply(b * kColumns, std::min(slice, e * kColumns));
                    });
                else
                    apply(0, slice);
                return Status::ok();
            });
        }));
    };
}

KernelFactory gatherND() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t batchDims = init.getInt("batch_dims", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const RtTensor* idx = ctx.input(1);
            const int64_t k = idx->dims.back();
            if (batchDims + k > int64_t(x->rank())) return bad(ctx, "index depth exceeds data rank");
            std::vector<int64_t> dims(idx->dims.begin(), idx->dims.end() - 1);
            dims.insert(dims.end(), x->dims.begin() + batchDims + k, x->dims.end());
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            const int64_t batch = product(x->dims, 0, size_t(batchDims));
            const int64_t slice = product(x->dims, size_t(batchDims + k));
            const int64_t batchStride = product(x->dims, size_t(batchDims));
            const int64_t perBatch = product(idx->dims, size_t(batchDims), idx->dims.size() - 1);
            const auto strides = stridesOf(x->dims);
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                const T* pi = x->as<T>();
                // Single elements assigned: a memcpy call per element was, with the index's
                // type switch, most of RetinaNet's GatherND of a million scores.
                const IndexReader read(*idx);
                for (int64_t b = 0; b < batch; ++b)
                    for (int64_t i = 0; i < perBatch; ++i) {
                        int64_t off = b * batchStride;
                        const int64_t row = b * perBatch + i;
                        for (int64_t d = 0; d < k; ++d) {
                            const int64_t dim = x->dims[size_t(batchDims + d)];
                            const int64_t v = read.at(row * k + d, dim);
                            if (v < 0) return read.outOfRange(ctx, row * k + d, dim);
                            off += v * strides[size_t(batchDims + d)];
                        }
                        if (slice == 1) po[row] = pi[off];
                        else std::memcpy(po + row * slice, pi + off, size_t(slice) * sizeof(T));
                    }
                return Status::ok();
            });
        }));
    };
}

// ---- Expand / Tile -------------------------------------------------------------------

Status broadcastInto(KernelContext& ctx, const RtTensor& x, const std::vector<int64_t>& dims) {
    auto out = ctx.output(0, x.dtype, dims);
    if (!out) return out.status();
    if (product(dims) == 0) return Status::ok();
    const BroadcastRows plan = planBroadcast(dims, {&dims, &x.dims});
    return dispatchBySize(ctx, x.dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        const T* pi = x.as<T>();
        T* po = (*out)->template as<T>();
        forEachRow(ctx.pool(), plan, [&](int64_t off, const int64_t* offs) {
            const int64_t s = plan.rowStride[1];
            for (int64_t i = 0; i < plan.rowLength; ++i) po[off + i] = pi[offs[1] + i * s];
        });
        return Status::ok();
    });
}

Status expand(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    if (!ctx.input(1)) return bad(ctx, "missing shape");
    auto shape = readInts(*ctx.input(1), "shape");
    if (!shape) return shape.status().withContext(ctx.where());
    auto dims = broadcastShapes(ctx, {&x->dims, &*shape});
    if (!dims) return dims.status();
    return broadcastInto(ctx, *x, *dims);
}

Status tile(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    auto reps = readInts(*ctx.input(1), "repeats");
    if (!reps) return reps.status().withContext(ctx.where());
    if (reps->size() != x->rank()) return bad(ctx, "repeats length differs from the input rank");
    std::vector<int64_t> dims;
    for (size_t i = 0; i < x->rank(); ++i) dims.push_back(x->dims[i] * (*reps)[i]);
    auto out = ctx.output(0, x->dtype, dims);
    if (!out) return out.status();
    const int64_t n = product(dims);
    const auto inStrides = stridesOf(x->dims);
    return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        const T* pi = x->as<T>();
        T* po = (*out)->template as<T>();
        for (int64_t i = 0; i < n; ++i) {
            int64_t rem = i, src = 0;
            for (size_t d = dims.size(); d-- > 0;) {
                src += ((rem % dims[d]) % x->dims[d]) * inStrides[d];
                rem /= dims[d];
            }
            po[i] = pi[src];
        }
        return Status::ok();
    });
}

// ---- Pad -----------------------------------------------------------------------------

class PadKernel : public Kernel {
public:
    PadKernel(const KernelInit& init, Status&) {
        m_mode = init.getString("mode", "constant");
        m_fromInputs = init.opset() >= 11;
        m_pads = init.getInts(init.opset() < 2 ? "paddings" : "pads");
        m_value = init.getFloat("value", 0.0f);
    }
    Status compute(KernelContext& ctx) override {
        const RtTensor* x = ctx.input(0);
        const int64_t rank = int64_t(x->rank());
        std::vector<int64_t> pads = m_pads;
        double value = m_value;
        std::vector<int64_t> axes;
        if (m_fromInputs) {
            auto p = readInts(*ctx.input(1), "pads");
            if (!p) return p.status().withContext(ctx.where());
            pads = *p;
            if (const RtTensor* v = ctx.input(2); v && v->numel()) value = elementAsDouble(*v, 0);
            if (const RtTensor* a = ctx.input(3)) {
                auto ax = readInts(*a, "axes");
                if (!ax) return ax.status().withContext(ctx.where());
                axes = *ax;
            }
        }
        if (axes.empty())
            for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
        if (pads.size() != 2 * axes.size()) return bad(ctx, "pads has the wrong length");
        std::vector<int64_t> before(size_t(rank), 0), after(size_t(rank), 0);
        for (size_t i = 0; i < axes.size(); ++i) {
            auto a = normAxis(ctx, axes[i], rank);
            if (!a) return a.status();
            before[size_t(*a)] = pads[i];
            after[size_t(*a)] = pads[i + axes.size()];
        }
        std::vector<int64_t> dims(static_cast<size_t>(rank));
        for (int64_t d = 0; d < rank; ++d) {
            dims[size_t(d)] = x->dims[size_t(d)] + before[size_t(d)] + after[size_t(d)];
            if (dims[size_t(d)] < 0) return bad(ctx, "pads remove more than the dim holds");
            if (m_mode != "constant" && x->dims[size_t(d)] == 0 && dims[size_t(d)] > 0)
                return bad(ctx, m_mode + " padding of an empty dim");
        }
        auto out = ctx.output(0, x->dtype, dims);
        if (!out) return out.status();
        const int64_t n = product(dims);
        const auto inStrides = stridesOf(x->dims);
        const bool growOnly = std::all_of(before.begin(), before.end(), [](int64_t p) { return p >= 0; }) &&
                              std::all_of(after.begin(), after.end(), [](int64_t p) { return p >= 0; });
        return dispatchNumeric(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const T* pi = x->as<T>();
            T* po = (*out)->template as<T>();
            const T fill = T(value);
            if (m_mode == "constant" && growOnly && rank > 0) {
                // Output rows over the threads: a row of padding is filled, any other gets its
                // input row with the fill either side (Swin pads every window this way,
                // WaveNet every causal layer). No per-element index arithmetic, and no pass
                // filling the whole output first.
                const int64_t last = x->dims.back(), outLast = dims.back(), outRows = outLast ? n / outLast : 0;
                const int64_t left = before.back();
                ctx.pool().parallelFor(outRows, std::max<int64_t>(1, 4096 / std::max<int64_t>(outLast, 1)), [&](int64_t r0, int64_t r1) {
                    for (int64_t r = r0; r < r1; ++r) {
                        T* row = po + r * outLast;
                        int64_t rem = r, src = 0;
                        bool inside = true;
                        for (int64_t d = rank - 2; d >= 0 && inside; --d) {
                            const int64_t c = rem % dims[size_t(d)] - before[size_t(d)];
                            rem /= dims[size_t(d)];
                            inside = c >= 0 && c < x->dims[size_t(d)];
                            src += c * inStrides[size_t(d)];
                        }
                        if (!inside) {
                            std::fill(row, row + outLast, fill);
                            continue;
                        }
                        std::fill(row, row + left, fill);
                        std::copy(pi + src, pi + src + last, row + left);
                        std::fill(row + left + last, row + outLast, fill);
                    }
                });
                return Status::ok();
            }
            for (int64_t i = 0; i < n; ++i) {
                int64_t rem = i, src = 0;
                bool outside = false;
                for (int64_t d = rank - 1; d >= 0; --d) {
                    int64_t c = rem % dims[size_t(d)] - before[size_t(d)];
                    rem /= dims[size_t(d)];
                    const int64_t len = x->dims[size_t(d)];
                    if (c < 0 || c >= len) {
                        if (m_mode == "constant") {
                            outside = true;
                            break;
                        }
                        if (m_mode == "edge") {
                            c = std::clamp<int64_t>(c, 0, len - 1);
                        } else if (m_mode == "reflect") {
                            if (len == 1) c = 0;
                            else {
                                const int64_t period = 2 * (len - 1);
                                c = ((c % period) + period) % period;
                                if (c >= len) c = period - c;
                            }
                        } else {  // wrap
                            c = ((c % len) + len) % len;
                        }
                    }
                    src += c * inStrides[size_t(d)];
                }
                po[i] = outside ? fill : pi[src];
            }
            return Status::ok();
        });
    }

private:
    std::string m_mode;
    bool m_fromInputs = true;
    std::vector<int64_t> m_pads;
    float m_value = 0;
};

// ---- shape-producing -----------------------------------------------------------------

KernelFactory shapeOp() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t startAttr = init.getInt("start", 0);
        const bool hasEnd = init.has("end");
        const int64_t endAttr = init.getInt("end", 0);
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const int64_t rank = int64_t(x->rank());
            auto clampAxis = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
            const int64_t s = clampAxis(startAttr);
            const int64_t e = hasEnd ? clampAxis(endAttr) : rank;
            const int64_t n = std::max<int64_t>(0, e - s);
            auto out = ctx.output(0, DType::Int64, {n});
            if (!out) return out.status();
            for (int64_t i = 0; i < n; ++i) (*out)->as<int64_t>()[i] = x->dims[size_t(s + i)];
            return Status::ok();
        }));
    };
}

Status sizeOp(KernelContext& ctx) {
    auto out = ctx.output(0, DType::Int64, {});
    if (!out) return out.status();
    (*out)->as<int64_t>()[0] = ctx.input(0)->numel();
    return Status::ok();
}

KernelFactory constantOfShape() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        RtTensor value;
        if (const Tensor* t = init.getTensor("value")) {
            auto v = tensorFromConstant(*t);
            if (!v) return v.status();
            value = *v;
        } else {
            value = allocateTensor(DType::Float32, {1});
        }
        return std::unique_ptr<Kernel>(new FunctionKernel([value](KernelContext& ctx) -> Status {
            auto dims = readInts(*ctx.input(0), "shape");
            if (!dims) return dims.status().withContext(ctx.where());
            for (int64_t d : *dims)
                if (d < 0) return bad(ctx, "negative dim in shape");
            auto out = ctx.output(0, value.dtype, *dims);
            if (!out) return out.status();
            return dispatchBySize(ctx, value.dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                T* po = (*out)->template as<T>();
                std::fill(po, po + (*out)->numel(), value.as<T>()[0]);  // numel() once, not per element
                return Status::ok();
            });
        }));
    };
}

KernelFactory constant() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        RtTensor value;
        if (const Tensor* t = init.getTensor("value")) {
            auto v = tensorFromConstant(*t);
            if (!v) return v.status();
            value = *v;
        } else if (init.has("value_float")) {
            value = allocateTensor(DType::Float32, {});
            value.as<float>()[0] = init.getFloat("value_float", 0);
        } else if (init.has("value_floats")) {
            auto f = init.getFloats("value_floats");
            value = allocateTensor(DType::Float32, {int64_t(f.size())});
            std::copy(f.begin(), f.end(), value.as<float>());
        } else if (init.has("value_int")) {
            value = allocateTensor(DType::Int64, {});
            value.as<int64_t>()[0] = init.getInt("value_int", 0);
        } else if (init.has("value_ints")) {
            auto v = init.getInts("value_ints");
            value = allocateTensor(DType::Int64, {int64_t(v.size())});
            std::copy(v.begin(), v.end(), value.as<int64_t>());
        } else if (init.has("value_string")) {
            value = allocateTensor(DType::String, {});
            (*value.strings)[0] = init.getString("value_string", "");
        } else if (init.has("value_strings")) {
            auto v = init.getStrings("value_strings");
            value = allocateTensor(DType::String, {int64_t(v.size())});
            *value.strings = v;
        } else {
            return init.invalid("Constant has no value attribute this runtime reads");
        }
        return std::unique_ptr<Kernel>(new FunctionKernel([value](KernelContext& ctx) -> Status {
            auto out = ctx.output(0, value.dtype, value.dims);
            if (!out) return out.status();
            copyData(value, **out);
            return Status::ok();
        }));
    };
}

Status range(KernelContext& ctx) {
    const RtTensor* s = ctx.input(0);
    const RtTensor* l = ctx.input(1);
    const RtTensor* d = ctx.input(2);
    if (!s || !l || !d) return bad(ctx, "needs start, limit and delta");
    const double start = elementAsDouble(*s, 0), limit = elementAsDouble(*l, 0), delta = elementAsDouble(*d, 0);
    if (delta == 0) return bad(ctx, "delta is 0");
    const int64_t n = std::max<int64_t>(0, int64_t(std::ceil((limit - start) / delta)));
    auto out = ctx.output(0, s->dtype, {n});
    if (!out) return out.status();
    return dispatchNumeric(ctx, s->dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        T* po = (*out)->template as<T>();
        const T st = s->as<T>()[0], dl = d->as<T>()[0];
        for (int64_t i = 0; i < n; ++i) po[i] = T(st + T(i) * dl);
        return Status::ok();
    });
}

// The positions of nonzero elements, read in their own type (elementAsDouble's switch per
// element was most of RetinaNet's NonZero over 1.3 million scores); float -0 counts as zero,
// NaN as nonzero. Half types go through their bit patterns with the sign masked off.
Status nonZero(KernelContext& ctx) {
    const RtTensor* x = ctx.input(0);
    const int64_t n = x->numel();
    std::vector<int64_t> hits;
    auto collect = [&](auto isNonZero) {
        for (int64_t i = 0; i < n; ++i)
            if (isNonZero(i)) hits.push_back(i);
    };
    if (x->dtype == DType::Float16 || x->dtype == DType::BFloat16) {
        const uint16_t* p = x->as<uint16_t>();
        collect([&](int64_t i) { return (p[i] & 0x7fff) != 0; });
    } else {
        FSC_RETURN_IF_ERROR(dispatchAll(ctx, x->dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            const T* p = x->as<T>();
            collect([&](int64_t i) { return p[i] != T(0); });
            return Status::ok();
        }));
    }
    const int64_t rank = int64_t(x->rank()), count = int64_t(hits.size());
    auto out = ctx.output(0, DType::Int64, {rank, count});
    if (!out) return out.status();
    int64_t* po = (*out)->as<int64_t>();
    if (rank == 1) {
        std::copy(hits.begin(), hits.end(), po);
        return Status::ok();
    }
    for (int64_t h = 0; h < count; ++h) {
        int64_t rem = hits[size_t(h)];
        for (int64_t d = rank - 1; d >= 0; --d) {
            po[d * count + h] = rem % x->dims[size_t(d)];
            rem /= x->dims[size_t(d)];
        }
    }
    return Status::ok();
}

KernelFactory trilu() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool upper = init.getInt("upper", 1) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([upper](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            const int64_t k = ctx.input(1) ? elementAsInt(*ctx.input(1), 0) : 0;
            auto out = ctx.output(0, x->dtype, x->dims);
            if (!out) return out.status();
            if (x->rank() < 2) return bad(ctx, "needs rank >= 2");
            const int64_t rows = x->dims[x->rank() - 2], cols = x->dims.back();
            const int64_t mats = x->numel() / std::max<int64_t>(1, rows * cols);
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                T* po = (*out)->template as<T>();
                for (int64_t m = 0; m < mats; ++m)
                    for (int64_t i = 0; i < rows; ++i)
                        for (int64_t j = 0; j < cols; ++j) {
                            const int64_t o = (m * rows + i) * cols + j;
                            const bool keep = upper ? j - i >= k : j - i <= k;
                            po[o] = keep ? pi[o] : T(0);
                        }
                return Status::ok();
            });
        }));
    };
}

KernelFactory oneHot() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t axisAttr = init.getInt("axis", -1);
        return std::unique_ptr<Kernel>(new FunctionKernel([axisAttr](KernelContext& ctx) -> Status {
            const RtTensor* idx = ctx.input(0);
            const int64_t depth = int64_t(elementAsDouble(*ctx.input(1), 0));
            const RtTensor* values = ctx.input(2);
            const int64_t outRank = int64_t(idx->rank()) + 1;
            auto axis = normAxis(ctx, axisAttr, outRank);
            if (!axis) return axis.status();
            std::vector<int64_t> dims = idx->dims;
            dims.insert(dims.begin() + *axis, depth);
            auto out = ctx.output(0, values->dtype, dims);
            if (!out) return out.status();
            const int64_t outer = product(idx->dims, 0, size_t(*axis));
            const int64_t inner = product(idx->dims, size_t(*axis));
            return dispatchBySize(ctx, values->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T off = values->as<T>()[0], on = values->as<T>()[1];
                T* po = (*out)->template as<T>();
                for (int64_t o = 0; o < outer; ++o)
                    for (int64_t d = 0; d < depth; ++d)
                        for (int64_t i = 0; i < inner; ++i) {
                            int64_t v = int64_t(elementAsDouble(*idx, o * inner + i));
                            if (v < 0) v += depth;
                            po[(o * depth + d) * inner + i] = v == d ? on : off;
                        }
                return Status::ok();
            });
        }));
    };
}

KernelFactory depthSpace(bool toSpace) {
    return [toSpace](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t bs = init.getInt("blocksize", 1);
        const bool crd = init.getString("mode", "DCR") == "CRD";
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* x = ctx.input(0);
            if (x->rank() != 4) return bad(ctx, "needs a 4-D input");
            const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
            std::vector<int64_t> dims = toSpace ? std::vector<int64_t>{n, c / (bs * bs), h * bs, w * bs}
                                                : std::vector<int64_t>{n, c * bs * bs, h / bs, w / bs};
            if (toSpace && c % (bs * bs)) return bad(ctx, "channels not divisible by blocksize^2");
            if (!toSpace && (h % bs || w % bs)) return bad(ctx, "spatial dims not divisible by blocksize");
            auto out = ctx.output(0, x->dtype, dims);
            if (!out) return out.status();
            return dispatchBySize(ctx, x->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                const T* pi = x->as<T>();
                T* po = (*out)->template as<T>();
                const int64_t oc = dims[1], oh = dims[2], ow = dims[3];
                for (int64_t b = 0; b < n; ++b)
                    for (int64_t ch = 0; ch < oc; ++ch)
                        for (int64_t y = 0; y < oh; ++y)
                            for (int64_t xx = 0; xx < ow; ++xx) {
                                int64_t src;
                                if (toSpace) {
                                    const int64_t by = y % bs, bx = xx % bs;
                                    const int64_t ic = crd ? ch * bs * bs + by * bs + bx : (by * bs + bx) * oc + ch;
                                    src = ((b * c + ic) * h + y / bs) * w + xx / bs;
                                } else {
                                    const int64_t blocks = ch / c, ic = ch % c;
                                    const int64_t by = blocks / bs, bx = blocks % bs;
                                    src = ((b * c + ic) * h + y * bs + by) * w + xx * bs + bx;
                                }
                                po[((b * oc + ch) * oh + y) * ow + xx] = pi[src];
                            }
                return Status::ok();
            });
        }));
    };
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {
using namespace cpu;

void registerTensorKernels(KernelRegistry& r) {
    // Data movement works on any element size, so most of these take half types as they are.
    auto add = [&r](const std::string& op, KernelFactory f, bool halfViaFloat = false) {
        r.add(op, std::move(f), {.halfViaFloat = halfViaFloat});
    };
    add("Reshape", factoryOf<ReshapeKernel>());
    add("Flatten", flatten());
    add("Squeeze", squeeze(false));
    add("Unsqueeze", squeeze(true));
    add("Transpose", transpose());
    add("Concat", concat());
    add("Split", split());
    add("Slice", factoryOf<SliceKernel>());
    add("Gather", gather());
    add("GatherElements", gatherElements());
    add("GatherND", gatherND());
    add("ScatterElements", scatterElements(), true);
    add("Scatter", scatterElements(), true);
    add("ScatterND", scatterND(), true);
    add("Expand", functionKernel(expand));
    add("Tile", functionKernel(tile));
    add("Pad", factoryOf<PadKernel>(), true);
    add("Shape", shapeOp());
    add("Size", functionKernel(sizeOp));
    add("ConstantOfShape", constantOfShape());
    add("Constant", constant());
    add("Range", functionKernel(range), true);
    add("NonZero", functionKernel(nonZero));
    add("Trilu", trilu());
    add("OneHot", oneHot());
    add("DepthToSpace", depthSpace(true));
    add("SpaceToDepth", depthSpace(false));
}

}  // namespace fsc
