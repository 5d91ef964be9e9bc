#pragma once
// How far one tensor is from another of the same shape: the one measure of numeric error
// that quantization's accuracy check, numeric bisection and the reports share. Accumulates
// over several tensors (a model's outputs, several samples) so a sum over all of them is
// one figure.
#include <cstdint>

#include "compiler/runtime/rt_tensor.h"

namespace fsc {

class TensorDifference {
public:
    // Adds every element of `candidate` against `reference` (same element count; any dtype,
    // read as double). NaN or infinity where the other has a finite value counts as
    // non-finite and is left out of the sums.
    void add(const RtTensor& reference, const RtTensor& candidate);
    // Starts a new sample for cosine(): the lowest per-sample cosine is kept.
    void endSample();

    double maxAbs() const { return m_maxAbs; }  // largest |reference - candidate|
    // sum |reference - candidate| / sum |reference| (0 when the reference is all zeros and so is the difference).
    double meanRelative() const;
    double cosine() const;  // the lowest cosine similarity of one sample (1 when none)
    int64_t elements() const { return m_elements; }
    int64_t nonFinite() const { return m_nonFinite; }

private:
    double m_maxAbs = 0, m_absSum = 0, m_refSum = 0;
    double m_dot = 0, m_refSquares = 0, m_candSquares = 0;
    double m_lowestCosine = 1;
    bool m_sampleOpen = false;
    int64_t m_elements = 0, m_nonFinite = 0;
};

}  // namespace fsc
