#include "compiler/runtime/attention_layout.h"

#include <numeric>
#include <string>

namespace fsc {
namespace {

Status invalid(const std::string& why) { return Status(ErrorCode::InvalidModel, why); }

std::vector<int64_t> contiguous(const std::vector<int64_t>& dims) {
    std::vector<int64_t> s(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
    return s;
}

std::string dimsText(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

Result<StridedView> permuted(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, const char* what) {
    const std::vector<int64_t> stored = contiguous(dims);
    if (perm.empty()) return StridedView{dims, stored};
    if (perm.size() != dims.size()) return invalid(std::string(what) + "'s permutation does not match its rank");
    StridedView v;
    std::vector<bool> seen(perm.size());
    for (int64_t p : perm) {
        if (p < 0 || p >= int64_t(perm.size()) || seen[size_t(p)])
            return invalid(std::string(what) + "'s permutation is not a permutation");
        seen[size_t(p)] = true;
        v.dims.push_back(dims[size_t(p)]);
        v.strides.push_back(stored[size_t(p)]);
    }
    return v;
}

}  // namespace

void AttentionLayout::offsets(int64_t b, int64_t* out) const {
    for (int k = 0; k < 5; ++k) out[k] = 0;
    for (size_t i = batchDims.size(); i-- > 0;) {
        const int64_t idx = b % batchDims[i];
        b /= batchDims[i];
        for (int k = 0; k < 5; ++k) out[k] += idx * batchStrides[k][i];
    }
}

Result<AttentionLayout> attentionLayout(const std::vector<int64_t>& q, const std::vector<int64_t>& kt,
                                        const std::vector<int64_t>& v, const std::vector<int64_t>* mask,
                                        const AttentionPerms& perms) {
    AttentionLayout L;
    auto Q = permuted(q, perms.q, "Q");
    if (!Q) return Q.status();
    auto K = permuted(kt, perms.k, "K^T");
    if (!K) return K.status();
    auto V = permuted(v, perms.v, "V");
    if (!V) return V.status();
    const size_t r = Q->dims.size();
    if (r < 2 || K->dims.size() != r || V->dims.size() != r) return invalid("Q, K^T and V need one rank of at least 2");
    if (Q->dims[r - 1] != K->dims[r - 2]) return invalid("Q's last dim differs from K^T's rows");
    if (K->dims[r - 1] != V->dims[r - 2]) return invalid("K^T's columns differ from V's rows");
    L.lq = Q->dims[r - 2];
    L.d = Q->dims[r - 1];
    L.lk = K->dims[r - 1];
    L.dv = V->dims[r - 1];
    for (auto& s : L.batchStrides) s.assign(r - 2, 0);
    const StridedView* operands[] = {&*Q, &*K, &*V};
    for (size_t i = 0; i + 2 < r; ++i) {
        int64_t n = 1;
        for (const StridedView* x : operands) {
            if (x->dims[i] != 1 && n != 1 && x->dims[i] != n) return invalid("batch dims do not broadcast");
            if (x->dims[i] != 1) n = x->dims[i];
        }
        L.batchDims.push_back(n);
        L.batchCount *= n;
        for (size_t k = 0; k < 3; ++k) L.batchStrides[k][i] = operands[k]->dims[i] == 1 ? 0 : operands[k]->strides[i];
    }
    // The logical output [batch..., Lq, Dv], stored through out_perm.
    std::vector<int64_t> logical = L.batchDims;
    logical.push_back(L.lq);
    logical.push_back(L.dv);
    std::vector<int64_t> perm = perms.out;
    if (perm.empty()) perm.resize(r), std::iota(perm.begin(), perm.end(), 0);
    if (perm.size() != r) return invalid("out_perm does not match the output's rank");
    L.outputDims.resize(r);
    std::vector<bool> seen(r);
    for (size_t i = 0; i < r; ++i) {
        if (perm[i] < 0 || perm[i] >= int64_t(r) || seen[size_t(perm[i])]) return invalid("out_perm is not a permutation");
        seen[size_t(perm[i])] = true;
        L.outputDims[i] = logical[size_t(perm[i])];
    }
    StridedView Y{logical, std::vector<int64_t>(r, 0)};
    const std::vector<int64_t> storedStrides = contiguous(L.outputDims);
    for (size_t i = 0; i < r; ++i) Y.strides[size_t(perm[i])] = storedStrides[i];
    for (size_t i = 0; i + 2 < r; ++i) L.batchStrides[AttentionLayout::Y][i] = Y.strides[i];

    // The mask broadcasts against the scores [batch..., Lq, Lk].
    StridedView M{{}, std::vector<int64_t>(r, 0)};
    if (mask) {
        if (mask->size() > r) return invalid("the mask has a larger rank than the scores");
        std::vector<int64_t> scores = L.batchDims;
        scores.push_back(L.lq);
        scores.push_back(L.lk);
        const std::vector<int64_t> ms = contiguous(*mask);
        const size_t lead = r - mask->size();
        for (size_t i = lead; i < r; ++i) {
            const int64_t md = (*mask)[i - lead];
            if (md != 1 && md != scores[i]) return invalid("the mask does not broadcast to the scores " + dimsText(scores));
            M.strides[i] = md == 1 ? 0 : ms[i - lead];
        }
        M.dims = scores;
        for (size_t i = 0; i + 2 < r; ++i) L.batchStrides[AttentionLayout::Mask][i] = M.strides[i];
    }
    L.view[AttentionLayout::Q] = std::move(*Q);
    L.view[AttentionLayout::KT] = std::move(*K);
    L.view[AttentionLayout::V] = std::move(*V);
    L.view[AttentionLayout::Mask] = std::move(M);
    L.view[AttentionLayout::Y] = std::move(Y);
    return L;
}

}  // namespace fsc
