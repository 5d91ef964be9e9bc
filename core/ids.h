#pragma once
// Strong ids into a graph's node and value arenas: a NodeId cannot be passed where a
// ValueId is expected, and an id stays valid while the arena grows.
#include <cstdint>
#include <functional>
#include <limits>

namespace fsc {

template <typename Tag>
struct Id {
    static constexpr uint32_t kInvalid = std::numeric_limits<uint32_t>::max();
    uint32_t index = kInvalid;

    constexpr Id() = default;
    constexpr explicit Id(uint32_t i) : index(i) {}
    constexpr bool valid() const { return index != kInvalid; }
    constexpr bool operator==(const Id&) const = default;
    constexpr auto operator<=>(const Id&) const = default;
};

struct NodeTag {};
struct ValueTag {};
using NodeId = Id<NodeTag>;
using ValueId = Id<ValueTag>;

}  // namespace fsc

template <typename Tag>
struct std::hash<fsc::Id<Tag>> {
    size_t operator()(const fsc::Id<Tag>& id) const noexcept { return id.index; }
};
