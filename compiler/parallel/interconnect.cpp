#include "compiler/parallel/interconnect.h"

namespace fsc {

Result<Interconnect> interconnectPreset(const std::string& name) {
    if (name == "nvlink4") return Interconnect{"NVLink 4", 2e-6, 450e9};
    if (name == "pcie5") return Interconnect{"PCIe 5 x16", 5e-6, 64e9};
    if (name == "ndr") return Interconnect{"InfiniBand NDR", 5e-6, 50e9};
    return Status(ErrorCode::InvalidArgument, "unknown interconnect '" + name + "' (expected nvlink4, pcie5 or ndr)");
}

double allReduceSeconds(double bytes, int devices, const Interconnect& link) {
    if (devices < 2) return 0;
    const int steps = 2 * (devices - 1);
    return steps * (link.latencySeconds + bytes / devices / link.bytesPerSecond);
}

double allGatherSeconds(double bytes, int devices, const Interconnect& link) {
    if (devices < 2) return 0;
    return (devices - 1) * (link.latencySeconds + bytes / devices / link.bytesPerSecond);
}

double sendSeconds(double bytes, const Interconnect& link) {
    return link.latencySeconds + bytes / link.bytesPerSecond;
}

}  // namespace fsc
