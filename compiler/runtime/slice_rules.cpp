#include "compiler/runtime/slice_rules.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace fsc {

Result<SliceBox> sliceBox(const std::vector<int64_t>& inputDims, const std::vector<int64_t>& starts,
                          const std::vector<int64_t>& ends, std::vector<int64_t> axes, std::vector<int64_t> steps) {
    const int64_t rank = int64_t(inputDims.size());
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
        return Status(ErrorCode::InvalidModel, "starts, ends, axes and steps differ in length");
    SliceBox box{std::vector<int64_t>(size_t(rank), 0), std::vector<int64_t>(size_t(rank), 1), inputDims};
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t axis = axes[i];
        if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
            return Status(ErrorCode::InvalidModel,
                          "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
        const size_t a = size_t(axis < 0 ? axis + rank : axis);
        const int64_t d = inputDims[a], st = steps[i];
        if (st == 0) return Status(ErrorCode::InvalidModel, "slice step is 0");
        auto clampIndex = [&](int64_t v) {
            if (v < 0) v += d;
            return st > 0 ? std::clamp<int64_t>(v, 0, d) : std::clamp<int64_t>(v, -1, d - 1);
        };
        const int64_t s = clampIndex(starts[i]), e = clampIndex(ends[i]);
        box.start[a] = s;
        box.step[a] = st;
        box.dims[a] = st > 0 ? (e > s ? (e - s + st - 1) / st : 0) : (s > e ? (s - e - st - 1) / -st : 0);
    }
    return box;
}

Result<std::vector<int64_t>> splitSizes(int64_t total, std::vector<int64_t> sizes, int64_t parts, int64_t outputs) {
    if (sizes.empty()) {
        if (parts <= 0) parts = outputs;
        const int64_t chunk = parts > 0 ? (total + parts - 1) / parts : 0;
        for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, total - i * chunk)));
    }
    if (int64_t(sizes.size()) != outputs || std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != total)
        return Status(ErrorCode::InvalidModel, "split sizes do not add up to the axis length " + std::to_string(total));
    return sizes;
}

}  // namespace fsc
