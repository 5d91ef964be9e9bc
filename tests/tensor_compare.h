#pragma once
// How the CUDA tests compare a result with the CPU backend's (the oracle), shared by the
// backend's tests and the CLI's.
#include <algorithm>
#include <cmath>

#include "compiler/runtime/rt_tensor.h"

namespace fsc::test {

// The worst error of b against a, element by element relative to a's own value, with a
// floor of 1% of a's largest magnitude for values near zero (an rtol with a small atol):
// a probability of 0.025 is judged against 0.025, not against 1. Another dtype or shape, or
// a NaN or infinity in one and not the other, is an infinite error.
inline double worstRelativeError(const RtTensor& a, const RtTensor& b) {
    if (a.dims != b.dims || a.dtype != b.dtype) return INFINITY;
    double largest = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
        if (const double x = std::abs(elementAsDouble(a, i)); std::isfinite(x)) largest = std::max(largest, x);
    const double floor = std::max(0.01 * largest, 1e-30);
    double worst = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
        const double x = elementAsDouble(a, i), y = elementAsDouble(b, i);
        if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
            if (!(x == y || (std::isnan(x) && std::isnan(y)))) return INFINITY;
            continue;
        }
        const double error = std::abs(x - y) / std::max(std::abs(x), floor);
        if (!(error <= worst)) worst = error;  // a NaN error sticks
    }
    return worst;
}

}  // namespace fsc::test
