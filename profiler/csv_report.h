#pragma once
// CSV of a trace: one row per kernel (or copy) and one row per plan node with its stats.
// RFC 4180 quoting; times in microseconds.
#include <string>

#include "core/status.h"
#include "profiler/trace.h"

namespace fsc {

std::string kernelCsv(const Trace& trace);
std::string nodeCsv(const Trace& trace);
// Writes DIR/kernels.csv and DIR/nodes.csv (creating DIR).
Status writeCsvReports(const Trace& trace, const std::string& dir);

}  // namespace fsc
