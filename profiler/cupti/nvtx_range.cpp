#include "profiler/cupti/nvtx_range.h"

#if FUSESCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace fsc {

#if FUSESCOPE_HAVE_NVTX
void nvtxPush(const char* message) {
    nvtxRangePushA(message);
}
void nvtxPop() {
    nvtxRangePop();
}
#else
void nvtxPush(const char*) {}
void nvtxPop() {}
#endif

}  // namespace fsc
