#include "core/shape_values.h"

#include "core/parse_int.h"

#include <algorithm>
#include <iterator>

namespace fsc {
namespace {

constexpr size_t kMaxElements = 64;  // shape tensors are short; anything longer is data

std::optional<ShapeValue> fromTensor(const Tensor& t) {
    if (t.dims().size() > 1 || t.numElements() > int64_t(kMaxElements)) return std::nullopt;
    ShapeValue v;
    for (int64_t i = 0; i < t.numElements(); ++i) {
        if (t.dtype() == DType::Int64) v.push_back(Dim::known(t.dataAs<int64_t>()[i]));
        else if (t.dtype() == DType::Int32) v.push_back(Dim::known(t.dataAs<int32_t>()[i]));
        else return std::nullopt;
    }
    return v;
}

// Applies `f` element by element with ONNX broadcasting of length-1 operands.
template <typename F>
std::optional<ShapeValue> elementwise(const ShapeValue* a, const ShapeValue* b, F f) {
    if (!a || !b || !(a->size() == b->size() || a->size() == 1 || b->size() == 1))
        return std::nullopt;
    ShapeValue out;
    for (size_t i = 0; i < std::max(a->size(), b->size()); ++i)
        out.push_back(f((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]));
    return out;
}

int64_t attrInt(const Node& n, const char* name, int64_t fallback) {
    const Attribute* a = n.attribute(name);
    return a ? a->i : fallback;
}

// An ints attribute; `fallback` when it is absent, nothing when neither is given.
std::optional<std::vector<int64_t>> attrInts(const Node& n, const char* name,
                                             std::optional<std::vector<int64_t>> fallback = std::nullopt) {
    const Attribute* a = n.attribute(name);
    return a ? std::optional(a->ints) : fallback;
}

}  // namespace

Dim dimArithmetic(const std::string& op, const Dim& a, const Dim& b) {
    if (a.isKnown() && b.isKnown()) {
        const int64_t x = a.size(), y = b.size();
        // Fuzzed or hostile constants can be huge: overflow makes the dim unknown.
        int64_t r = 0;
        if (op == "Add") return __builtin_add_overflow(x, y, &r) ? Dim() : Dim::known(r);
        if (op == "Sub") return __builtin_sub_overflow(x, y, &r) ? Dim() : Dim::known(r);
        if (op == "Mul") return __builtin_mul_overflow(x, y, &r) ? Dim() : Dim::known(r);
        if ((op == "Div" || op == "Mod") && (y == 0 || (y == -1 && x == INT64_MIN))) return Dim();
        if (op == "Div") return Dim::known(x / y);  // shape maths is integer
        if (op == "Mod") {
            r = x % y;  // ONNX's integer Mod takes the divisor's sign
            if (r != 0 && ((r < 0) != (y < 0))) r += y;
            return Dim::known(r);
        }
        return Dim();
    }
    if (op == "Sub" && a.isSymbolic() && a == b) return Dim::known(0);  // key length - query length
    // Identities keep a symbol: batch * 1, batch / 1, batch + 0.
    if (b.isKnown() && ((op == "Mul" || op == "Div") && b.size() == 1)) return a;
    if (b.isKnown() && ((op == "Add" || op == "Sub") && b.size() == 0)) return a;
    if (a.isKnown() && op == "Mul" && a.size() == 1) return b;
    if (a.isKnown() && op == "Add" && a.size() == 0) return b;
    // (batch*64) / 64 is batch again: undo a product this table made.
    if (op == "Div" && a.isSymbolic() && b.isKnown() && b.size() > 0) {
        if (auto product = splitProductSymbol(a.symbol()); product && product->second % b.size() == 0) {
            const int64_t rest = product->second / b.size();
            return rest == 1 ? Dim::symbolic(product->first)
                             : Dim::symbolic(product->first + "*" + std::to_string(rest));
        }
    }
    // A symbol times a number stays a (named) product, as in heads * batch.
    if (op == "Mul" && a.isSymbolic() && b.isKnown() && b.size() > 0)
        return Dim::symbolic(a.symbol() + "*" + std::to_string(b.size()));
    if (op == "Mul" && b.isSymbolic() && a.isKnown() && a.size() > 0)
        return Dim::symbolic(b.symbol() + "*" + std::to_string(a.size()));
    return Dim();
}

namespace {

// Equal on dims as 0/1. A symbolic dim is a size, so it never equals a negative number.
Dim equality(const Dim& a, const Dim& b) {
    if (a.isKnown() && b.isKnown()) return Dim::known(a.size() == b.size());
    if (a.isSymbolic() && b.isSymbolic() && a.symbol() == b.symbol()) return Dim::known(1);
    if ((a.isSymbolic() && b.isKnown() && b.size() < 0) ||
        (b.isSymbolic() && a.isKnown() && a.size() < 0))
        return Dim::known(0);
    return Dim();
}

}  // namespace

int64_t rangeLength(int64_t start, int64_t limit, int64_t delta) {
    // In 128 bits: start, limit and delta come from the model and may be extreme.
    const __int128 span = __int128(limit) - start;
    const __int128 count = delta > 0 ? (span + delta - 1) / delta : (span + delta + 1) / delta;
    return count <= 0 ? 0 : count > INT64_MAX ? INT64_MAX : int64_t(count);
}

std::optional<std::pair<std::string, int64_t>> splitProductSymbol(const std::string& name) {
    const size_t star = name.rfind('*');
    if (star == std::string::npos || star == 0 || star + 1 == name.size() || name.size() - star > 18 ||
        name.find_first_not_of("0123456789", star + 1) != std::string::npos)
        return std::nullopt;
    const auto factor = parseInt64(std::string_view(name).substr(star + 1));
    if (!factor) return std::nullopt;
    return std::make_pair(name.substr(0, star), *factor);
}

SliceRange sliceRange(int64_t size, int64_t start, int64_t end, int64_t step) {
    auto clampIndex = [size](int64_t v, int64_t lo, int64_t hi) {
        if (v < 0) v += size;
        return std::clamp(v, lo, hi);
    };
    SliceRange r;
    r.step = step;
    if (step > 0) {
        r.first = clampIndex(start, 0, size);
        const int64_t last = clampIndex(end, 0, size);
        r.count = last > r.first ? int64_t((__int128(last) - r.first + step - 1) / step) : 0;
    } else {
        r.first = clampIndex(start, -1, size - 1);
        const int64_t last = clampIndex(end, -1, size - 1);
        r.count = r.first > last ? int64_t((__int128(r.first) - last - step - 1) / -__int128(step)) : 0;
    }
    return r;
}

std::optional<std::vector<int64_t>> knownInts(const ShapeValue* v) {
    if (!v) return std::nullopt;
    std::vector<int64_t> out;
    for (const Dim& d : *v) {
        if (!d.isKnown()) return std::nullopt;
        out.push_back(d.size());
    }
    return out;
}

const ShapeValue* ShapeValueTable::find(ValueId id) {
    if (!id.valid()) return nullptr;
    auto it = m_values.find(id.index);
    if (it != m_values.end()) return &it->second;
    const Value& v = m_graph.value(id);
    if (v.initializer) {
        if (auto sv = fromTensor(*v.initializer))
            return &m_values.emplace(id.index, std::move(*sv)).first->second;
    }
    return nullptr;
}

void ShapeValueTable::evaluate(const Node& n) {
    if (n.outputs.empty() || !n.outputs[0].valid()) return;
    if (!n.domain.empty() && n.domain != "ai.onnx") return;
    auto input = [&](size_t i) -> const ShapeValue* {
        return i < n.inputs.size() ? find(n.inputs[i]) : nullptr;
    };
    auto rowsOf = [&](size_t i) -> int64_t {
        if (i >= n.inputs.size()) return 0;
        auto it = m_rows.find(n.inputs[i].index);
        return it == m_rows.end() ? 0 : it->second;
    };
    std::optional<ShapeValue> result;
    int64_t outRows = 0;  // > 0: the result is 2-D with this many rows
    const std::string& op = n.opType;
    if (op == "Shape") {
        const ValueType* t = !n.inputs.empty() && n.inputs[0].valid() ? &m_graph.value(n.inputs[0]).type : nullptr;
        if (t && t->kind == ValueType::Kind::Tensor && t->shape.rankKnown()) {
            const Shape& shape = t->shape;
            const int64_t rank = int64_t(shape.rank());
            int64_t start = attrInt(n, "start", 0), end = attrInt(n, "end", rank);
            if (start < 0) start += rank;
            if (end < 0) end += rank;
            start = std::clamp<int64_t>(start, 0, rank);
            end = std::clamp<int64_t>(end, start, rank);
            result = ShapeValue(shape.dims().begin() + start, shape.dims().begin() + end);
        }
    } else if (op == "Constant") {
        if (const Attribute* a = n.attribute("value"); a && a->type == Attribute::Type::Tensor)
            result = fromTensor(a->t);
        else if (const Attribute* b = n.attribute("value_ints")) {
            result = ShapeValue();
            for (int64_t v : b->ints) result->push_back(Dim::known(v));
        } else if (const Attribute* c = n.attribute("value_int"))
            result = ShapeValue{Dim::known(c->i)};
    } else if (op == "Identity" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten") {
        if (const ShapeValue* v = input(0)) result = *v;
        if (op == "Identity") outRows = rowsOf(0);
    } else if (op == "Cast") {
        const int64_t to = attrInt(n, "to", 0);
        if (const ShapeValue* v = input(0); v && (to == int64_t(DType::Int64) || to == int64_t(DType::Int32))) {
            result = *v;
            outRows = rowsOf(0);
        }
    } else if (op == "Gather" && attrInt(n, "axis", 0) == 0) {
        const ShapeValue* data = input(0);
        auto indices = knownInts(input(1));
        if (data && indices) {
            result = ShapeValue();
            for (int64_t i : *indices) {
                if (i < 0) i += int64_t(data->size());
                if (i < 0 || i >= int64_t(data->size())) {
                    result.reset();
                    break;
                }
                result->push_back((*data)[size_t(i)]);
            }
        }
    } else if (op == "Concat") {
        result = ShapeValue();
        for (size_t i = 0; i < n.inputs.size() && result; ++i) {
            if (const ShapeValue* v = input(i)) result->insert(result->end(), v->begin(), v->end());
            else result.reset();
        }
    } else if (op == "Slice") {
        const ShapeValue* data = input(0);
        // Opset 1-9 give starts, ends and axes as attributes; opset 10+ as inputs.
        const bool asAttributes = n.inputs.size() == 1;
        auto starts = asAttributes ? attrInts(n, "starts") : knownInts(input(1));
        auto ends = asAttributes ? attrInts(n, "ends") : knownInts(input(2));
        auto axes = asAttributes                                 ? attrInts(n, "axes", std::vector<int64_t>{0})
                    : n.inputs.size() > 3 && n.inputs[3].valid() ? knownInts(input(3))
                                                                 : std::optional(std::vector<int64_t>{0});
        auto steps = n.inputs.size() > 4 && n.inputs[4].valid() ? knownInts(input(4))
                                                                : std::optional(std::vector<int64_t>{1});
        if (data && starts && ends && axes && steps && starts->size() == 1 && ends->size() == 1 &&
            axes->size() == 1 && (*axes)[0] == 0 && steps->size() == 1 && (*steps)[0] != 0) {
            // Axis 0 of a 2-D value selects rows; of a 1-D value, elements.
            const int64_t rows = rowsOf(0);
            const int64_t width = rows > 0 ? int64_t(data->size()) / rows : 1;
            const SliceRange r = sliceRange(rows > 0 ? rows : int64_t(data->size()), (*starts)[0],
                                            (*ends)[0], (*steps)[0]);
            result = ShapeValue();
            for (int64_t k = 0; k < r.count; ++k) {
                const int64_t row = r.first + k * r.step;
                result->insert(result->end(), data->begin() + row * width, data->begin() + (row + 1) * width);
            }
            if (rows > 0) outRows = r.count;
        }
    } else if (op == "Range") {
        auto start = knownInts(input(0)), limit = knownInts(input(1)), delta = knownInts(input(2));
        if (start && limit && delta && start->size() == 1 && limit->size() == 1 &&
            delta->size() == 1 && (*delta)[0] != 0) {
            const int64_t count = rangeLength((*start)[0], (*limit)[0], (*delta)[0]);
            if (count <= int64_t(kMaxElements)) {  // then no element overflows either
                result = ShapeValue();
                for (int64_t k = 0; k < count; ++k) result->push_back(Dim::known((*start)[0] + k * (*delta)[0]));
            }
        }
    } else if (op == "Transpose") {
        const ShapeValue* data = input(0);
        const int64_t rows = rowsOf(0);
        const Attribute* perm = n.attribute("perm");
        if (data && rows > 0 && (!perm || perm->ints == std::vector<int64_t>{1, 0})) {
            const int64_t cols = int64_t(data->size()) / rows;
            result = ShapeValue();
            for (int64_t c = 0; c < cols; ++c)
                for (int64_t r = 0; r < rows; ++r) result->push_back((*data)[size_t(r * cols + c)]);
            outRows = cols;
        }
    } else if (op == "ConstantOfShape") {
        auto length = knownInts(input(0));
        const Attribute* value = n.attribute("value");
        std::optional<ShapeValue> fill = value ? fromTensor(value->t) : ShapeValue{Dim::known(0)};
        if (length && length->size() == 1 && (*length)[0] <= int64_t(kMaxElements) && fill &&
            fill->size() == 1)
            result = ShapeValue(size_t((*length)[0]), (*fill)[0]);
    } else if (op == "Reshape") {
        const ShapeValue* v = input(0);
        auto target = knownInts(input(1));
        if (v && target && target->size() == 1) {
            result = *v;
        } else if (v && target && target->size() == 2 && !v->empty()) {
            const int64_t n0 = (*target)[0], n1 = (*target)[1], size = int64_t(v->size());
            const int64_t rows = n0 > 0 ? n0 : (n1 > 0 && size % n1 == 0 ? size / n1 : -1);
            if (rows > 0 && size % rows == 0 && (n1 <= 0 || rows * n1 == size)) {
                result = *v;
                outRows = rows;
            }
        }
    } else if (op == "Equal") {
        result = elementwise(input(0), input(1), equality);
    } else if (op == "Where") {
        auto cond = knownInts(input(0));
        const ShapeValue* a = input(1);
        const ShapeValue* b = input(2);
        if (cond && a && b && a->size() == cond->size() && b->size() == cond->size()) {
            result = ShapeValue();
            for (size_t i = 0; i < cond->size(); ++i) result->push_back((*cond)[i] ? (*a)[i] : (*b)[i]);
        }
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod") {
        result = elementwise(input(0), input(1),
                             [&op](const Dim& a, const Dim& b) { return dimArithmetic(op, a, b); });
    }
    if (result && result->size() <= kMaxElements) {
        m_values[n.outputs[0].index] = std::move(*result);
        if (outRows > 0) m_rows[n.outputs[0].index] = outRows;
    }
}

// Slice (opset 10+) whose starts/ends/axes/steps are computed from shapes at run time. The rank
// is always the input's; a dim whose bounds are not known numbers is unknown, except [0, S) of a
// dim of S elements. GPT-2's causal mask is sliced [k - q, k) by the query and key lengths.
std::optional<Shape> sliceResult(const Node& node, const Graph& graph, ShapeValueTable& values) {
    const Shape& in = graph.value(node.inputs[0]).type.shape;
    const auto rank = int64_t(in.rank());
    auto optional = [&](size_t i) -> const ShapeValue* {
        return i < node.inputs.size() && node.inputs[i].valid() ? values.find(node.inputs[i]) : nullptr;
    };
    const ShapeValue* starts = values.find(node.inputs[1]);
    const ShapeValue* ends = values.find(node.inputs[2]);
    std::vector<int64_t> axes, steps;
    if (node.inputs.size() > 3 && node.inputs[3].valid()) {
        auto a = knownInts(optional(3));
        if (!a) return Shape(std::vector<Dim>(size_t(rank)));  // any dim may be sliced
        axes = *a;
    } else if (starts) {
        for (size_t i = 0; i < starts->size(); ++i) axes.push_back(int64_t(i));
    } else {
        return Shape(std::vector<Dim>(size_t(rank)));
    }
    steps.assign(axes.size(), 1);
    if (node.inputs.size() > 4 && node.inputs[4].valid()) {
        auto st = knownInts(optional(4));
        if (!st || st->size() != steps.size()) return std::nullopt;
        steps = *st;
    }
    const bool bounds = starts && ends && starts->size() == axes.size() && ends->size() == axes.size();
    std::vector<Dim> dims = in.dims();
    for (size_t i = 0; i < axes.size(); ++i) {
        int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (axis < 0 || axis >= rank || steps[i] == 0) return std::nullopt;
        const Dim& d = in[size_t(axis)];
        Dim& out = dims[size_t(axis)];
        out = Dim();
        if (!bounds) continue;
        const Dim &start = (*starts)[i], &end = (*ends)[i];
        if (d.isKnown() && start.isKnown() && end.isKnown())
            out = Dim::known(sliceRange(d.size(), start.size(), end.size(), steps[i]).count);
        else if (d.isSymbolic() && steps[i] == 1 && start.isKnown() && start.size() == 0 && end == d)
            out = d;
    }
    return Shape(std::move(dims));
}

std::optional<Shape> reshapeResult(const Shape& data, const ShapeValue& target, bool allowZero) {
    std::vector<Dim> dims;
    int inferIndex = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        const Dim& d = target[i];
        if (d.isKnown() && d.size() == -1) {
            if (inferIndex >= 0) return std::nullopt;
            inferIndex = int(i);
            dims.push_back(Dim());
        } else if (d.isKnown() && d.size() == 0 && !allowZero) {
            if (!data.rankKnown() || i >= data.rank()) return std::nullopt;
            dims.push_back(data[i]);
        } else {
            dims.push_back(d);
        }
    }
    if (inferIndex >= 0 && data.rankKnown()) {
        // -1 takes what is left: known sizes divide, symbols must cancel one-to-one.
        int64_t dataKnown = 1, targetKnown = 1;
        std::vector<std::string> dataSymbols, targetSymbols;
        bool unknown = false;
        // Products overflowing int64 leave the -1 unknown.
        // A product symbol (batch*12) counts as its symbol and its factor.
        auto account = [&unknown](const Dim& d, int64_t& known, std::vector<std::string>& symbols) {
            if (d.isKnown()) {
                unknown |= __builtin_mul_overflow(known, d.size(), &known);
            } else if (!d.isSymbolic()) {
                unknown = true;
            } else if (auto product = splitProductSymbol(d.symbol())) {
                symbols.push_back(product->first);
                unknown |= __builtin_mul_overflow(known, product->second, &known);
            } else {
                symbols.push_back(d.symbol());
            }
        };
        for (const Dim& d : data.dims()) account(d, dataKnown, dataSymbols);
        for (size_t i = 0; i < dims.size(); ++i)
            if (int(i) != inferIndex) account(dims[i], targetKnown, targetSymbols);
        std::sort(dataSymbols.begin(), dataSymbols.end());
        std::sort(targetSymbols.begin(), targetSymbols.end());
        // What the data has beyond the target: no symbol gives a number, one symbol a
        // product with it (batch*64); anything else stays unknown.
        std::vector<std::string> extra;
        std::set_difference(dataSymbols.begin(), dataSymbols.end(), targetSymbols.begin(),
                            targetSymbols.end(), std::back_inserter(extra));
        const bool targetCovered = std::includes(dataSymbols.begin(), dataSymbols.end(),
                                                 targetSymbols.begin(), targetSymbols.end());
        if (!unknown && targetCovered && extra.size() <= 1 && targetKnown > 0 &&
            dataKnown % targetKnown == 0) {
            const int64_t factor = dataKnown / targetKnown;
            if (extra.empty()) dims[size_t(inferIndex)] = Dim::known(factor);
            else dims[size_t(inferIndex)] = Dim::symbolic(factor == 1 ? extra[0] : extra[0] + "*" + std::to_string(factor));
        }
    }
    return Shape(std::move(dims));
}

}  // namespace fsc
