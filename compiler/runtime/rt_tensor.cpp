#include "compiler/runtime/rt_tensor.h"

#include <cstdlib>

#include "compiler/runtime/half.h"
#include "compiler/runtime/large_block_cache.h"
#include "core/out_of_memory.h"

namespace fsc {

int64_t RtTensor::numel() const {
    if (sequence) return 0;  // its elements hold the data
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

size_t RtTensor::bytes() const { return packedByteSize(dtype, numel()); }

std::string RtTensor::typeString() const {
    if (sequence) return "seq(" + std::string(dtypeName(dtype)) + ") of " + std::to_string(sequence->size());
    std::string s(dtypeName(dtype));
    s += '[';
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + ']';
}

namespace {

RtTensor allocate(DType dtype, std::vector<int64_t> dims, bool zeroed) {
    RtTensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    if (dtype == DType::String) {
        t.strings = std::make_shared<std::vector<std::string>>(size_t(t.numel()));
        t.data = t.strings->data();
        t.owner = t.strings;
        return t;
    }
    const size_t bytes = std::max<size_t>(t.bytes(), 1);
    void* p = LargeBlockCache::take(bytes);
    if (!p) throw OutOfMemory(bytes, "a " + t.typeString() + " tensor");
    if (zeroed) std::memset(p, 0, bytes);
    t.owner = std::shared_ptr<void>(p, [bytes](void* q) { LargeBlockCache::give(q, bytes); });
    t.data = p;
    return t;
}
}  // namespace

RtTensor allocateTensor(DType dtype, std::vector<int64_t> dims) { return allocate(dtype, std::move(dims), true); }

RtTensor allocateOutputTensor(DType dtype, std::vector<int64_t> dims) { return allocate(dtype, std::move(dims), false); }

Result<RtTensor> tensorFromConstant(const Tensor& constant) {
    if (constant.dtype() == DType::String) {
        RtTensor t = allocateTensor(DType::String, constant.dims());
        *t.strings = constant.strings();
        return t;
    }
    if (dtypeBits(constant.dtype()) < 8)
        return Status(ErrorCode::Unsupported, "tensor '" + constant.name() + "' has dtype " +
                                                  std::string(dtypeName(constant.dtype())) +
                                                  ", which the runtime does not handle");
    const size_t need = packedByteSize(constant.dtype(), constant.numElements());
    if (constant.byteSize() < need)
        return Status(ErrorCode::InvalidModel,
                      "tensor '" + constant.name() + "' holds fewer bytes than its shape needs");
    // Share the constant's bytes when they are aligned for their type (the usual case).
    const size_t align = size_t(dtypeBits(constant.dtype()) / 8);
    if (need && reinterpret_cast<uintptr_t>(constant.data()) % align == 0) {
        auto keep = std::make_shared<Tensor>(constant);
        RtTensor t;
        t.dtype = constant.dtype();
        t.dims = constant.dims();
        t.data = const_cast<uint8_t*>(keep->data());
        t.owner = keep;
        return t;
    }
    RtTensor t = allocateTensor(constant.dtype(), constant.dims());
    if (constant.byteSize() < t.bytes())
        return Status(ErrorCode::InvalidModel,
                      "tensor '" + constant.name() + "' holds fewer bytes than its shape needs");
    if (t.bytes()) std::memcpy(t.data, constant.data(), t.bytes());
    return t;
}

Tensor tensorToConstant(const RtTensor& tensor, const std::string& name) {
    if (tensor.dtype == DType::String)
        return Tensor::ofStrings(name, tensor.dims, *tensor.strings);
    std::string bytes(static_cast<const char*>(tensor.data), tensor.bytes());
    const size_t size = bytes.size();
    return Tensor(name, tensor.dtype, tensor.dims, makeBuffer(std::move(bytes)), 0, size);
}

RtTensor makeSequence(DType elemType, std::vector<RtTensor> elements) {
    RtTensor t;
    t.dtype = elemType;
    t.sequence = std::make_shared<const std::vector<RtTensor>>(std::move(elements));
    return t;
}

RtTensor cloneTensor(const RtTensor& tensor) {
    if (tensor.sequence) return tensor;  // elements are never written: sharing them is a copy
    RtTensor copy = allocateTensor(tensor.dtype, tensor.dims);
    if (tensor.dtype == DType::String)
        *copy.strings = *tensor.strings;
    else if (tensor.bytes())
        std::memcpy(copy.data, tensor.data, tensor.bytes());
    return copy;
}

double elementAsDouble(const RtTensor& t, int64_t i) {
    switch (t.dtype) {
        case DType::Float32: return t.as<float>()[i];
        case DType::Float64: return t.as<double>()[i];
        case DType::Float16: return halfToFloat(t.as<uint16_t>()[i]);
        case DType::BFloat16: return bfloat16ToFloat(t.as<uint16_t>()[i]);
        case DType::Int8: return t.as<int8_t>()[i];
        case DType::UInt8: return t.as<uint8_t>()[i];
        case DType::Int16: return t.as<int16_t>()[i];
        case DType::UInt16: return t.as<uint16_t>()[i];
        case DType::Int32: return t.as<int32_t>()[i];
        case DType::UInt32: return t.as<uint32_t>()[i];
        case DType::Int64: return double(t.as<int64_t>()[i]);
        case DType::UInt64: return double(t.as<uint64_t>()[i]);
        case DType::Bool: return t.as<bool>()[i] ? 1.0 : 0.0;
        default: return 0.0;
    }
}

int64_t elementAsInt(const RtTensor& t, int64_t i) {
    switch (t.dtype) {
        case DType::Int64: return t.as<int64_t>()[i];
        case DType::Int32: return t.as<int32_t>()[i];
        case DType::UInt64: return int64_t(t.as<uint64_t>()[i]);
        default: return int64_t(elementAsDouble(t, i));
    }
}

Result<std::vector<int64_t>> readInts(const RtTensor& tensor, const std::string& what) {
    if (tensor.dtype != DType::Int64 && tensor.dtype != DType::Int32)
        return Status(ErrorCode::InvalidModel, what + " must be int64 or int32, got " +
                                                   std::string(dtypeName(tensor.dtype)));
    std::vector<int64_t> values(size_t(tensor.numel()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = elementAsInt(tensor, int64_t(i));
    return values;
}

}  // namespace fsc
