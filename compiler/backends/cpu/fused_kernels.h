#pragma once
// CPU kernels of ai.fusescope ops that need more than a few lines (one file each).
#include "compiler/runtime/kernel.h"

namespace fsc::cpu {

KernelFactory attention();         // attention.cpp
KernelFactory fusedElementwise();  // fused_elementwise.cpp
KernelFactory fusedConv();         // conv.cpp: the activation per depthwise plane, or after the whole conv
KernelFactory channelsLastMaxPool();  // conv.cpp: MaxPool on NHWC (`channels_last`)

}  // namespace fsc::cpu
