#include "core/onnx_proto_convert.h"

#include <cstring>

namespace fsc {
namespace {

std::string describe(const onnx::TensorProto& proto) {
    return proto.name().empty() ? std::string("unnamed tensor") : "tensor '" + proto.name() + "'";
}

template <typename Src, typename Dst>
std::string packAs(const google::protobuf::RepeatedField<Src>& values) {
    std::string bytes(values.size() * sizeof(Dst), '\0');
    auto* out = reinterpret_cast<Dst*>(bytes.data());
    for (int i = 0; i < values.size(); ++i) out[i] = static_cast<Dst>(values.Get(i));
    return bytes;
}

// Packs the typed repeated field that ONNX uses for `type` into little-endian bytes.
// Returns the element count found in the field next to the bytes.
Result<std::pair<std::string, int64_t>> packTypedData(const onnx::TensorProto& p, DType type) {
    using R = std::pair<std::string, int64_t>;
    switch (type) {
        case DType::Float32: return R{packAs<float, float>(p.float_data()), p.float_data_size()};
        case DType::Complex64:
            return R{packAs<float, float>(p.float_data()), p.float_data_size() / 2};
        case DType::Float64:
            return R{packAs<double, double>(p.double_data()), p.double_data_size()};
        case DType::Complex128:
            return R{packAs<double, double>(p.double_data()), p.double_data_size() / 2};
        case DType::Int64: return R{packAs<int64_t, int64_t>(p.int64_data()), p.int64_data_size()};
        case DType::UInt32:
            return R{packAs<uint64_t, uint32_t>(p.uint64_data()), p.uint64_data_size()};
        case DType::UInt64:
            return R{packAs<uint64_t, uint64_t>(p.uint64_data()), p.uint64_data_size()};
        case DType::Int32: return R{packAs<int32_t, int32_t>(p.int32_data()), p.int32_data_size()};
        case DType::Int16: return R{packAs<int32_t, int16_t>(p.int32_data()), p.int32_data_size()};
        case DType::UInt16:
        case DType::Float16:
        case DType::BFloat16:
            return R{packAs<int32_t, uint16_t>(p.int32_data()), p.int32_data_size()};
        case DType::Int8: return R{packAs<int32_t, int8_t>(p.int32_data()), p.int32_data_size()};
        case DType::UInt8:
        case DType::Bool:
        case DType::Float8E4M3FN:
        case DType::Float8E4M3FNUZ:
        case DType::Float8E5M2:
        case DType::Float8E5M2FNUZ:
            return R{packAs<int32_t, uint8_t>(p.int32_data()), p.int32_data_size()};
        case DType::Int4:
        case DType::UInt4:
            // Two 4-bit values per int32 entry (one packed byte each).
            return R{packAs<int32_t, uint8_t>(p.int32_data()), p.int32_data_size() * 2};
        default: break;
    }
    return Status(ErrorCode::Unsupported,
                  std::string("typed data of ") + std::string(dtypeName(type)));
}

Result<uint64_t> parseExternalNumber(const std::string& key, const std::string& text) {
    if (text.empty() || text.size() > 19)
        return invalidModel("external data " + key + " '" + text + "' is not a valid number");
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return invalidModel("external data " + key + " '" + text + "' is not a valid number");
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
}

Result<Tensor> externalTensor(const onnx::TensorProto& p, DType type, std::vector<int64_t> dims,
                              size_t expectedBytes, ExternalDataResolver* externalData) {
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const auto& entry : p.external_data()) {
        if (entry.key() == "location") {
            location = entry.value();
        } else if (entry.key() == "offset") {
            auto v = parseExternalNumber("offset", entry.value());
            if (!v) return v.status();
            offset = *v;
        } else if (entry.key() == "length") {
            auto v = parseExternalNumber("length", entry.value());
            if (!v) return v.status();
            length = *v;
        }
    }
    if (!externalData)
        return invalidModel("external data '" + location + "' needs the model's folder");
    Result<BufferPtr> file = externalData->open(location);
    if (!file) return file.status();
    const uint64_t fileSize = (*file)->size();
    if (length && *length != expectedBytes)
        return invalidModel("external data length " + std::to_string(*length) + " of '" +
                            location + "' does not match the " + std::to_string(expectedBytes) +
                            " bytes its shape needs");
    if (offset > fileSize || expectedBytes > fileSize - offset)
        return invalidModel("external data range [" + std::to_string(offset) + ", " +
                            std::to_string(offset + expectedBytes) + ") lies past the end of '" +
                            location + "' (" + std::to_string(fileSize) + " bytes)");
    return Tensor(p.name(), type, std::move(dims), *file, offset, expectedBytes);
}

}  // namespace

