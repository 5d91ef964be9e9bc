#pragma once
// One element-wise kernel for every element-wise ONNX op and every FusedElementwise node
// with a program of at most kEwMaxCode ops over at most kEwMaxInputs inputs: each thread
// reads its element of every input at the broadcast offset, runs the program in registers
// (float maths, ew_ops.h) and stores once. The same function is the GPU thread's body and the
// CPU twin's loop body. An activation epilogue (GEMM outputs) has its own small kernel.
#include "compiler/backends/cuda/kernels/ew_ops.h"
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

inline constexpr int kEwMaxInputs = 8;
inline constexpr int kEwMaxCode = 32;

struct EwParams {
    static constexpr const char* kName = "fsc_elementwise";  // the kernel, as profilers name it
    const void* in[kEwMaxInputs];
    void* out;
    ElemType type;  // of every input and the output
    int inputs;
    int codeLength;
    uint8_t op[kEwMaxCode];
    int8_t a[kEwMaxCode], b[kEwMaxCode];
    int rank;
    int64_t dims[kMaxRank];                   // the output's
    int64_t strides[kEwMaxInputs][kMaxRank];  // in elements, 0 on broadcast dims
    uint8_t sameAsOutput[kEwMaxInputs];       // the input's offset is the element's own
    int64_t count;
    // Set by simplifyElementwise: every offset fits 32 bits (a GPU divides those several times
    // faster), and the program is one op on inputs 0 and 1 (or 0 alone), kept out of the
    // register file the general program needs.
    bool index32;
    bool singleOp;
};

// Input k's offset for output element i, in the index type the host chose. Each input
// works out its own (no array of offsets): an array indexed by a loop variable lives in
// local memory on a GPU, which made the kernel 25x slower than memory allows on an H100.
template <typename Index>
FSC_HD int64_t elementwiseOffset(const EwParams& p, int k, Index i) {
    Index rest = i, offset = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
        const Index n = Index(p.dims[d]);
        offset += rest % n * Index(p.strides[k][d]);
        rest /= n;
    }
    return int64_t(offset);
}
FSC_HD int64_t elementwiseInputOffset(const EwParams& p, int k, int64_t i) {
    if (p.sameAsOutput[k]) return i;
    return p.index32 ? elementwiseOffset<uint32_t>(p, k, uint32_t(i)) : elementwiseOffset<int64_t>(p, k, i);
}

// One op on inputs 0 and 1 (or 0 alone): the common case, all in registers.
FSC_HD void elementwiseSingleOpElement(const EwParams& p, int64_t i) {
    const float x = loadFloat(p.in[0], p.type, elementwiseInputOffset(p, 0, i));
    const float y = p.inputs > 1 ? loadFloat(p.in[1], p.type, elementwiseInputOffset(p, 1, i)) : 0.f;
    storeFloat(p.out, p.type, i, ewApply(EwCode(p.op[0]), x, y));
}

// A program of several ops: its values in a register file indexed by the program.
FSC_HD void elementwiseProgramElement(const EwParams& p, int64_t i) {
    float reg[kEwMaxInputs + kEwMaxCode];
    for (int k = 0; k < p.inputs; ++k) reg[k] = loadFloat(p.in[k], p.type, elementwiseInputOffset(p, k, i));
    for (int k = 0; k < p.codeLength; ++k)
        reg[p.inputs + k] = ewApply(EwCode(p.op[k]), reg[p.a[k]], p.b[k] >= 0 ? reg[p.b[k]] : 0.f);
    storeFloat(p.out, p.type, i, reg[p.inputs + p.codeLength - 1]);
}

FSC_HD void elementwiseElement(const EwParams& p, int64_t i) {
    if (p.singleOp) elementwiseSingleOpElement(p, i);
    else elementwiseProgramElement(p, i);
}

// Before a launch (host side): fewer dims (mergeStridedDims), and index32 and singleOp set.
inline void simplifyElementwise(EwParams& p) {
    int64_t* strides[kEwMaxInputs];
    for (int k = 0; k < p.inputs; ++k) strides[k] = p.strides[k];
    p.rank = mergeStridedDims(p.rank, p.dims, strides, p.inputs);
    p.index32 = p.count < kIndex32Limit;
    for (int k = 0; k < p.inputs; ++k) p.index32 = p.index32 && offsetsFit32(p.rank, p.dims, p.strides[k]);
    p.singleOp = p.codeLength == 1 && p.a[0] == 0 && (p.inputs == 1 ? p.b[0] < 0 : p.inputs == 2 && p.b[0] == 1);
}

// Activations a GEMM or convolution epilogue applies (FusedMatMul's `activation`).
enum class Act : uint8_t { None, Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Gelu, GeluTanh, Swish };

