#pragma once
// The alpha-beta model of a link between devices: a message of b bytes takes
// alpha + b / bandwidth. Presets are nominal per-direction figures, editable; every time
// computed from them is a simulation and is labelled so.
#include <string>

#include "core/status.h"

namespace fsc {

struct Interconnect {
    std::string name;
    double latencySeconds = 0;    // alpha
    double bytesPerSecond = 1;    // beta^-1
};

// nvlink4 (H100 NVLink 4: 450 GB/s per direction, 2 us), pcie5 (x16: 64 GB/s, 5 us),
// ndr (InfiniBand NDR 400 Gb/s: 50 GB/s, 5 us).
Result<Interconnect> interconnectPreset(const std::string& name);

// Ring all-reduce: 2(N-1) steps, each moving bytes/N.
double allReduceSeconds(double bytes, int devices, const Interconnect& link);
// Ring all-gather of a `bytes` result: N-1 steps, each moving bytes/N.
double allGatherSeconds(double bytes, int devices, const Interconnect& link);
// One point-to-point message.
double sendSeconds(double bytes, const Interconnect& link);

}  // namespace fsc
