#pragma once
// NVTX ranges, so a profiled run (and a compile) reads well in Nsight Systems: per plan node,
// per iteration, per compiler pass. NVTX 3 is header-only and costs a pointer test when no
// tool listens; without the CUDA toolkit these do nothing.
namespace fsc {

void nvtxPush(const char* message);
void nvtxPop();

class NvtxScope {
public:
    explicit NvtxScope(const char* message) { nvtxPush(message); }
    ~NvtxScope() { nvtxPop(); }
    NvtxScope(const NvtxScope&) = delete;
    NvtxScope& operator=(const NvtxScope&) = delete;
};

}  // namespace fsc
