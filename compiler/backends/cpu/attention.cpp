// ai.fusescope.Attention on the CPU: softmax(scale * Q.K^T + mask).V, a block of query rows
// at a time, so the scores never exist as a whole tensor. The operands are read through
// their permutations (strides, handed to the GEMM as leading dims), which is how the head
// transposes the pass absorbed cost no copy.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/fused_kernels.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/attention_layout.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {
namespace {

// A matrix inside a strided tensor, as gemm() takes it: row-major with a leading dim, or
// transposed. Anything else is packed first.
template <typename T>
struct Operand {
    Operand(const T* d, int64_t r, int64_t c, int64_t rs, int64_t cs)
        : data(d), rows(r), cols(c), rowStride(rs), colStride(cs) {}
    const T* data;
    int64_t rows, cols, rowStride, colStride;
    std::vector<T> packed;
    bool trans = false;
    int64_t ld = 0;

    void prepare() {
        if (colStride == 1 || cols == 1) {
            ld = std::max<int64_t>(rows == 1 ? cols : rowStride, cols);
            if (rows == 1 || rowStride >= cols) return;
        }
        if (rowStride == 1 || rows == 1) {
            trans = true;
            ld = std::max<int64_t>(cols == 1 ? rows : colStride, rows);
            if (cols == 1 || colStride >= rows) return;
        }
        packed.resize(size_t(rows * cols));  // neither dim is contiguous: copy row by row
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) packed[size_t(r * cols + c)] = data[r * rowStride + c * colStride];
        data = packed.data();
        trans = false;
        ld = cols;
    }
};

// Per task: one batch index and a block of query rows. Scores for the block come from one
// GEMM, the softmax runs on them in place, and a second GEMM multiplies by V; only the
// block's scores [rows x Lk] are ever stored.
template <typename T>
void attentionRows(ThreadPool& pool, const T* q, const T* kt, const T* v, const T* mask, T* y,
                   const AttentionLayout& L, float scale) {
    const StridedView &Q = L.view[AttentionLayout::Q], &K = L.view[AttentionLayout::KT], &V = L.view[AttentionLayout::V],
                      &M = L.view[AttentionLayout::Mask], &Y = L.view[AttentionLayout::Y];
    const size_t r = Q.dims.size();
    const int64_t lq = Q.dims[r - 2], d = Q.dims[r - 1], lk = K.dims[r - 1], dv = V.dims[r - 1];
    // Blocks as tall as the scores allow (64k of them, in L2), so each GEMM is large enough
    // to run at speed (ViT-B/16's 197 query rows were 64 + 64 + 64 + 5, a GEMM of 5 rows in
    // every head), split further only to give every thread work, and of equal height.
    const int64_t tallest = std::max<int64_t>(16, 65536 / std::max<int64_t>(lk, 1));
    int64_t blocks = (lq + tallest - 1) / tallest;
    while (L.batchCount * blocks < 2 * pool.size() && (lq + blocks - 1) / blocks > 16) blocks *= 2;
    const int64_t rowsPerTask = (lq + blocks - 1) / blocks;
    blocks = (lq + rowsPerTask - 1) / rowsPerTask;
    pool.parallelFor(L.batchCount * blocks, 1, [&](int64_t t0, int64_t t1) {
        std::vector<T> scores(static_cast<size_t>(rowsPerTask * lk)), out;
        int64_t off[5];
        for (int64_t task = t0; task < t1; ++task) {
            const int64_t b = task / blocks, i0 = (task % blocks) * rowsPerTask;
            const int64_t rows = std::min(rowsPerTask, lq - i0);
            L.offsets(b, off);
            Operand<T> qm{q + off[0] + i0 * Q.strides[r - 2], rows, d, Q.strides[r - 2], Q.strides[r - 1]};
            Operand<T> km{kt + off[1], d, lk, K.strides[r - 2], K.strides[r - 1]};
            Operand<T> vm{v + off[2], lk, dv, V.strides[r - 2], V.strides[r - 1]};
            qm.prepare();
            km.prepare();
            vm.prepare();
            gemm(qm.trans, km.trans, rows, lk, d, T(scale), qm.data, qm.ld, km.data, km.ld, T(0), scores.data(), lk);
            for (int64_t i = 0; i < rows; ++i) {
                T* s = scores.data() + i * lk;
                if (mask) {
                    const T* m = mask + off[3] + (i0 + i) * M.strides[r - 2];
                    for (int64_t j = 0; j < lk; ++j) s[j] += m[j * M.strides[r - 1]];
                }
                if constexpr (std::is_same_v<T, float>) {
                    // Vectorized: libm's exp, a call per score, was most of the kernel's time
                    // (ViT-B/16: 5.6 million scores per inference).
                    softmaxArray(s, s, lk);
                    continue;
                }
                T best = -INFINITY;
                for (int64_t j = 0; j < lk; ++j) best = std::max(best, s[j]);
                T sum = 0;
                for (int64_t j = 0; j < lk; ++j) {
                    s[j] = std::exp(s[j] - best);
                    sum += s[j];
                }
                const T inv = T(1) / sum;
                for (int64_t j = 0; j < lk; ++j) s[j] *= inv;
            }
            // Straight into the output when its rows are contiguous, else through a block.
            T* dst = y + off[4] + i0 * Y.strides[r - 2];
            const bool direct = Y.strides[r - 1] == 1 && (rows == 1 || Y.strides[r - 2] >= dv);
            if (!direct) out.resize(size_t(rows * dv));
            gemm(false, vm.trans, rows, dv, lk, T(1), scores.data(), lk, vm.data, vm.ld, T(0),
                 direct ? dst : out.data(), direct ? std::max<int64_t>(Y.strides[r - 2], dv) : dv);
            if (!direct)
                for (int64_t i = 0; i < rows; ++i)
                    for (int64_t c = 0; c < dv; ++c) dst[i * Y.strides[r - 2] + c * Y.strides[r - 1]] = out[size_t(i * dv + c)];
        }
    });
}

}  // namespace

