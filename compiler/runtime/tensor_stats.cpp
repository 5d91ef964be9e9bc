#include "compiler/runtime/tensor_stats.h"

#include <algorithm>
#include <cmath>

namespace fsc {

TensorStats computeTensorStats(const RtTensor& tensor, int bins) {
    TensorStats s;
    s.count = tensor.numel();
    if (tensor.dtype == DType::String || s.count == 0) return s;
    // Two passes: moments (Welford, stable for large weights), then the histogram.
    double mean = 0, m2 = 0, lo = INFINITY, hi = -INFINITY;
    int64_t finite = 0, zeros = 0;
    for (int64_t i = 0; i < s.count; ++i) {
        const double v = elementAsDouble(tensor, i);
        if (!std::isfinite(v)) {
            ++s.nonFinite;
            continue;
        }
        if (v == 0) ++zeros;
        ++finite;
        const double delta = v - mean;
        mean += delta / double(finite);
        m2 += delta * (v - mean);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    s.sparsity = double(zeros) / double(s.count);
    if (finite == 0) return s;
    s.min = lo;
    s.max = hi;
    s.mean = mean;
    s.stddev = std::sqrt(m2 / double(finite));
    s.histogram.assign(size_t(hi > lo ? std::max(1, bins) : 1), 0);
    const double width = (hi - lo) / double(s.histogram.size());
    for (int64_t i = 0; i < s.count; ++i) {
        const double v = elementAsDouble(tensor, i);
        if (!std::isfinite(v)) continue;
        const size_t bin = width > 0 ? std::min(s.histogram.size() - 1, size_t((v - lo) / width)) : 0;
        ++s.histogram[bin];
    }
    return s;
}

}  // namespace fsc
