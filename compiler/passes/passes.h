#pragma once
// Factories of the built-in passes, one per file in this folder.
#include <memory>
#include <set>
#include <string>

#include "compiler/pass.h"
#include "compiler/quantization/int8_options.h"

namespace fsc::passes {

// Clean-up (O1)
std::unique_ptr<Pass> eliminateNoOps();
std::unique_ptr<Pass> eliminateDeadCode();
std::unique_ptr<Pass> eliminateCommonSubexpressions();
// keepQdqWeights: leaves the QDQ form's weight DequantizeLinear nodes for a qdq-folding after it.
std::unique_ptr<Pass> foldConstants(bool keepQdqWeights = false);
std::unique_ptr<Pass> foldShapeComputation();
std::unique_ptr<Pass> cancelInversePairs();

// Fusions (O2)
std::unique_ptr<Pass> foldConvBatchNorm();
std::unique_ptr<Pass> fuseMatMulAdd();
// ONNX Runtime's com.microsoft FusedMatMul, SkipLayerNormalization and Gelu family as standard ops.
// keepAttention, when not empty: com.microsoft.Attention stays as it is (run by its kernel),
// each one rejected with this reason.
std::unique_ptr<Pass> lowerContribOps(std::string keepAttention = {});
std::unique_ptr<Pass> fuseGelu();
std::unique_ptr<Pass> fuseLayerNorm();
std::unique_ptr<Pass> fuseRmsNorm();
std::unique_ptr<Pass> fuseSkipLayerNorm();
std::unique_ptr<Pass> fuseActivation();
std::unique_ptr<Pass> fuseConvResidual();
std::unique_ptr<Pass> fuseSePool();
std::unique_ptr<Pass> fuseAttention();
std::unique_ptr<Pass> fuseElementwise();
std::unique_ptr<Pass> fusePad();
std::unique_ptr<Pass> splitPackedProjection();
std::unique_ptr<Pass> rowsGemmToMatMul();
std::unique_ptr<Pass> reshapeBeforeTranspose();
std::unique_ptr<Pass> scatterRows();
std::unique_ptr<Pass> einsumToMatmul();
// Layout (O2, after the fusions): convolution chains in NHWC; of the CPU's types (float32, and
// uint8 and int8 for quantized ones), or of `types`.
std::unique_ptr<Pass> channelsLast();
std::unique_ptr<Pass> channelsLast(std::set<DType> types);

// Precision: float32 work stored in float16 / bfloat16, ops in `keepInFloat32` (by op
// type; default: norms, softmax, reductions) left in float32.
const std::set<std::string>& defaultKeepInFloat32();
std::unique_ptr<Pass> convertToFloat16();
std::unique_ptr<Pass> convertToBFloat16();
std::unique_ptr<Pass> convertToFloat16(std::set<std::string> keepInFloat32);
std::unique_ptr<Pass> convertToBFloat16(std::set<std::string> keepInFloat32);

// A float16 (or bfloat16) model's work in float32 (the CPU has no such arithmetic); `declineAll` as
// foldQdq's (a backend that computes in float16 itself).
std::unique_ptr<Pass> widenFloat16(std::string declineAll = {});

// INT8 post-training quantization: QDQ form from calibrated ranges (no options: 8
// generated samples, min-max, per-tensor weights, asymmetric activations), then folding
// into integer ops.
std::unique_ptr<Pass> quantizeInt8();
std::unique_ptr<Pass> quantizeInt8(Int8Options options);
// declineAll: every QDQ op it would fold is declined with this reason (a target without
// integer convolutions).
std::unique_ptr<Pass> foldQdq(std::string declineAll = {});
// MatMulInteger, Cast, the scales' Mul and a bias Add as com.microsoft.MatMulIntegerToFloat;
// `declineAll` as foldQdq's (a backend without the fused kernel).
std::unique_ptr<Pass> fuseIntegerMatMul(std::string declineAll = {});

// Parallel partitioning: Megatron-style tensor parallelism over `devices` (AllReduce per
// split pair of linear layers, in the ai.fusescope domain).
std::unique_ptr<Pass> tensorParallel(int devices);
// Pipeline parallelism: `stages` stages of equal estimated time, Send/Recv across cuts.
std::unique_ptr<Pass> pipelineParallel(int stages);

// Memory (O3)
std::unique_ptr<Pass> scheduleForMemory();

}  // namespace fsc::passes
