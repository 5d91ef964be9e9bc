#pragma once
// Whether oneDNN's effective instruction set (what the CPU has, held down by
// ONEDNN_MAX_CPU_ISA) includes `isa`. The values are bit sets, not an order: AVX2-VNNI's
// (0x407) is numerically above AMX's (0x3e7), so `>=` would take an Alder Lake laptop for
// an AVX-512 machine.
#include <oneapi/dnnl/dnnl.h>

namespace fsc::cpu {

inline bool oneDnnIsaIncludes(dnnl_cpu_isa_t isa) {
    const unsigned wanted = unsigned(isa);
    return (unsigned(dnnl_get_effective_cpu_isa()) & wanted) == wanted;
}

}  // namespace fsc::cpu
