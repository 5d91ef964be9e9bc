// ai.fusescope.Attention on the CPU: softmax(scale * Q.K^T + mask).V, one query row at a
// time, so the scores never exist as a whole tensor. The operands are read through their
// permutations (strides), which is how the head transposes the pass absorbed cost nothing.
#include <cmath>
#include <numeric>

#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/fused_kernels.h"

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

template <typename T>
void attentionRows(ThreadPool& pool, const T* q, const T* kt, const T* v, const T* mask, T* y,
                   const View& Q, const View& K, const View& V, const View& M, const View& Y,
                   const BatchWalk& walk, float scale) {
    const size_t r = Q.dims.size();
    const int64_t lq = Q.dims[r - 2], d = Q.dims[r - 1], lk = K.dims[r - 1], dv = V.dims[r - 1];
    constexpr int64_t kRowsPerTask = 32;
    const int64_t blocks = (lq + kRowsPerTask - 1) / kRowsPerTask;
    pool.parallelFor(walk.count * blocks, 1, [&](int64_t t0, int64_t t1) {
        std::vector<T> keys(static_cast<size_t>(lk * d)), values(static_cast<size_t>(lk * dv));
        std::vector<T> row(static_cast<size_t>(d)), scores(static_cast<size_t>(lk)), acc(static_cast<size_t>(dv));
        int64_t packedBatch = -1;
        int64_t off[5];
        for (int64_t task = t0; task < t1; ++task) {
            const int64_t b = task / blocks, i0 = (task % blocks) * kRowsPerTask;
            walk.offsets(b, off);
            if (b != packedBatch) {  // keys and values of this batch, packed row by row
                for (int64_t j = 0; j < lk; ++j) {
                    for (int64_t c = 0; c < d; ++c) keys[size_t(j * d + c)] = kt[off[1] + c * K.strides[r - 2] + j * K.strides[r - 1]];
                    for (int64_t c = 0; c < dv; ++c) values[size_t(j * dv + c)] = v[off[2] + j * V.strides[r - 2] + c * V.strides[r - 1]];
                }
                packedBatch = b;
            }
            for (int64_t i = i0; i < std::min(lq, i0 + kRowsPerTask); ++i) {
                for (int64_t c = 0; c < d; ++c) row[size_t(c)] = q[off[0] + i * Q.strides[r - 2] + c * Q.strides[r - 1]];
                T best = -INFINITY;
                for (int64_t j = 0; j < lk; ++j) {
                    const T* key = keys.data() + j * d;
                    T s = 0;
                    for (int64_t c = 0; c < d; ++c) s += row[size_t(c)] * key[c];
                    s *= T(scale);
                    if (mask) s += mask[off[3] + i * M.strides[r - 2] + j * M.strides[r - 1]];
                    scores[size_t(j)] = s;
                    best = std::max(best, s);
                }
                std::fill(acc.begin(), acc.end(), T(0));
                T sum = 0;
                for (int64_t j = 0; j < lk; ++j) {
                    const T p = std::exp(scores[size_t(j)] - best);
                    sum += p;
                    const T* val = values.data() + j * dv;
                    for (int64_t c = 0; c < dv; ++c) acc[size_t(c)] += p * val[c];
                }
                const T inv = sum > T(0) ? T(1) / sum : T(0);  // no keys: zeros, as MatMul gives
                for (int64_t c = 0; c < dv; ++c) y[off[4] + i * Y.strides[r - 2] + c * Y.strides[r - 1]] = acc[size_t(c)] * inv;
            }
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
