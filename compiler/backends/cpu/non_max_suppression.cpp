// NonMaxSuppression: per batch and class, candidates above the score threshold in order of
// score (ties in index order), each kept unless its IoU with a box already kept exceeds the
// threshold. Detection models hand it thousands of boxes (SSDlite: 300 per class for 90
// classes, offset apart so one NMS covers them all), so the boxes are read once into
// corner arrays with their areas, and each candidate is compared with the kept boxes a
// block at a time, stopping at the first block that suppresses it. Kept boxes are filed by
// where they start along x, in columns as wide as the widest candidate, so a candidate is
// compared only with the boxes of the columns that can reach it: torchvision's batched NMS
// shifts each class's boxes past the last class's, which leaves every class in columns of
// its own (SSDlite's 27,000 candidates: 152 -> ms).
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include "compiler/backends/cpu/cpu_common.h"

namespace fsc::cpu {
namespace {

// Boxes as corners (x1 <= x2, y1 <= y2: ONNX allows either diagonal) and areas, in double
// as the IoU is compared in.
struct Corners {
    std::vector<double> x1, y1, x2, y2, area;

    void reserve(size_t n) {
        for (auto* v : {&x1, &y1, &x2, &y2, &area}) v->reserve(n);
    }
    void push(const std::array<double, 4>& c) {
        x1.push_back(c[0]), y1.push_back(c[1]), x2.push_back(c[2]), y2.push_back(c[3]);
        area.push_back((c[2] - c[0]) * (c[3] - c[1]));
    }
    size_t size() const { return x1.size(); }
};

std::array<double, 4> cornersOf(const double* v, bool centered) {
    if (centered) return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

// Whether box c overlaps any kept box by more than the threshold. A block of kept boxes is
// tested whole (a loop the compiler vectorizes) before looking at its result.
bool suppressedBy(const Corners& kept, const std::array<double, 4>& c, double cArea, double threshold) {
    constexpr size_t kBlock = 16;
    const size_t n = kept.size();
    for (size_t k0 = 0; k0 < n; k0 += kBlock) {
        const size_t k1 = std::min(n, k0 + kBlock);
        bool any = false;
        for (size_t k = k0; k < k1; ++k) {
            const double ix = std::max(0.0, std::min(kept.x2[k], c[2]) - std::max(kept.x1[k], c[0]));
            const double iy = std::max(0.0, std::min(kept.y2[k], c[3]) - std::max(kept.y1[k], c[1]));
            const double inter = ix * iy;
            const double uni = kept.area[k] + cArea - inter;
            any |= uni > 0 && inter / uni > threshold;  // a union of 0 counts as IoU 0
        }
        if (any) return true;
    }
    return false;
}

std::vector<double> valuesOf(const RtTensor& t) {
    std::vector<double> values(size_t(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) values[size_t(i)] = elementAsDouble(t, i);
    return values;
}

// Kept boxes by the column their x1 falls in. A box of width at most `width` starting in
// column i can only overlap boxes whose x1 lies in columns i - 1 to the column of its x2.
class KeptColumns {
public:
    KeptColumns(const std::vector<std::array<double, 4>>& candidates) {
        double lo = 0, hi = 0, widest = 0;
        for (size_t i = 0; i < candidates.size(); ++i) {
            const auto& c = candidates[i];
            lo = i ? std::min(lo, c[0]) : c[0];
            hi = i ? std::max(hi, c[0]) : c[0];
            widest = std::max(widest, c[2] - c[0]);
        }
        m_origin = lo;
        // At most one column a candidate, and one column where the span is not finite.
        const double span = hi - lo;
        const double columns = std::isfinite(span) && widest > 0 ? span / widest + 1 : 1;
        m_columns.resize(size_t(std::clamp(columns, 1.0, double(std::max<size_t>(1, candidates.size())))));
        m_width = m_columns.size() > 1 ? std::max(widest, span / double(m_columns.size() - 1)) : 0;
    }
    bool suppresses(const std::array<double, 4>& c, double area, double threshold) const {
        const size_t first = column(c[0]), last = column(c[2]);
        for (size_t i = first > 0 ? first - 1 : 0; i <= last; ++i)
            if (suppressedBy(m_columns[i], c, area, threshold)) return true;
        return false;
    }
    void keep(const std::array<double, 4>& c) { m_columns[column(c[0])].push(c); }

private:
    size_t column(double x) const {
        const double i = m_width > 0 ? std::floor((x - m_origin) / m_width) : 0.0;
        if (!(i > 0)) return 0;  // NaN too
        return size_t(std::min(i, double(m_columns.size() - 1)));
    }
    double m_origin = 0, m_width = 0;
    std::vector<Corners> m_columns;
};

KernelFactory nonMaxSuppression() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const bool centered = init.getInt("center_point_box", 0) != 0;
        return std::unique_ptr<Kernel>(new FunctionKernel([=](KernelContext& ctx) -> Status {
            const RtTensor* boxes = ctx.input(0);
            const RtTensor* scores = ctx.input(1);
            if (!boxes || !scores || boxes->rank() != 3 || scores->rank() != 3 || boxes->dims[2] != 4)
                return bad(ctx, "needs boxes [B,N,4] and scores [B,C,N]");
            const int64_t batches = boxes->dims[0], n = boxes->dims[1], classes = scores->dims[1];
            if (scores->dims[0] != batches || scores->dims[2] != n)
                return bad(ctx, "scores " + dimsString(scores->dims) + " do not match boxes " + dimsString(boxes->dims));
            const int64_t maxOut = ctx.input(2) && ctx.input(2)->numel() ? elementAsInt(*ctx.input(2), 0) : 0;
            const double iouThreshold = ctx.input(3) && ctx.input(3)->numel() ? elementAsDouble(*ctx.input(3), 0) : 0.0;
            const bool hasScoreThreshold = ctx.input(4) && ctx.input(4)->numel();
            const double scoreThreshold = hasScoreThreshold ? elementAsDouble(*ctx.input(4), 0) : 0.0;
            const std::vector<double> boxValues = valuesOf(*boxes), scoreValues = valuesOf(*scores);
            std::vector<std::array<int64_t, 3>> selected;
            std::vector<int64_t> candidates;
            std::vector<std::array<double, 4>> corners;
            std::vector<int64_t> keptIndex;
            for (int64_t b = 0; b < batches && maxOut > 0; ++b)
                for (int64_t c = 0; c < classes; ++c) {
                    const double* score = scoreValues.data() + (b * classes + c) * n;
                    candidates.clear();
                    for (int64_t i = 0; i < n; ++i)
                        if (!hasScoreThreshold || score[i] > scoreThreshold) candidates.push_back(i);
                    std::stable_sort(candidates.begin(), candidates.end(),
                                     [&](int64_t x, int64_t y) { return score[x] > score[y]; });
                    corners.clear();
                    for (int64_t i : candidates) corners.push_back(cornersOf(boxValues.data() + (b * n + i) * 4, centered));
                    KeptColumns kept(corners);
                    keptIndex.clear();
                    for (size_t i = 0; i < candidates.size() && int64_t(keptIndex.size()) < maxOut; ++i) {
                        const auto& c = corners[i];
                        if (kept.suppresses(c, (c[2] - c[0]) * (c[3] - c[1]), iouThreshold)) continue;
                        kept.keep(c);
                        keptIndex.push_back(candidates[i]);
                    }
                    for (int64_t k : keptIndex) selected.push_back({b, c, k});
                }
            auto out = ctx.output(0, DType::Int64, {int64_t(selected.size()), 3});
            if (!out) return out.status();
            for (size_t i = 0; i < selected.size(); ++i)
                for (int k = 0; k < 3; ++k) (*out)->as<int64_t>()[i * 3 + size_t(k)] = selected[i][size_t(k)];
            return Status::ok();
        }));
    };
}

}  // namespace
}  // namespace fsc::cpu

namespace fsc {

void registerNonMaxSuppressionKernel(KernelRegistry& r) { r.add("NonMaxSuppression", cpu::nonMaxSuppression()); }

}  // namespace fsc