FSC_HD float applyActivation(Act act, float alpha, float beta, float x) {
    switch (act) {
        case Act::None: return x;
        case Act::Relu: return x > 0.f ? x : 0.f;
        case Act::LeakyRelu: return x >= 0.f ? x : alpha * x;
        case Act::Clip: return fminf(fmaxf(x, alpha), beta);
        case Act::Sigmoid: return 1.f / (1.f + expf(-x));
        case Act::Tanh: return tanhf(x);
        case Act::HardSigmoid: return fmaxf(0.f, fminf(1.f, alpha * x + beta));
        case Act::HardSwish: return x * fmaxf(0.f, fminf(1.f, x / 6.f + 0.5f));
        case Act::Gelu: return 0.5f * x * (1.f + erff(x * 0.7071067811865476f));
        case Act::Swish: return x / (1.f + expf(-alpha * x));  // x * Sigmoid(alpha x): SiLU, QuickGELU
        case Act::GeluTanh: return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    }
    return x;
}

// out[i] = act(in[i] + bias[(i / biasInner) % cols]); in may be out. biasInner is 1 for a
// GEMM's columns and an NHWC convolution's channels, the spatial size for an NCHW one's.
struct BiasActParams {
    static constexpr const char* kName = "fsc_bias_activation";  // the kernel, as profilers name it
    const void* in;
    void* out;
    const void* bias;      // null: no bias
    const void* residual;  // null: none; else added element by element before the activation
    ElemType type;
    Act act;
    float alpha, beta;
    int64_t cols, biasInner;
    int64_t count;
    int vector = 1;  // elements per thread step: 1, or 16 bytes' worth (biasActVector)
};

// The elements one thread step takes: 16 bytes of each operand at once (8 halves, 4 floats)
// where every pointer is 16-byte aligned, the count divides, and the group's bias is one
// value or a contiguous run. One element per step ran a float16 bias + GELU at 0.94 TB/s and
// a ResNet residual epilogue at 1.0 TB/s on an H200 (docs/gpu-runs/2026-12-04-*).
inline int biasActVector(const BiasActParams& p) {
    const int width = elemBytes(p.type);
    if (width != 2 && width != 4) return 1;
    const int n = 16 / width;
    auto aligned = [](const void* q) { return q == nullptr || reinterpret_cast<uintptr_t>(q) % 16 == 0; };
    if (p.count % n || !aligned(p.in) || !aligned(p.out) || !aligned(p.residual)) return 1;
    if (p.bias && (p.biasInner == 1 ? p.cols % n != 0 || !aligned(p.bias) : p.biasInner % n != 0)) return 1;
    return n;
}

// The thread steps a launch covers.
FSC_HD int64_t biasActSteps(const BiasActParams& p) { return p.count / p.vector; }

// Index maths in 32 bits below kIndex32Limit elements: a 64-bit division per element took
// a float16 bias + GELU pass over [6304, 3072] to 455 GB/s on an H100.
template <typename Index>
FSC_HD void biasActElementAt(const BiasActParams& p, Index i) {
    float v = loadFloat(p.in, p.type, int64_t(i));
    if (p.bias) {
        const Index column = p.biasInner == 1 ? i % Index(p.cols) : (i / Index(p.biasInner)) % Index(p.cols);
        v += loadFloat(p.bias, p.type, int64_t(column));
    }
    if (p.residual) v += loadFloat(p.residual, p.type, int64_t(i));
    storeFloat(p.out, p.type, int64_t(i), applyActivation(p.act, p.alpha, p.beta, v));
}

// Step `group` of a vector launch: elements [group * vector, + vector).
template <typename Index>
FSC_HD void biasActGroupAt(const BiasActParams& p, Index group) {
    const int n = p.vector;
    const int64_t first = int64_t(group) * n;
    const int64_t byteOffset = first * (16 / n);
    float v[8], other[8];
    unpack16(load16(p.in, byteOffset), p.type, v);
    if (p.bias && p.biasInner == 1) {
        const Index column = Index(first) % Index(p.cols);
        unpack16(load16(p.bias, int64_t(column) * (16 / n)), p.type, other);
        FSC_UNROLL for (int k = 0; k < 8; ++k) v[k] += other[k];
    } else if (p.bias) {
        const float b = loadFloat(p.bias, p.type, int64_t((Index(first) / Index(p.biasInner)) % Index(p.cols)));
        FSC_UNROLL for (int k = 0; k < 8; ++k) v[k] += b;
    }
    if (p.residual) {
        unpack16(load16(p.residual, byteOffset), p.type, other);
        FSC_UNROLL for (int k = 0; k < 8; ++k) v[k] += other[k];
    }
    FSC_UNROLL for (int k = 0; k < 8; ++k) {
        if (k < n) v[k] = applyActivation(p.act, p.alpha, p.beta, v[k]);
    }
    store16(p.out, byteOffset, pack16(v, p.type));
}

// Thread step i: one element, or one 16-byte group.
FSC_HD void biasActElement(const BiasActParams& p, int64_t i) {
    const bool narrow = p.count < kIndex32Limit;
    if (p.vector > 1) {
        if (narrow) biasActGroupAt<uint32_t>(p, uint32_t(i));
        else biasActGroupAt<int64_t>(p, i);
    } else if (narrow) {
        biasActElementAt<uint32_t>(p, uint32_t(i));
    } else {
        biasActElementAt<int64_t>(p, i);
    }
}

}  // namespace fsc::dk
