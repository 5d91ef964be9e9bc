#pragma once
// ai.fusescope.AveragePool: ONNX's AveragePool (its attributes) on X [N, H, W, C], what the
// channels-last pass makes of an AveragePool inside an NHWC region (DenseNet's transition
// layers, Inception's pool branches): without it each one left the region through a pair of
// Transposes and ran NCHW.
#include "compiler/runtime/kernel.h"

namespace fsc::cpu {

KernelFactory channelsLastAveragePool();
// com.microsoft.QLinearAveragePool (NCHW, or NHWC with `channels_last`), on 8-bit X.
KernelFactory qlinearAveragePool();

}  // namespace fsc::cpu
