#pragma once
// The maths of every element-wise op, written once. The device's element-wise kernel and its
// CPU twin (elementwise_kernel.h) call ewApply with the op read from the launch; the kernels
// generated for FusedElementwise nodes (elementwise_codegen.cpp) carry this file's text and
// call it with the op as a constant, which NVRTC folds to the one expression. So the simulated
// device runs, element by element, the code the GPU runs. NVRTC compiles this file without
// the host's headers: it may include nothing under __CUDACC_RTC__.
#if defined(__CUDACC_RTC__)
#define FSC_HD __device__ __forceinline__
#else
#include "compiler/backends/cuda/kernels/hd.h"
#endif

namespace fsc {
namespace dk {

// The same order as fsc::EwOp (elementwise_program.h); cuda_elementwise_kernels.cpp checks it.
enum class EwCode : unsigned char { Add, Sub, Mul, Div, Pow, Max, Min, Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Neg, Abs, Erf, Reciprocal, Floor, Ceil, Sin, Cos };

// y is ignored by the unary ops.
FSC_HD float ewApply(EwCode op, float x, float y) {
    switch (op) {
        case EwCode::Add: return x + y;
        case EwCode::Sub: return x - y;
        case EwCode::Mul: return x * y;
        case EwCode::Div: return x / y;
        case EwCode::Pow: return powf(x, y);
        case EwCode::Max: return x > y || x != x ? x : y;  // NaN propagates, as fmaxf's does not
        case EwCode::Min: return x < y || x != x ? x : y;
        case EwCode::Relu: return x > 0.f ? x : 0.f;
        case EwCode::Sigmoid: return x >= 0.f ? 1.f / (1.f + expf(-x)) : expf(x) / (1.f + expf(x));
        case EwCode::Tanh: return tanhf(x);
        case EwCode::Exp: return expf(x);
        case EwCode::Log: return logf(x);
        case EwCode::Sqrt: return sqrtf(x);
        case EwCode::Neg: return -x;
        case EwCode::Abs: return fabsf(x);
        case EwCode::Erf: return erff(x);
        case EwCode::Reciprocal: return 1.f / x;
        case EwCode::Floor: return floorf(x);
        case EwCode::Ceil: return ceilf(x);
        case EwCode::Sin: return sinf(x);
        case EwCode::Cos: return cosf(x);
    }
    return 0.f;
}

}  // namespace dk
}  // namespace fsc
