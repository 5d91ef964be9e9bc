#pragma once
// Whole-string integer parsing that never throws ("12" yes; "12x", "", "x" and values out of
// range no), for everything that reads numbers from users' input: command-line values, .npy
// headers, symbol names, configuration files. std::stoll throws on all of those.
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fsc {

inline std::optional<int64_t> parseInt64(std::string_view s) {
    int64_t value = 0;
    const char* end = s.data() + s.size();
    const auto [stop, error] = std::from_chars(s.data(), end, value);
    if (error != std::errc() || stop != end || s.empty()) return std::nullopt;
    return value;
}

inline bool parseInt(std::string_view s, int64_t& out) {
    const auto value = parseInt64(s);
    if (value) out = *value;
    return value.has_value();
}

}  // namespace fsc
