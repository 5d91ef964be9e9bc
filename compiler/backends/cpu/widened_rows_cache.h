#pragma once
// The widened int8 GEMM's copy of A (rows as int16 pairs, zero point taken off), kept between
// calls where A is constant: a convolution's weights, widened again on every call before
// (ResNet-50's 7x7 layers: 4.7 MB written per call; 4% of INT8 ResNet-50 with oneDNN held to
// AVX2). One cache per node, an entry per weight matrix (one per group); shared by the
// threads that run the node.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace fsc::cpu {

class WidenedRowsCache {
public:
    struct Key {
        const int8_t* a = nullptr;
        int64_t m = 0, k = 0, lda = 0;
        bool transA = false;
        int16_t zero = 0;  // the operand's zero point
        bool operator==(const Key&) const = default;
    };
    using Rows = std::shared_ptr<const int32_t[]>;

    // The rows kept for `key`, or those `widen()` makes, kept from then on.
    template <typename Widen>
    Rows rowsFor(const Key& key, Widen&& widen) {
        std::lock_guard lock(m_mutex);
        for (const auto& [k, rows] : m_entries)
            if (k == key) return rows;
        Rows made = widen();
        m_entries.emplace_back(key, made);
        return made;
    }
    size_t entries() const {
        std::lock_guard lock(m_mutex);
        return m_entries.size();
    }

private:
    mutable std::mutex m_mutex;
    std::vector<std::pair<Key, Rows>> m_entries;
};

}  // namespace fsc::cpu
