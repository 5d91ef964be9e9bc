#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {

std::string dimsString(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

Result<std::vector<int64_t>> broadcastShapes(
    const KernelContext& ctx, const std::vector<const std::vector<int64_t>*>& shapes) {
    size_t rank = 0;
    for (auto* s : shapes) rank = std::max(rank, s->size());
    std::vector<int64_t> out(rank, 1);
    for (auto* s : shapes) {
        const size_t offset = rank - s->size();
        for (size_t i = 0; i < s->size(); ++i) {
            const int64_t d = (*s)[i];
            int64_t& o = out[offset + i];
            if (d == o || d == 1) continue;
            if (o == 1) {
                o = d;
                continue;
            }
            std::string all;
            for (auto* t : shapes) all += (all.empty() ? "" : " and ") + dimsString(*t);
            return bad(ctx, "shapes " + all + " do not broadcast");
        }
    }
    return out;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    return strides;
}

BroadcastRows planBroadcast(const std::vector<int64_t>& out,
                            const std::vector<const std::vector<int64_t>*>& ins) {
    const size_t rank = out.size();
    const size_t n = ins.size();
    // Per input, stride of each output dim (0 where broadcast).
    std::vector<std::vector<int64_t>> strides(n, std::vector<int64_t>(rank, 0));
    for (size_t k = 0; k < n; ++k) {
        const auto& d = *ins[k];
        const size_t offset = rank - d.size();
        int64_t stride = 1;
        for (size_t i = d.size(); i-- > 0;) {
            strides[k][offset + i] = d[i] == 1 ? 0 : stride;
            stride *= d[i];
        }
    }
    // Merge dim i into i+1 when every input treats them as one contiguous run.
    std::vector<int64_t> dims;
    std::vector<std::vector<int64_t>> merged(n);
    for (size_t i = 0; i < rank; ++i) {
        if (out[i] == 1) continue;  // size-1 dims change nothing
        bool canMerge = !dims.empty();
        for (size_t k = 0; k < n && canMerge; ++k) {
            const int64_t prev = merged[k].back();
            const int64_t cur = strides[k][i];
            canMerge = (prev == 0 && cur == 0) || (cur != 0 && prev == cur * out[i]);
        }
        if (canMerge) {
            dims.back() *= out[i];
            for (size_t k = 0; k < n; ++k) merged[k].back() = strides[k][i];
        } else {
            dims.push_back(out[i]);
            for (size_t k = 0; k < n; ++k) merged[k].push_back(strides[k][i]);
        }
    }
    BroadcastRows plan;
    plan.rowStride.assign(n, 0);
    plan.outerStrides.assign(n, {});
    if (dims.empty()) return plan;  // a single element
    plan.rowLength = dims.back();
    for (size_t k = 0; k < n; ++k) plan.rowStride[k] = merged[k].back() ? 1 : 0;
    dims.pop_back();
    for (size_t k = 0; k < n; ++k) {
        merged[k].pop_back();
        plan.outerStrides[k] = merged[k];
    }
    plan.outerDims = dims;
    plan.rows = product(dims);
    return plan;
}

void rowOffsets(const BroadcastRows& plan, int64_t row, int64_t* offsets) {
    const size_t n = plan.outerStrides.size();
    for (size_t k = 0; k < n; ++k) offsets[k] = 0;
    for (size_t i = plan.outerDims.size(); i-- > 0;) {
        const int64_t idx = row % plan.outerDims[i];
        row /= plan.outerDims[i];
        for (size_t k = 0; k < n; ++k) offsets[k] += idx * plan.outerStrides[k][i];
    }
}

}  // namespace fsc::cpu
