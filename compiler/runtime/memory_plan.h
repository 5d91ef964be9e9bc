#pragma once
// Static memory planning: liveness of every intermediate over the schedule, then one
// arena with an offset per intermediate (greedy by size, as TFLite's arena planner).
// Reported next to the naive sum of all intermediates and the lower bound, the largest
// total of simultaneously live bytes.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct BufferLifetime {
    ValueId value;
    size_t bytes = 0;
    size_t firstStep = 0;  // index in the schedule of the producing node
    size_t lastStep = 0;   // index of the last node that reads it (inclusive)
};

struct MemoryPlan {
    struct Assignment {
        BufferLifetime buffer;
        size_t offset = 0;
    };
    std::vector<Assignment> assignments;  // one per intermediate, in schedule order
    size_t arenaBytes = 0;
    size_t naiveBytes = 0;       // every intermediate in its own allocation
    size_t lowerBoundBytes = 0;  // most bytes live at one step; no plan can do better
};

// Symbol values for dims such as "batch", used to size intermediates.
using DimBindings = std::map<std::string, int64_t>;

// Intermediates are node outputs that are not graph outputs, in order(). A value read
// inside a subgraph lives until the node that owns the subgraph. Sizes are rounded up to
// `alignment`; a size that cannot be decided is an error naming the value.
// `schedule` replaces graph.order() when given (to weigh a different order).
Result<std::vector<BufferLifetime>> computeLifetimes(const Graph& graph,
                                                     const DimBindings& bindings = {},
                                                     size_t alignment = 64,
                                                     const std::vector<NodeId>* schedule = nullptr);

MemoryPlan planMemory(std::vector<BufferLifetime> lifetimes);

// The bytes of one value, rounded up to `alignment`; an error names a dim with no value.
Result<size_t> valueBytes(const Value& value, const DimBindings& bindings, size_t alignment = 64);

// A symbolic dim's size under `bindings`: its symbol's value, or for a named product
// (batch*197) the symbol's value times the factor; nothing when the symbol is unbound.
std::optional<int64_t> boundSize(const Dim& dim, const DimBindings& bindings);

// Every symbol in the graph's shapes bound to `size` (the compiler plans for batch 1 when
// no input sizes are given).
DimBindings bindAllSymbols(const Graph& graph, int64_t size);

}  // namespace fsc
