#pragma once
// QuantizeLinear and DequantizeLinear with one scale and zero point (per tensor), which the
// host reads from the node's constants: y = saturate(round_half_even(x / scale) + zero) and
// y = (x - zero) * scale, as the CPU kernels compute them. x / scale is divided in float32
// unless x is double: ONNX's reference and ONNX Runtime divide in the input's precision,
// and in double a quotient float32 rounds to exactly .5 can fall just below it (one step off).
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

struct QuantizeParams {
    static constexpr const char* kName = "fsc_quantize";  // the kernel, as profilers name it
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
    const double q = p.inType == ElemType::F64 ? x / p.scale : double(float(x) / float(p.scale));
    double v = nearbyint(q) + p.zero;
    v = v != v ? 0.0 : v < p.lo ? p.lo : v > p.hi ? p.hi : v;  // NaN to 0, as the CPU kernels
    storeDouble(p.out, p.outType, i, v);
}

}  // namespace fsc::dk