Result<Tensor> tensorFromProto(onnx::TensorProto& p, ExternalDataResolver* externalData) {
    auto type = dtypeFromOnnx(p.data_type());
    if (!type)
        return invalidModel(describe(p) + " has unknown dtype " + std::to_string(p.data_type()));
    std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
    for (int64_t d : dims)
        if (d < 0) return invalidModel(describe(p) + " has negative dim " + std::to_string(d));
    auto count = checkedProduct(dims);
    const int bits = dtypeBits(*type);
    if (!count || (bits > 0 && *count > std::numeric_limits<int64_t>::max() / bits))
        return invalidModel(describe(p) + " has dims whose product overflows");
    if (p.has_segment())
        return Status(ErrorCode::Unsupported, describe(p) + " is segmented (not supported)");

    if (*type == DType::String) {
        if (p.string_data_size() != *count)
            return invalidModel(describe(p) + " has " + std::to_string(p.string_data_size()) +
                                " strings but its shape needs " + std::to_string(*count));
        std::vector<std::string> strings(p.string_data().begin(), p.string_data().end());
        Tensor t = Tensor::ofStrings(p.name(), std::move(dims), std::move(strings));
        t.setDocString(p.doc_string());
        return t;
    }

    const size_t expected = packedByteSize(*type, *count);
    auto mismatch = [&](size_t got) {
        return invalidModel(describe(p) + " has " + std::to_string(got) +
                            " bytes of data but its shape " + Shape::ofSizes(dims).toString() +
                            " of " + std::string(dtypeName(*type)) + " needs " +
                            std::to_string(expected));
    };

    Result<Tensor> result = Status(ErrorCode::Internal, "unset");
    if (p.data_location() == onnx::TensorProto::EXTERNAL) {
        result = externalTensor(p, *type, dims, expected, externalData);
        if (!result) return result.status().withContext(describe(p));
    } else if (p.has_raw_data()) {
        if (p.raw_data().size() != expected) return mismatch(p.raw_data().size());
        std::string bytes;
        if (expected >= kInferenceDatalessBytes) {
            bytes.swap(*p.mutable_raw_data());
            p.clear_raw_data();
        } else {
            bytes = p.raw_data();
        }
        result = Tensor(p.name(), *type, dims, makeBuffer(std::move(bytes)), 0, expected);
    } else {
        auto packed = packTypedData(p, *type);
        if (!packed) return packed.status().withContext(describe(p));
        auto& [bytes, found] = *packed;
        if (*count != 0 || found != 0) {
            bool ok = (*type == DType::Int4 || *type == DType::UInt4)
                          ? bytes.size() == expected
                          : found == *count;
            if (!ok) return mismatch(bytes.size());
        }
        bytes.resize(expected);
        result = Tensor(p.name(), *type, dims, makeBuffer(std::move(bytes)), 0, expected);
    }
    result->setDocString(p.doc_string());
    return result;
}

