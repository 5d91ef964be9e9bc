// Built without the CUDA toolkit: device profiling says why it cannot start.
#include "profiler/cupti/cupti_source.h"

namespace fsc {
namespace {

class UnavailableSource : public ActivitySource {
public:
    Status start() override {
        return Status(ErrorCode::Unsupported, "this Fusescope was built without the CUDA toolkit, so it has no CUPTI tracing");
    }
    void pushExternalId(uint64_t) override {}
    void popExternalId() override {}
    Status drain(std::vector<DeviceRecord>&, int64_t&) override { return start(); }
    void stop() override {}
};

}  // namespace

std::unique_ptr<ActivitySource> makeCuptiActivitySource() {
    return std::make_unique<UnavailableSource>();
}

}  // namespace fsc
