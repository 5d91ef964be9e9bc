#include "compiler/runtime/tensor_difference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fsc {

void TensorDifference::add(const RtTensor& reference, const RtTensor& candidate) {
    const int64_t n = std::min(reference.numel(), candidate.numel());
    for (int64_t i = 0; i < n; ++i) {
        const double u = elementAsDouble(reference, i), v = elementAsDouble(candidate, i);
        ++m_elements;
        if (!std::isfinite(u) || !std::isfinite(v)) {
            if (!(u == v || (std::isnan(u) && std::isnan(v)))) ++m_nonFinite;
            continue;
        }
        m_maxAbs = std::max(m_maxAbs, std::abs(u - v));
        m_absSum += std::abs(u - v);
        m_refSum += std::abs(u);
        m_dot += u * v;
        m_refSquares += u * u;
        m_candSquares += v * v;
    }
    m_sampleOpen = true;
}

void TensorDifference::endSample() {
    if (!m_sampleOpen) return;
    const double cosine = m_refSquares > 0 && m_candSquares > 0 ? m_dot / std::sqrt(m_refSquares * m_candSquares)
                                                                : (m_refSquares == m_candSquares ? 1.0 : 0.0);
    m_lowestCosine = std::min(m_lowestCosine, cosine);
    m_dot = m_refSquares = m_candSquares = 0;
    m_sampleOpen = false;
}

double TensorDifference::meanRelative() const {
    if (m_nonFinite > 0) return std::numeric_limits<double>::infinity();
    if (m_refSum > 0) return m_absSum / m_refSum;
    return m_absSum > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

double TensorDifference::cosine() const {
    if (!m_sampleOpen) return m_lowestCosine;
    TensorDifference copy = *this;
    copy.endSample();
    return copy.m_lowestCosine;
}

}  // namespace fsc
