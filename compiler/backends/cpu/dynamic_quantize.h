#pragma once
// DynamicQuantizeLinear's arithmetic, shared by its kernel and DynamicQuantizeMatMul's: the
// range of x widened to hold 0, scale = (max - min) / 255, the zero point round(-min / scale)
// clamped to [0, 255], and y = saturate(round(x / scale) + zero point), half to even.
// Defined in quant.cpp.
#include <cstdint>

#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {

struct DynamicQuantization {
    float scale = 0;
    uint8_t zero = 0;
};

// x [n] into y [n] on the pool's threads.
DynamicQuantization dynamicQuantizeUint8(ThreadPool& pool, const float* x, int64_t n, uint8_t* y);

}  // namespace fsc::cpu
