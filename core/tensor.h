#pragma once
// A constant tensor (initializer, Constant value, attribute). Numeric data is kept as
// little-endian packed bytes, a view into a shared Buffer; strings are kept as a list.
#include <cstdint>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace fsc {

class Tensor {
public:
    Tensor() = default;
    Tensor(std::string name, DType type, std::vector<int64_t> dims, BufferPtr buffer,
           size_t offset, size_t size);
    static Tensor ofStrings(std::string name, std::vector<int64_t> dims,
                            std::vector<std::string> strings);

    const std::string& name() const { return m_name; }
    void setName(std::string name) { m_name = std::move(name); }
    DType dtype() const { return m_dtype; }
    const std::vector<int64_t>& dims() const { return m_dims; }
    Shape shape() const { return Shape::ofSizes(m_dims); }
    int64_t numElements() const;
    // Bytes the data occupies when packed (int4 packs two per byte).
    size_t byteSize() const { return m_size; }
    const uint8_t* data() const { return m_buffer ? m_buffer->data() + m_offset : nullptr; }
    const std::vector<std::string>& strings() const { return m_strings; }
    const std::string& docString() const { return m_docString; }
    void setDocString(std::string doc) { m_docString = std::move(doc); }

    // 64-bit FNV-1a over dtype, dims and bytes: lets text dumps compare weights cheaply.
    uint64_t fingerprint() const;

    template <typename T>
    const T* dataAs() const { return reinterpret_cast<const T*>(data()); }

private:
    std::string m_name;
    DType m_dtype = DType::Undefined;
    std::vector<int64_t> m_dims;
    BufferPtr m_buffer;
    size_t m_offset = 0;
    size_t m_size = 0;
    std::vector<std::string> m_strings;
    std::string m_docString;
};

// Bytes needed for `count` packed elements of `type`.
size_t packedByteSize(DType type, int64_t count);

// ONNX sparse tensor: values at indices (COO), dense shape `dims`.
struct SparseTensor {
    Tensor values;
    Tensor indices;
    std::vector<int64_t> dims;
};

}  // namespace fsc
