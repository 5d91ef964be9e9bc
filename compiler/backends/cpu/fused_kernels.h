#pragma once
// CPU kernels of ai.fusescope ops that need more than a few lines (one file each).
#include "compiler/runtime/attention_layout.h"
#include "compiler/runtime/kernel.h"

namespace fsc::cpu {

KernelFactory attention();         // attention.cpp
// attention.cpp's loop, for com.microsoft.Attention (contrib_attention.cpp) too.
void attentionFloat(ThreadPool& pool, const float* q, const float* kt, const float* v, const float* mask, float* y,
                    const AttentionLayout& layout, float scale);
KernelFactory fusedElementwise();  // fused_elementwise.cpp
KernelFactory fusedConv();         // conv.cpp: the activation per depthwise plane, or after the whole conv
KernelFactory channelsLastMaxPool();  // conv.cpp: MaxPool on NHWC (`channels_last`)

}  // namespace fsc::cpu