void attentionFloat(ThreadPool& pool, const float* q, const float* kt, const float* v, const float* mask, float* y,
                    const AttentionLayout& layout, float scale) {
    attentionRows<float>(pool, q, kt, v, mask, y, layout, scale);
}

KernelFactory attention() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const float scale = init.getFloat("scale", 1.0f);
        const std::vector<int64_t> qPerm = init.getInts("q_perm"), kPerm = init.getInts("k_perm"),
                                   vPerm = init.getInts("v_perm"), outPerm = init.getInts("out_perm");
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor *q = ctx.input(0), *kt = ctx.input(1), *v = ctx.input(2), *mask = ctx.input(3);
            if (!q || !kt || !v) return bad(ctx, "needs Q, K^T and V");
            if (kt->dtype != q->dtype || v->dtype != q->dtype || (mask && mask->dtype != q->dtype))
                return bad(ctx, "Q, K^T, V and the mask must share a dtype");
            const std::vector<int64_t>* maskDims = mask ? &mask->dims : nullptr;
            auto layout = attentionLayout(q->dims, kt->dims, v->dims, maskDims, {qPerm, kPerm, vPerm, outPerm});
            if (!layout) return layout.status().withContext(ctx.where());
            auto out = ctx.output(0, q->dtype, layout->outputDims);
            if (!out) return out.status();
            if ((*out)->numel() == 0) return Status::ok();
            return dispatchFloat(ctx, q->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                attentionRows<T>(ctx.pool(), q->as<T>(), kt->as<T>(), v->as<T>(), mask ? mask->as<T>() : nullptr,
                                 (*out)->template as<T>(), *layout, scale);
                return Status::ok();
            });
        }));
    };
}

}  // namespace fsc::cpu
