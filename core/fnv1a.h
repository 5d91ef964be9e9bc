#pragma once
// 64-bit FNV-1a: cheap, stable content hashes (weight fingerprints, kernel cache keys).
// `seed` continues an earlier hash, so several pieces hash as one.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fsc {

constexpr uint64_t kFnv1aOffset = 1469598103934665603ull;

inline uint64_t fnv1a(const void* data, size_t size, uint64_t seed = kFnv1aOffset) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
        seed ^= bytes[i];
        seed *= 1099511628211ull;
    }
    return seed;
}

inline uint64_t fnv1a(std::string_view text, uint64_t seed = kFnv1aOffset) {
    return fnv1a(text.data(), text.size(), seed);
}

}  // namespace fsc
