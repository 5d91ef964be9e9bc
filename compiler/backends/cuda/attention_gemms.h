#pragma once
// ai.fusescope.Attention on the device the way cuBLAS does it best: S = scale * Q K^T as
// batched GEMMs into float32 scratch, the mask and the softmax row by row into P (the
// operands' type), then Y = P V as batched GEMMs. The warp-per-row kernel
// (kernels/attention_kernel.h) re-reads all of K and V for every query row: on an H100 it was
// 70% of vit_b_16's GPU time at batch 32. This route needs each operand's matrix to have a
// unit row or column stride; other layouts stay on the warp kernel. The plan is plain host
// code, so tests check its calls without a GPU.
#include <cstddef>
#include <optional>
#include <vector>

#include "compiler/backends/cuda/device.h"
#include "compiler/backends/cuda/gemm_lowering.h"
#include "compiler/runtime/attention_layout.h"

namespace fsc {

// A rows x cols matrix read through these strides, as a row-major GEMM operand: a unit
// column stride is the matrix as stored (ld = the row stride), a unit row stride its
// transpose (ld = the column stride). nullopt when neither stride is a unit.
struct GemmOperand {
    bool trans = false;
    int64_t ld = 0;
};
std::optional<GemmOperand> gemmOperand(int64_t rows, int64_t cols, int64_t rowStride,
                                       int64_t colStride);

// Batch elements whose scores share the scratch at once: flat batch indices
// [firstBatch, firstBatch + batches). Offsets are in elements: the score calls read Q (a) and
// K^T (b) and write S (c, from the scratch's start); the output calls read P (a, likewise)
// and V (b) and write Y (c).
struct AttentionGemmChunk {
    int64_t firstBatch = 0, batches = 0;
    std::vector<PlannedGemm> scores, outputs;
};

struct AttentionGemmPlan {
    std::vector<AttentionGemmChunk> chunks;
    size_t scoresBytes = 0;  // float32 S of the largest chunk, rows softmax.ld apart
    size_t probsBytes = 0;   // P in the operands' type after S; 0 when P overwrites S (float32)
    dk::AttentionSoftmaxParams softmax{};  // pointers, firstRow and rows are set per chunk
};

// Unsupported when an operand's matrix has no unit stride, or when one slice of the
// outermost batch dim needs more than `maxScratchBytes` of scores.
Result<AttentionGemmPlan> planAttentionGemms(const AttentionLayout& layout, dk::ElemType type,
                                             float scale, size_t maxScratchBytes);

struct AttentionOperands {
    const void *q = nullptr, *kt = nullptr, *v = nullptr, *mask = nullptr;
    void* out = nullptr;
    size_t maskBytes = 0;
};

// Runs the plan's calls in order, with the device's kernel workspace as the scratch.
// tf32: float32 GEMMs from TF32-rounded inputs (GemmCall::tf32).
Status runAttentionGemms(CudaDevice& device, const AttentionGemmPlan& plan, const AttentionOperands& x, bool tf32 = false);

}  // namespace fsc