Result<SparseTensor> sparseTensorFromProto(onnx::SparseTensorProto& p,
                                           ExternalDataResolver* externalData) {
    SparseTensor sparse;
    sparse.dims.assign(p.dims().begin(), p.dims().end());
    const std::string what = "sparse tensor '" + p.values().name() + "'";
    for (int64_t d : sparse.dims)
        if (d < 0) return invalidModel(what + " has negative dim " + std::to_string(d));
    auto denseCount = checkedProduct(sparse.dims);
    if (!denseCount) return invalidModel(what + " has dims whose product overflows");
    auto values = tensorFromProto(*p.mutable_values(), externalData);
    if (!values) return values.status();
    auto indices = tensorFromProto(*p.mutable_indices(), externalData);
    if (!indices) return indices.status();
    sparse.values = std::move(*values);
    sparse.indices = std::move(*indices);

    const int64_t nnz = sparse.values.dims().size() == 1 ? sparse.values.dims()[0] : -1;
    if (nnz < 0) return invalidModel(what + ": values must be one-dimensional");
    if (sparse.indices.dtype() != DType::Int64)
        return invalidModel(what + ": indices must be int64");
    const auto& idims = sparse.indices.dims();
    const bool linear = idims.size() == 1 && idims[0] == nnz;
    const bool coordinates = idims.size() == 2 && idims[0] == nnz &&
                             idims[1] == static_cast<int64_t>(sparse.dims.size());
    if (!linear && !coordinates)
        return invalidModel(what + ": indices shape " + Shape::ofSizes(idims).toString() +
                            " does not fit " + std::to_string(nnz) + " values");
    // Out-of-range indices would make every later densification write out of bounds.
    const int64_t* idx = sparse.indices.dataAs<int64_t>();
    for (int64_t i = 0; i < nnz; ++i) {
        if (linear) {
            if (idx[i] < 0 || idx[i] >= *denseCount)
                return invalidModel(what + ": index " + std::to_string(idx[i]) +
                                    " is out of range");
        } else {
            for (size_t k = 0; k < sparse.dims.size(); ++k) {
                int64_t v = idx[i * sparse.dims.size() + k];
                if (v < 0 || v >= sparse.dims[k])
                    return invalidModel(what + ": index " + std::to_string(v) +
                                        " is out of range");
            }
        }
    }
    return sparse;
}

Result<ValueType> valueTypeFromProto(const onnx::TypeProto& proto) {
    ValueType t;
    t.denotation = proto.denotation();
    auto readShape = [](const onnx::TensorShapeProto& sp) -> Result<Shape> {
        std::vector<Dim> dims;
        for (const auto& d : sp.dim()) {
            if (d.has_dim_value()) {
                if (d.dim_value() < 0)
                    return invalidModel("negative dim " + std::to_string(d.dim_value()));
                dims.push_back(Dim::known(d.dim_value()));
            } else if (d.has_dim_param() && !d.dim_param().empty()) {
                dims.push_back(Dim::symbolic(d.dim_param()));
            } else {
                dims.push_back(Dim());
            }
        }
        return Shape(std::move(dims));
    };
    auto readElem = [](int32_t onnxType) -> Result<DType> {
        if (onnxType == 0) return DType::Undefined;
        auto type = dtypeFromOnnx(onnxType);
        if (!type) return invalidModel("unknown dtype " + std::to_string(onnxType));
        return *type;
    };
    switch (proto.value_case()) {
        case onnx::TypeProto::kTensorType:
        case onnx::TypeProto::kSparseTensorType: {
            const bool dense = proto.value_case() == onnx::TypeProto::kTensorType;
            int32_t elem = dense ? proto.tensor_type().elem_type()
                                 : proto.sparse_tensor_type().elem_type();
            bool hasShape = dense ? proto.tensor_type().has_shape()
                                  : proto.sparse_tensor_type().has_shape();
            auto type = readElem(elem);
            if (!type) return type.status();
            t.kind = dense ? ValueType::Kind::Tensor : ValueType::Kind::SparseTensor;
            t.elemType = *type;
            if (hasShape) {
                auto shape = readShape(dense ? proto.tensor_type().shape()
                                             : proto.sparse_tensor_type().shape());
                if (!shape) return shape.status();
                t.shape = std::move(*shape);
            }
            return t;
        }
        case onnx::TypeProto::kSequenceType:
        case onnx::TypeProto::kOptionalType: {
            const bool seq = proto.value_case() == onnx::TypeProto::kSequenceType;
            t.kind = seq ? ValueType::Kind::Sequence : ValueType::Kind::Optional;
            const auto& elem = seq ? proto.sequence_type().elem_type()
                                   : proto.optional_type().elem_type();
            auto inner = valueTypeFromProto(elem);
            if (!inner) return inner.status();
            t.element = std::make_shared<ValueType>(std::move(*inner));
            return t;
        }
        case onnx::TypeProto::kMapType: {
            t.kind = ValueType::Kind::Map;
            auto key = readElem(proto.map_type().key_type());
            if (!key) return key.status();
            t.elemType = *key;
            auto inner = valueTypeFromProto(proto.map_type().value_type());
            if (!inner) return inner.status();
            t.element = std::make_shared<ValueType>(std::move(*inner));
            return t;
        }
        default: return t;  // unknown type
    }
}

