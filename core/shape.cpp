#include "core/shape.h"

#include <limits>

namespace fsc {

std::string Dim::toString() const {
    if (m_size) return std::to_string(*m_size);
    if (!m_symbol.empty()) return m_symbol;
    return "?";
}

Shape Shape::ofSizes(const std::vector<int64_t>& sizes) {
    std::vector<Dim> dims;
    dims.reserve(sizes.size());
    for (int64_t s : sizes) dims.push_back(Dim::known(s));
    return Shape(std::move(dims));
}

bool Shape::isStatic() const {
    if (!m_rankKnown) return false;
    for (const Dim& d : m_dims)
        if (!d.isKnown()) return false;
    return true;
}

std::optional<int64_t> Shape::numElements() const {
    if (!isStatic()) return std::nullopt;
    std::vector<int64_t> sizes;
    for (const Dim& d : m_dims) sizes.push_back(d.size());
    return checkedProduct(sizes);
}

std::string Shape::toString() const {
    if (!m_rankKnown) return "?";
    std::string s = "[";
    for (size_t i = 0; i < m_dims.size(); ++i) {
        if (i) s += ",";
        s += m_dims[i].toString();
    }
    return s + "]";
}

bool ValueType::shapeFullyKnown() const {
    if (kind != Kind::Tensor && kind != Kind::SparseTensor) return false;
    if (!shape.rankKnown()) return false;
    for (const Dim& d : shape.dims())
        if (d.isUnknown()) return false;
    return true;
}

std::string ValueType::toString() const {
    switch (kind) {
        case Kind::Unknown: return "?";
        case Kind::Tensor: return std::string(dtypeName(elemType)) + shape.toString();
        case Kind::SparseTensor:
            return "sparse(" + std::string(dtypeName(elemType)) + shape.toString() + ")";
        case Kind::Sequence: return "seq(" + (element ? element->toString() : "?") + ")";
        case Kind::Optional: return "optional(" + (element ? element->toString() : "?") + ")";
        case Kind::Map:
            return "map(" + std::string(dtypeName(elemType)) + "," +
                   (element ? element->toString() : "?") + ")";
    }
    return "?";
}

bool ValueType::operator==(const ValueType& o) const {
    if (kind != o.kind || elemType != o.elemType || !(shape == o.shape) ||
        denotation != o.denotation)
        return false;
    if (!element || !o.element) return !element && !o.element;
    return *element == *o.element;
}

std::optional<int64_t> checkedProduct(const std::vector<int64_t>& sizes) {
    int64_t n = 1;
    for (int64_t s : sizes) {
        if (s < 0) return std::nullopt;
        if (s != 0 && n > std::numeric_limits<int64_t>::max() / s) return std::nullopt;
        n *= s;
    }
    return n;
}

}  // namespace fsc
