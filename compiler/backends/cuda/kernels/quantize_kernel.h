#pragma once
// QuantizeLinear and DequantizeLinear with one scale and zero point (per tensor), which the
// host reads from the node's constants: y = saturate(round_half_even(x / scale) + zero) and
// y = (x - zero) * scale, in double as the CPU kernels compute them.
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

struct QuantizeParams {
    const void* in;
    void* out;
    ElemType inType, outType;
    bool dequantize;
    double scale, zero;
    double lo, hi;  // the quantized type's range (quantize only)
    int64_t count;
};

FSC_HD void quantizeElement(const QuantizeParams& p, int64_t i) {
    const double x = loadDouble(p.in, p.inType, i);
    if (p.dequantize) {
        storeDouble(p.out, p.outType, i, (x - p.zero) * p.scale);
        return;
    }
    double v = nearbyint(x / p.scale) + p.zero;
    v = v < p.lo ? p.lo : v > p.hi ? p.hi : v;
    storeDouble(p.out, p.outType, i, v);
}

}  // namespace fsc::dk