void tensorToProto(const Tensor& tensor, onnx::TensorProto* proto) {
    proto->set_name(tensor.name());
    proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
    for (int64_t d : tensor.dims()) proto->add_dims(d);
    if (!tensor.docString().empty()) proto->set_doc_string(tensor.docString());
    if (tensor.dtype() == DType::String) {
        for (const std::string& s : tensor.strings()) proto->add_string_data(s);
    } else if (tensor.data()) {
        proto->set_raw_data(reinterpret_cast<const char*>(tensor.data()), tensor.byteSize());
    }
}

void sparseTensorToProto(const SparseTensor& tensor, onnx::SparseTensorProto* proto) {
    tensorToProto(tensor.values, proto->mutable_values());
    tensorToProto(tensor.indices, proto->mutable_indices());
    for (int64_t d : tensor.dims) proto->add_dims(d);
}

void valueTypeToProto(const ValueType& type, onnx::TypeProto* proto) {
    if (!type.denotation.empty()) proto->set_denotation(type.denotation);
    auto writeShape = [](const Shape& shape, onnx::TensorShapeProto* sp) {
        for (const Dim& d : shape.dims()) {
            auto* dim = sp->add_dim();
            if (d.isKnown()) dim->set_dim_value(d.size());
            else if (d.isSymbolic()) dim->set_dim_param(d.symbol());
        }
    };
    switch (type.kind) {
        case ValueType::Kind::Unknown: return;
        case ValueType::Kind::Tensor: {
            auto* tt = proto->mutable_tensor_type();
            tt->set_elem_type(static_cast<int32_t>(type.elemType));
            if (type.shape.rankKnown()) writeShape(type.shape, tt->mutable_shape());
            return;
        }
        case ValueType::Kind::SparseTensor: {
            auto* tt = proto->mutable_sparse_tensor_type();
            tt->set_elem_type(static_cast<int32_t>(type.elemType));
            if (type.shape.rankKnown()) writeShape(type.shape, tt->mutable_shape());
            return;
        }
        case ValueType::Kind::Sequence:
            if (type.element) valueTypeToProto(*type.element, proto->mutable_sequence_type()->mutable_elem_type());
            else proto->mutable_sequence_type();
            return;
        case ValueType::Kind::Optional:
            if (type.element) valueTypeToProto(*type.element, proto->mutable_optional_type()->mutable_elem_type());
            else proto->mutable_optional_type();
            return;
        case ValueType::Kind::Map: {
            auto* mt = proto->mutable_map_type();
            mt->set_key_type(static_cast<int32_t>(type.elemType));
            if (type.element) valueTypeToProto(*type.element, mt->mutable_value_type());
            return;
        }
    }
}

}  // namespace fsc
