#pragma once
// CUPTI's activity API as an ActivitySource. libcupti is loaded with dlopen (the toolkit's
// libcupti.so.13, or FUSESCOPE_CUPTI), so nothing needs it to start and a machine without
// it gets a clear error from start(). Records are decoded on CUPTI's thread as buffers
// complete and handed over through a RecordQueue; CUPTI's dropped-record counts are added.
// CUPTI's buffer callbacks are process-wide: one source records at a time.
#include <memory>

#include "profiler/activity_source.h"

namespace fsc {

std::unique_ptr<ActivitySource> makeCuptiActivitySource();

}  // namespace fsc
