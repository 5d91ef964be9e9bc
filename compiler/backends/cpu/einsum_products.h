#pragma once
// A two-operand Einsum that is a batch of matrix products, run as one: each operand gathered
// into [batch, rows, summed] / [batch, summed, columns] order, one GEMM per batch entry, the
// product scattered into the output's order. MViT's decomposed relative positions
// ("bythwc,hkc->bythwk") took 250 ms each through the loop over every label combination.
#include <string>

#include "compiler/runtime/rt_tensor.h"

namespace fsc::cpu {

// Computes `out` (allocated with the output's dims) from float32 `a` and `b` labelled by the
// terms (one label per dim, '...' already expanded). False, with `out` untouched, when the
// equation is not such a product: a label twice in one term, a label summed within one
// operand, a size-1 dim broadcasting against a larger one, or another dtype.
bool einsumByProducts(const std::string& termA, const std::string& termB, const std::string& termOut,
                      const RtTensor& a, const RtTensor& b, RtTensor& out);

}  // namespace fsc::cpu
