#pragma once
// What the oneDNN convolution wrappers (float and int8) share: the CPU engine, the window
// in oneDNN's terms, tests of the kernel a primitive chose, growable scratch for the blocked
// copies of activations, weights kept in a primitive's layout, and the reorder of a source
// into scratch.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string_view>

#include "compiler/backends/cpu/conv_geometry.h"

namespace fsc::cpu {

inline dnnl::engine& cpuEngine() {
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

// A convolution's window in oneDNN's terms: it counts dilation as the gaps between taps, and
// its right padding reaches only as far as the last window does.
struct OneDnnWindow {
    dnnl::memory::dims strides, dilation, padL, padR;
};
inline OneDnnWindow oneDnnWindow(const ConvGeometry& g) {
    const size_t nd = g.in.size();
    OneDnnWindow w{{g.strides.begin(), g.strides.end()}, dnnl::memory::dims(nd), dnnl::memory::dims(nd),
                   dnnl::memory::dims(nd)};
    for (size_t d = 0; d < nd; ++d) {
        const int64_t span = (g.kernel[d] - 1) * g.dilations[d] + 1;
        w.dilation[d] = g.dilations[d] - 1;
        w.padL[d] = g.padBegin[d];
        w.padR[d] = std::max<int64_t>(0, (g.out[d] - 1) * g.strides[d] + span - g.in[d] - g.padBegin[d]);
    }
    return w;
}

// Whether the kernel a primitive descriptor chose has `part` in its name (oneDNN names them
// by algorithm and ISA: "jit_wino_4x3:avx512_core", "brgconv_1x1:avx512_core").
inline bool kernelNamed(const dnnl::primitive_desc_base& pd, const char* part) {
    return std::string_view(pd.impl_info_str()).find(part) != std::string_view::npos;
}

// A JIT kernel, not oneDNN's reference loops or its im2col + GEMM.
inline bool isJit(const dnnl::primitive_desc_base& pd) { return !kernelNamed(pd, "ref") && !kernelNamed(pd, "gemm"); }

// Growable 64-byte-aligned scratch; callers keep one per thread, shared by every
// convolution (they run one after another).
struct Scratch {
    void* data = nullptr;
    size_t bytes = 0;
    Scratch() = default;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch() { std::free(data); }
    void* get(size_t n) {
        if (n > bytes) {
            std::free(data);
            bytes = (n + 63) / 64 * 64;
            data = std::aligned_alloc(64, bytes);
            if (!data) bytes = 0;
        }
        return data;
    }
};

// Weights in a primitive's layout: reordered from `data` once when it is a constant (kept
// while the constant stays where it was), on every call otherwise.
struct HeldWeights {
    dnnl::memory::desc user;
    dnnl::memory held;
    const void* from = nullptr;
    void refresh(dnnl::stream& stream, const void* data, bool constant) {
        if (constant && from == data) return;
        dnnl::memory given(user, held.get_engine(), const_cast<void*>(data));
        dnnl::reorder(given, held).execute(stream, given, held);
        from = constant ? data : nullptr;
    }
};

// `blocked` pointed at the thread's scratch; false when the scratch cannot be had.
inline bool pointAtScratch(Scratch& scratch, dnnl::memory& blocked) {
    void* data = scratch.get(blocked.get_desc().get_size());
    if (!data) return false;
    blocked.set_data_handle(data);
    return true;
}

// `user` reordered into `blocked`, which is pointed at the thread's scratch first; false when
// the scratch cannot be had.
inline bool reorderIntoScratch(dnnl::stream& stream, Scratch& scratch, const dnnl::reorder& reorder,
                               dnnl::memory& user, dnnl::memory& blocked) {
    if (!pointAtScratch(scratch, blocked)) return false;
    reorder.execute(stream, user, blocked);
    return true;
}

}  // namespace fsc::cpu
