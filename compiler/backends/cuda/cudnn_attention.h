#pragma once
// Fused attention (fused_attention_call.h) on the GPU as one cuDNN operation graph, the
// pattern cuDNN's flash-attention engines take (its frontend's SDPA node writes the same):
//   S = Q K^T (float32) -> * scale -> + bias -> softmax as max, subtract, exp, sum, divide
//   -> P in the operands' type -> O = P V.
// One plan per shape, planned on the shape's first call (never while a CUDA Graph is being
// captured): cuDNN's heuristics propose engines, each candidate's output is checked against
// the warp-per-row attention kernel's on the same inputs, and the fastest that agrees is kept.
// A shape no engine takes is remembered and refused as Unsupported, so the backend runs it as
// GEMMs. Part of the CUDA device plugin only.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compiler/backends/cuda/cudnn_convolution.h"

namespace fsc {

class CudnnAttention {
public:
    // Uses `dnn`'s library, handle and stream; `dnn` outlives it.
    explicit CudnnAttention(const CudnnConvolution& dnn);
    ~CudnnAttention();
    Status run(const FusedAttentionCall& call, const CudnnConvolution::Workspace& workspace,
               const CudnnConvolution::Launcher& launch, const CudnnConvolution::Memory& memory, bool capturing);

    class Plan;

private:
    const CudnnConvolution& m_dnn;
    std::map<std::string, std::unique_ptr<Plan>> m_plans;  // shape key -> plan, or null: refused
    std::mutex m_mutex;
};

}  // namespace fsc
