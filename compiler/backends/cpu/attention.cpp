// ai.fusescope.Attention on the CPU: softmax(scale * Q.K^T + mask).V, a block of query rows
// at a time, so the scores never exist as a whole tensor. The operands are read through
// their permutations (strides, handed to the GEMM as leading dims), which is how the head
// transposes the pass absorbed cost no copy.
#include <cmath>
#include <numeric>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/fused_kernels.h"
#include "compiler/backends/cpu/gemm.h"

namespace fsc::cpu {
namespace {

// A tensor seen through a permutation: dims[i] = stored dims[perm[i]], with the stride of
// that stored dim.
struct View {
    std::vector<int64_t> dims, strides;
};

Result<View> permuted(const KernelContext& ctx, const RtTensor& t, const std::vector<int64_t>& perm,
                      const char* what) {
    const std::vector<int64_t> stored = stridesOf(t.dims);
    View v;
    if (perm.empty()) return View{t.dims, stored};
    if (perm.size() != t.rank()) return bad(ctx, std::string(what) + "'s permutation does not match its rank");
    std::vector<bool> seen(perm.size());
    for (int64_t p : perm) {
        if (p < 0 || p >= int64_t(perm.size()) || seen[size_t(p)])
            return bad(ctx, std::string(what) + "'s permutation is not a permutation");
        seen[size_t(p)] = true;
        v.dims.push_back(t.dims[size_t(p)]);
        v.strides.push_back(stored[size_t(p)]);
    }
    return v;
}

// Offsets of every batch index into each operand (0 stride where an operand broadcasts).
struct BatchWalk {
    std::vector<int64_t> dims;                  // broadcast batch dims
    std::vector<std::vector<int64_t>> strides;  // per operand, per batch dim
    int64_t count = 1;

    void offsets(int64_t b, int64_t* out) const {
        for (size_t k = 0; k < strides.size(); ++k) out[k] = 0;
        for (size_t i = dims.size(); i-- > 0;) {
            const int64_t idx = b % dims[i];
            b /= dims[i];
            for (size_t k = 0; k < strides.size(); ++k) out[k] += idx * strides[k][i];
        }
    }
};

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
                   const View& Q, const View& K, const View& V, const View& M, const View& Y,
                   const BatchWalk& walk, float scale) {
    const size_t r = Q.dims.size();
    const int64_t lq = Q.dims[r - 2], d = Q.dims[r - 1], lk = K.dims[r - 1], dv = V.dims[r - 1];
    constexpr int64_t kRowsPerTask = 64;
    const int64_t blocks = (lq + kRowsPerTask - 1) / kRowsPerTask;
    pool.parallelFor(walk.count * blocks, 1, [&](int64_t t0, int64_t t1) {
        std::vector<T> scores(static_cast<size_t>(kRowsPerTask * lk)), out;
        int64_t off[5];
        for (int64_t task = t0; task < t1; ++task) {
            const int64_t b = task / blocks, i0 = (task % blocks) * kRowsPerTask;
            const int64_t rows = std::min(kRowsPerTask, lq - i0);
            walk.offsets(b, off);
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
            auto Q = permuted(ctx, *q, qPerm, "Q");
            auto K = permuted(ctx, *kt, kPerm, "K^T");
            auto V = permuted(ctx, *v, vPerm, "V");
            if (!Q) return Q.status();
            if (!K) return K.status();
            if (!V) return V.status();
            const size_t r = Q->dims.size();
            if (r < 2 || K->dims.size() != r || V->dims.size() != r) return bad(ctx, "Q, K^T and V need one rank of at least 2");
            if (Q->dims[r - 1] != K->dims[r - 2]) return bad(ctx, "Q's last dim differs from K^T's rows");
            if (K->dims[r - 1] != V->dims[r - 2]) return bad(ctx, "K^T's columns differ from V's rows");

            BatchWalk walk;
            walk.strides.assign(5, std::vector<int64_t>(r - 2, 0));
            for (size_t i = 0; i + 2 < r; ++i) {
                int64_t n = 1;
                for (const View* x : {&*Q, &*K, &*V}) {
                    if (x->dims[i] != 1 && n != 1 && x->dims[i] != n) return bad(ctx, "batch dims do not broadcast");
                    if (x->dims[i] != 1) n = x->dims[i];
                }
                walk.dims.push_back(n);
                walk.count *= n;
                const View* views[] = {&*Q, &*K, &*V};
                for (size_t k = 0; k < 3; ++k) walk.strides[k][i] = views[k]->dims[i] == 1 ? 0 : views[k]->strides[i];
            }
            // The logical output [batch..., Lq, Dv], stored through out_perm.
            std::vector<int64_t> logical = walk.dims;
            logical.push_back(Q->dims[r - 2]);
            logical.push_back(V->dims[r - 1]);
            std::vector<int64_t> perm = outPerm;
            if (perm.empty()) perm.resize(r), std::iota(perm.begin(), perm.end(), 0);
            if (perm.size() != r) return bad(ctx, "out_perm does not match the output's rank");
            std::vector<int64_t> stored(r);
            for (size_t i = 0; i < r; ++i) {
                if (perm[i] < 0 || perm[i] >= int64_t(r)) return bad(ctx, "out_perm is not a permutation");
                stored[i] = logical[size_t(perm[i])];
            }
            View Y{logical, std::vector<int64_t>(r, 0)};
            const std::vector<int64_t> storedStrides = stridesOf(stored);
            for (size_t i = 0; i < r; ++i) Y.strides[size_t(perm[i])] = storedStrides[i];
            for (size_t i = 0; i + 2 < r; ++i) walk.strides[4][i] = Y.strides[i];

            // The mask broadcasts against the scores [batch..., Lq, Lk].
            View M{{}, std::vector<int64_t>(r, 0)};
            if (mask) {
                if (mask->rank() > r) return bad(ctx, "the mask has a larger rank than the scores");
                std::vector<int64_t> scores = walk.dims;
                scores.push_back(Q->dims[r - 2]);
                scores.push_back(K->dims[r - 1]);
                const std::vector<int64_t> ms = stridesOf(mask->dims);
                const size_t lead = r - mask->rank();
                for (size_t i = lead; i < r; ++i) {
                    const int64_t md = mask->dims[i - lead];
                    if (md != 1 && md != scores[i]) return bad(ctx, "the mask does not broadcast to the scores " + dimsString(scores));
                    M.strides[i] = md == 1 ? 0 : ms[i - lead];
                }
                for (size_t i = 0; i + 2 < r; ++i) walk.strides[3][i] = M.strides[i];
            }
            auto out = ctx.output(0, q->dtype, stored);
            if (!out) return out.status();
            if ((*out)->numel() == 0) return Status::ok();
            return dispatchFloat(ctx, q->dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                attentionRows<T>(ctx.pool(), q->as<T>(), kt->as<T>(), v->as<T>(), mask ? mask->as<T>() : nullptr,
                                 (*out)->template as<T>(), *Q, *K, *V, M, Y, walk, scale);
                return Status::ok();
            });
        }));
    };
}

}  // namespace fsc::cpu
