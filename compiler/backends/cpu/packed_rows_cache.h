#pragma once
// The int8 GEMM's packed copy of A, kept between calls where A is constant: a convolution's
// weights, packed again on every call before (ResNet-50's 7x7 layers: 4.7 MB written per call
// by the widened kernel; 4% of INT8 ResNet-50 with oneDNN held to AVX2). One cache per node,
// an entry per weight matrix (one per group) and packing; shared by the threads that run the
// node.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace fsc::cpu {

struct PackedRows {
    std::unique_ptr<int32_t[]> words;  // null: A does not fit that packing
    std::vector<int32_t> rowSums;      // the quads' packings: each row's sum
};

class PackedRowsCache {
public:
    enum class Packing { WidenedPairs, NarrowQuads, VnniQuads };
    struct Key {
        const int8_t* a = nullptr;
        int64_t m = 0, k = 0, lda = 0;
        bool transA = false;
        int16_t zero = 0;  // the operand's zero point
        int8_t flip = 0;   // 0x80 where A's bytes are uint8 (Operands::aFlip)
        Packing packing = Packing::WidenedPairs;
        bool operator==(const Key&) const = default;
    };
    using Rows = std::shared_ptr<const PackedRows>;

    // The rows kept for `key`, or those `pack()` makes, kept from then on.
    template <typename Pack>
    Rows rowsFor(const Key& key, Pack&& pack) {
        std::lock_guard lock(m_mutex);
        for (const auto& [k, rows] : m_entries)
            if (k == key) return rows;
        Rows made = pack();
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
