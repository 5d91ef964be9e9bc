#pragma once
// CPU kernels of com.microsoft ops that need a file of their own (registered in contrib_ops.cpp).
#include "compiler/runtime/kernel.h"
#include "compiler/runtime/rt_tensor.h"

namespace fsc::cpu {

// Index inputs (token, segment and position ids, masks): int32 as ONNX Runtime requires them,
// int64 read too.
inline bool isIndexType(const RtTensor& t) { return t.dtype == DType::Int32 || t.dtype == DType::Int64; }
inline int64_t indexAt(const RtTensor& t, int64_t i) {
    return t.dtype == DType::Int64 ? t.as<int64_t>()[i] : int64_t(t.as<int32_t>()[i]);
}

KernelFactory contribAttention();         // contrib_attention.cpp: com.microsoft.Attention
KernelFactory embedLayerNormalization();  // contrib_attention.cpp
KernelFactory multiHeadAttention();       // contrib_attention.cpp
KernelFactory quantizedAttention();       // contrib_attention.cpp: QAttention
KernelFactory quantizedEmbedLayerNormalization();  // contrib_attention.cpp: QEmbedLayerNormalization
KernelFactory matMulNBits();              // matmul_nbits.cpp: 2-, 4- and 8-bit block-quantized weights
KernelFactory rotaryEmbedding();          // contrib_llm.cpp
KernelFactory groupQueryAttention();      // contrib_llm.cpp

}  // namespace fsc::cpu
