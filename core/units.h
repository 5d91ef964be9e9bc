#pragma once
// How sizes read to people, in one place so the CLI, the GUI, the reports and the
// walkthrough never print the same quantity two ways.
#include <cstdint>
#include <string>

namespace fsc {

// Binary units with three significant digits: "512 B", "38.8 KiB", "1.44 MiB", "2.24 GiB".
// A small size stays in a small unit instead of reading "0.00 MiB".
std::string bytesText(double bytes);

// A transfer rate in decimal units, as bandwidths are quoted, three significant digits:
// "850 MB/s", "40.0 GB/s", "3.35 TB/s".
std::string bandwidthText(double bytesPerSecond);

// A duration given in milliseconds, three significant digits in the unit that fits:
// "512 ns", "94.2 µs", "52.3 ms", and whole milliseconds with separators from a second up
// ("1,160 ms"), so that figures of one table compare at a glance.
std::string durationText(double ms);

// Digits in groups of three: 1505280 -> "1,505,280".
std::string groupedDigits(uint64_t n);

}  // namespace fsc
