#pragma once
// How MatMul, Gemm and FusedMatMul become GEMM calls, and how a GEMM call becomes a
// cuBLASLt description. Plain host code with no CUDA header: tests check the layouts,
// leading dimensions, batch strides, transposes and epilogues without a GPU.
#include <string>
#include <vector>

#include "compiler/backends/cuda/device.h"

namespace fsc {

struct GemmActivation {
    dk::Act kind = dk::Act::None;
    float alpha = 0.f, beta = 0.f;
};

struct GemmAttributes {
    bool transA = false, transB = false;  // Gemm only
    float alpha = 1.f, beta = 1.f;         // Gemm only
    GemmActivation activation;             // FusedMatMul only
};

// One call of a plan; pointers are filled in at launch from element offsets into A, B, Y.
struct PlannedGemm {
    GemmCall call;
    int64_t aOffset = 0, bOffset = 0, cOffset = 0;
};

struct GemmPlan {
    std::vector<int64_t> outputDims;
    int64_t m = 0, n = 0;
    std::vector<PlannedGemm> calls;
    bool prefillFromBias = false;    // Gemm: copy broadcast C into Y first, then beta * Y
    bool biasInEpilogue = false;     // the bias input goes into the call's bias epilogue
    bool separateEpilogue = false;   // an activation cuBLASLt cannot fuse: a launch after the calls
};

// Whether cuBLASLt applies this activation in its epilogue (ReLU and the tanh GELU).
bool ltFusesActivation(dk::Act act);

// MatMul (numpy semantics: 1-D operands, broadcast batch dims) and FusedMatMul (`bias`: [N]).
Result<GemmPlan> planMatMul(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>* bias, const GemmAttributes& attrs);
// Gemm: 2-D A and B with transA/transB, C broadcast to [M, N], alpha and beta.
Result<GemmPlan> planGemm(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                          const std::vector<int64_t>* c, const GemmAttributes& attrs);

// A row-major GEMM as cuBLASLt's column-major one: C^T = op(B)^T op(A)^T, so cuBLASLt's A is
// our B and its B our A, each matrix read as its own transpose without moving a byte.
struct LtMatrixLayout {
    uint64_t rows = 0, cols = 0;  // column-major, as stored
    int64_t ld = 0;
    int64_t batchStride = 0;      // elements
};
enum class LtEpilogue { Default, Relu, Bias, ReluBias, Gelu, GeluBias };
struct LtMatmulPlan {
    bool transA = false, transB = false;  // cuBLASLt's opA / opB
    LtMatrixLayout a, b, c;
    int64_t m = 0, n = 0, k = 0;          // cuBLASLt's (m = our n, n = our m)
    int32_t batch = 1;
    LtEpilogue epilogue = LtEpilogue::Default;
    std::string key;  // the heuristics cache key: everything the algorithm choice depends on
};
Result<LtMatmulPlan> describeForLt(const GemmCall& call);
const char* ltEpilogueName(LtEpilogue e);

}  // namespace fsc
