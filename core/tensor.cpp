#include "core/tensor.h"

#include "core/fnv1a.h"

namespace fsc {

Tensor::Tensor(std::string name, DType type, std::vector<int64_t> dims, BufferPtr buffer,
               size_t offset, size_t size)
    : m_name(std::move(name)),
      m_dtype(type),
      m_dims(std::move(dims)),
      m_buffer(std::move(buffer)),
      m_offset(offset),
      m_size(size) {}

Tensor Tensor::ofStrings(std::string name, std::vector<int64_t> dims,
                         std::vector<std::string> strings) {
    Tensor t;
    t.m_name = std::move(name);
    t.m_dtype = DType::String;
    t.m_dims = std::move(dims);
    t.m_strings = std::move(strings);
    return t;
}

int64_t Tensor::numElements() const {
    return checkedProduct(m_dims).value_or(0);
}

uint64_t Tensor::fingerprint() const {
    uint64_t h = kFnv1aOffset;
    auto mix = [&h](const void* p, size_t n) { h = fnv1a(p, n, h); };
    int32_t type = static_cast<int32_t>(m_dtype);
    mix(&type, sizeof type);
    for (int64_t d : m_dims) mix(&d, sizeof d);
    if (m_dtype == DType::String) {
        for (const std::string& s : m_strings) {
            uint64_t n = s.size();
            mix(&n, sizeof n);
            mix(s.data(), s.size());
        }
    } else if (data()) {
        mix(data(), m_size);
    }
    return h;
}

size_t packedByteSize(DType type, int64_t count) {
    int bits = dtypeBits(type);
    return static_cast<size_t>((count * bits + 7) / 8);
}

}  // namespace fsc
