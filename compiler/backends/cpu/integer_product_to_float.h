#pragma once
// Y = float((A - a_zero)(B - b_zero)) x (a_scale x b_scale) + bias: the product that
// MatMulIntegerToFloat, DynamicQuantizeMatMul and QAttention share (matmul_integer_to_float.cpp).
#include <functional>
#include <mutex>
#include <vector>

#include "compiler/backends/cpu/qlinear_conv_vnni.h"
#include "compiler/runtime/kernel.h"
#include "compiler/runtime/rt_tensor.h"

namespace fsc::cpu {

// Gives Y's storage for its dims (A's with the last replaced by N): a kernel's output slot or
// scratch; every element is written.
using FloatAlloc = std::function<Result<float*>(const std::vector<int64_t>& dims)>;

// One per node: keeps B packed for the VNNI kernel when B is a constant (`bInput` is its input
// index) and the CPU has VNNI.
class IntegerProductToFloat {
public:
    Status multiply(KernelContext& ctx, const RtTensor& a, const RtTensor* az, float aScale,
                    const RtTensor& b, const RtTensor* bz, const RtTensor& bs, const RtTensor* bias,
                    size_t bInput, const FloatAlloc& output);

private:
    const VnniPointwiseWeights* vnniWeights(KernelContext& ctx, const RtTensor& a,
                                            const RtTensor& b, const RtTensor* bz, size_t bInput);

    std::mutex m_mutex;
    VnniPointwiseWeights m_packed;
    const void* m_source = nullptr;
};

}  // namespace fsc::cpu
