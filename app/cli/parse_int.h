#pragma once
// Whole-string integer parsing for command-line values ("12" yes, "12x" and "" no).
#include <cstdint>
#include <string>

namespace fsc {

inline bool parseInt(const std::string& s, int64_t& out) {
    try {
        size_t used = 0;
        out = std::stoll(s, &used);
        return used == s.size();
    } catch (...) {
        return false;
    }
}

}  // namespace fsc
