#pragma once
// Attention as one fused call with the semantics of cuDNN's scaled dot-product attention
// (the flash-attention class of kernel): for every batch b and head h,
//   O[b, h] = softmax(scale * Q[b, h] K[b, h]^T + bias[b, h]) V[b, h]
// with Q [sq, d], K [skv, d], V [skv, dv], O [sq, dv] and the additive bias [sq, skv], each
// read through four strides (batch, head, row, column) in elements, so the heads split out of a
// QKV projection are strided views and no transpose runs first. Float16 and bfloat16 only, with
// float32 scores; the probabilities are rounded to the operands' type before they meet V, as
// cuDNN's second product takes them. Plain host code: the simulated device runs a CPU reference
// of it, the GPU device an operation graph (cudnn_attention_graph.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/cuda/kernels/hd.h"
#include "compiler/runtime/attention_layout.h"
#include "core/status.h"

namespace fsc {

struct DeviceExtent;
struct DeviceLaunch;

struct FusedAttentionCall {
    dk::ElemType type = dk::ElemType::F16;
    int64_t batch = 1, heads = 1, sq = 0, skv = 0, d = 0, dv = 0;
    float scale = 1.f;
    // Strides in elements: batch, head, row, column. A bias stride of 0 broadcasts that dim.
    const void* q = nullptr;
    int64_t qStrides[4] = {};
    const void* k = nullptr;
    int64_t kStrides[4] = {};
    const void* v = nullptr;
    int64_t vStrides[4] = {};
    void* o = nullptr;
    int64_t oStrides[4] = {};
    const void* bias = nullptr;  // the operands' type, or null
    int64_t biasStrides[4] = {};
};

// cuDNN's support rules for the call (its frontend's SDPA support surface, float16/bfloat16
// forward): head dims multiples of 8 and at most 128; Q, K, V and O with contiguous columns and
// their other strides 16-byte aligned; every address 16-byte aligned. Unsupported, naming the
// rule, otherwise.
Status checkFusedAttentionCall(const FusedAttentionCall& call);
// The spans the call reads and writes, for bounds checks.
std::vector<DeviceExtent> fusedAttentionExtents(const FusedAttentionCall& call);

// The operands of ai.fusescope.Attention on the device, read through `layout`.
struct AttentionPointers {
    const void *q = nullptr, *kt = nullptr, *v = nullptr, *mask = nullptr;
    void* out = nullptr;
};
// The layout's batch dims as (batch, heads): dims of extent 1 dropped, neighbours merged where
// every operand steps through them as through one dim. Nullopt, with `why`, where more than two
// remain or the type is not float16/bfloat16; checkFusedAttentionCall judges the rest.
std::optional<FusedAttentionCall> fusedAttentionCallOf(const AttentionLayout& layout, dk::ElemType type,
                                                       float scale, const AttentionPointers& x, std::string* why);

// The same attention as one launch of the warp-per-row kernel (kernels/attention_kernel.h)
// writing `out`, laid out as call.o: what the GPU checks each cuDNN engine's output against.
DeviceLaunch attentionRowsLaunch(const FusedAttentionCall& call, void* out);

// The CPU reference the simulated device runs: float32 scores, probabilities rounded to the
// operands' type, float32 sums.
void referenceFusedAttention(const FusedAttentionCall& call);

}  // namespace fsc
