#pragma once
#include <string>

namespace fsc {

// The oneDNN library loaded at run time, e.g. "2.6.3" (for --version and the About dialog).
std::string oneDnnVersion();

}  // namespace fsc
