#include "compiler/runtime/memory_plan.h"

#include "core/shape_values.h"

#include <algorithm>

namespace fsc {
namespace {

Result<size_t> bytesOf(const Value& v, const DimBindings& bindings, size_t alignment) {  // valueBytes
    const ValueType& t = v.type;
    if (t.kind != ValueType::Kind::Tensor || !t.shape.rankKnown() ||
        dtypeBits(t.elemType) == 0)
        return Status(ErrorCode::Unsupported,
                      "value '" + v.name + "' (" + t.toString() + ") has no static tensor size");
    std::vector<int64_t> sizes;
    for (const Dim& d : t.shape.dims()) {
        if (d.isKnown()) {
            sizes.push_back(d.size());
            continue;
        }
        const auto bound = boundSize(d, bindings);
        if (!bound)
            return Status(ErrorCode::InvalidArgument,
                          "value '" + v.name + "' has dim '" + d.toString() +
                              "' with no value bound (" + t.toString() + ")");
        sizes.push_back(*bound);
    }
    auto count = checkedProduct(sizes);
    if (!count) return Status(ErrorCode::InvalidArgument, "value '" + v.name + "' is too large");
    const size_t bytes = packedByteSize(t.elemType, *count);
    return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace

std::optional<int64_t> boundSize(const Dim& dim, const DimBindings& bindings) {
    if (dim.isKnown()) return dim.size();
    if (!dim.isSymbolic()) return std::nullopt;
    if (auto it = bindings.find(dim.symbol()); it != bindings.end()) return it->second;
    const auto product = splitProductSymbol(dim.symbol());  // batch*197: the symbol's value times 197
    if (!product) return std::nullopt;
    const auto it = bindings.find(product->first);
    if (it == bindings.end()) return std::nullopt;
    const auto size = checkedProduct({it->second, product->second});
    return size ? std::optional<int64_t>(int64_t(*size)) : std::nullopt;
}

Result<std::vector<BufferLifetime>> computeLifetimes(const Graph& graph,
                                                     const DimBindings& bindings,
                                                     size_t alignment,
                                                     const std::vector<NodeId>* schedule) {
    std::vector<bool> isOutput(graph.valueCount(), false);
    for (ValueId id : graph.outputs) isOutput[id.index] = true;
    std::vector<long> lastUse(graph.valueCount(), -1);
    const auto& order = schedule ? *schedule : graph.order();
    for (size_t step = 0; step < order.size(); ++step) {
        const Node& node = graph.node(order[step]);
        for (ValueId in : node.inputs)
            if (in.valid()) lastUse[in.index] = long(step);
        for (const std::string& name : node.capturedNames())
            if (ValueId id = graph.findValue(name); id.valid()) lastUse[id.index] = long(step);
    }
    std::vector<BufferLifetime> lifetimes;
    for (size_t step = 0; step < order.size(); ++step) {
        for (ValueId out : graph.node(order[step]).outputs) {
            if (!out.valid() || isOutput[out.index]) continue;
            auto bytes = bytesOf(graph.value(out), bindings, alignment);
            if (!bytes) return bytes.status();
            // An output nobody reads still needs room while its node runs.
            const size_t last = std::max<long>(lastUse[out.index], long(step));
            lifetimes.push_back({out, *bytes, step, last});
        }
    }
    return lifetimes;
}

MemoryPlan planMemory(std::vector<BufferLifetime> lifetimes) {
    MemoryPlan plan;
    size_t steps = 0;
    for (const auto& b : lifetimes) {
        plan.naiveBytes += b.bytes;
        steps = std::max(steps, b.lastStep + 1);
    }
    // Lower bound: the most bytes live at any one step.
    std::vector<long long> delta(steps + 1, 0);
    for (const auto& b : lifetimes) {
        delta[b.firstStep] += static_cast<long long>(b.bytes);
        delta[b.lastStep + 1] -= static_cast<long long>(b.bytes);
    }
    long long live = 0;
    for (size_t s = 0; s < steps; ++s) {
        live += delta[s];
        plan.lowerBoundBytes = std::max(plan.lowerBoundBytes, static_cast<size_t>(live));
    }

    // Greedy by size: the biggest buffers choose first, each at the lowest offset that no
    // already placed buffer alive at the same time occupies.
    std::vector<size_t> bySize(lifetimes.size());
    for (size_t i = 0; i < bySize.size(); ++i) bySize[i] = i;
    std::stable_sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
        return lifetimes[a].bytes > lifetimes[b].bytes;
    });
    std::vector<size_t> offsets(lifetimes.size(), 0);
    std::vector<size_t> placed;
    std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of overlapping buffers
    for (size_t i : bySize) {
        const BufferLifetime& b = lifetimes[i];
        busy.clear();
        for (size_t j : placed) {
            const BufferLifetime& o = lifetimes[j];
            if (o.firstStep <= b.lastStep && b.firstStep <= o.lastStep)
                busy.emplace_back(offsets[j], offsets[j] + o.bytes);
        }
        std::sort(busy.begin(), busy.end());
        size_t candidate = 0;
        for (const auto& [start, end] : busy) {
            if (candidate + b.bytes <= start) break;
            candidate = std::max(candidate, end);
        }
        offsets[i] = candidate;
        placed.push_back(i);
        plan.arenaBytes = std::max(plan.arenaBytes, candidate + b.bytes);
    }
    for (size_t i = 0; i < lifetimes.size(); ++i) plan.assignments.push_back({lifetimes[i], offsets[i]});
    return plan;
}

Result<size_t> valueBytes(const Value& value, const DimBindings& bindings, size_t alignment) {
    return bytesOf(value, bindings, alignment);
}

DimBindings bindAllSymbols(const Graph& graph, int64_t size) {
    DimBindings bindings;
    for (size_t i = 0; i < graph.valueCount(); ++i) {
        const Shape& s = graph.value(ValueId{uint32_t(i)}).type.shape;
        if (!s.rankKnown()) continue;
        for (const Dim& d : s.dims()) {
            if (!d.isSymbolic()) continue;
            auto product = splitProductSymbol(d.symbol());
            bindings.emplace(product ? product->first : d.symbol(), size);
        }
    }
    return bindings;
}

}  // namespace fsc
