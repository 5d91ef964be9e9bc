#pragma once
// Shapes with symbolic dims. A dim is a known size, a named symbol ("batch"), or unknown
// (ONNX allows a dim with neither value nor name). A shape may have unknown rank.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace fsc {

class Dim {
public:
    Dim() = default;  // unknown
    static Dim known(int64_t size) { Dim d; d.m_size = size; return d; }
    static Dim symbolic(std::string name) { Dim d; d.m_symbol = std::move(name); return d; }

    bool isKnown() const { return m_size.has_value(); }
    bool isSymbolic() const { return !m_size && !m_symbol.empty(); }
    bool isUnknown() const { return !m_size && m_symbol.empty(); }
    int64_t size() const { return m_size.value_or(-1); }
    const std::string& symbol() const { return m_symbol; }
    std::string toString() const;  // "3", "batch", "?"

    bool operator==(const Dim&) const = default;

private:
    std::optional<int64_t> m_size;
    std::string m_symbol;
};

class Shape {
public:
    Shape() = default;  // unknown rank
    explicit Shape(std::vector<Dim> dims) : m_rankKnown(true), m_dims(std::move(dims)) {}
    static Shape ofSizes(const std::vector<int64_t>& sizes);
    static Shape scalar() { return Shape(std::vector<Dim>{}); }

    bool rankKnown() const { return m_rankKnown; }
    size_t rank() const { return m_dims.size(); }
    const std::vector<Dim>& dims() const { return m_dims; }
    const Dim& operator[](size_t i) const { return m_dims[i]; }
    // Every dim is a known size (and the rank is known).
    bool isStatic() const;
    std::optional<int64_t> numElements() const;  // only when static and no overflow
    std::string toString() const;  // "[1,3,batch,?]", "[]" for a scalar, "?" for unknown rank

    bool operator==(const Shape&) const = default;

private:
    bool m_rankKnown = false;
    std::vector<Dim> m_dims;
};

// The type of a value: a tensor (the common case) or one of ONNX's containers.
struct ValueType {
    enum class Kind { Unknown, Tensor, SparseTensor, Sequence, Map, Optional };
    Kind kind = Kind::Unknown;
    DType elemType = DType::Undefined;    // tensor, sparse tensor, map key
    Shape shape;                          // tensor, sparse tensor
    std::shared_ptr<ValueType> element;   // sequence, optional, map value
    std::string denotation;

    static ValueType tensor(DType type, Shape shape) {
        ValueType t;
        t.kind = Kind::Tensor;
        t.elemType = type;
        t.shape = std::move(shape);
        return t;
    }
    bool isKnown() const { return kind != Kind::Unknown; }
    // Tensor-like with a known rank and no unknown (unnamed, unsized) dim.
    bool shapeFullyKnown() const;
    std::string toString() const;  // "float32[1,3,224,224]", "seq(float32[?])", "?"
    bool operator==(const ValueType& o) const;
};

// Multiplies sizes and reports overflow of int64 (malformed models use huge dims).
std::optional<int64_t> checkedProduct(const std::vector<int64_t>& sizes);

}  // namespace fsc
