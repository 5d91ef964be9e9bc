#pragma once
// The trace as Chrome Trace Event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing
// open: one track per stream for kernels, a track of plan-node ranges and one of iterations,
// counter tracks for planned and measured memory, and flow arrows from each plan node's
// range to the kernels it launched. Every event's args carry the node id, name, op and the
// original ONNX nodes.
#include <string>

#include "core/status.h"
#include "profiler/trace.h"

namespace fsc {

std::string chromeTraceJson(const Trace& trace);
Status writeChromeTrace(const Trace& trace, const std::string& path);

}  // namespace fsc
