#pragma once
// CPU kernels of com.microsoft ops that need a file of their own (registered in contrib_ops.cpp).
#include "compiler/runtime/kernel.h"

namespace fsc::cpu {

KernelFactory contribAttention();         // contrib_attention.cpp: com.microsoft.Attention
KernelFactory embedLayerNormalization();  // contrib_attention.cpp
KernelFactory multiHeadAttention();       // contrib_attention.cpp
KernelFactory matMulNBits();              // matmul_nbits.cpp: 2-, 4- and 8-bit block-quantized weights
KernelFactory rotaryEmbedding();          // contrib_llm.cpp
KernelFactory groupQueryAttention();      // contrib_llm.cpp

}  // namespace fsc::cpu
