#include "core/tensor_io.h"

#include "core/parse_int.h"

#include <fstream>
#include <regex>
#include <sstream>

#include "core/onnx_proto_convert.h"

#include <onnx/onnx-data.pb.h>

namespace fsc {

namespace {

Result<std::string> slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status(ErrorCode::NotFound, path.string() + ": cannot open file");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

Result<Tensor> readTensorFile(const std::filesystem::path& path) {
    return path.extension() == ".npy" ? readNpyFile(path) : readTensorProtoFile(path);
}

Result<Tensor> readTensorProtoFile(const std::filesystem::path& path) {
    auto bytes = slurp(path);
    if (!bytes) return bytes.status();
    onnx::TensorProto proto;
    if (!proto.ParseFromString(*bytes))
        return Status(ErrorCode::InvalidArgument, path.string() + ": not an ONNX TensorProto file");
    auto tensor = tensorFromProto(proto, nullptr);
    if (!tensor) return tensor.status().withContext(path.string());
    return tensor;
}

Result<TensorSequence> readSequenceProtoFile(const std::filesystem::path& path) {
    auto bytes = slurp(path);
    if (!bytes) return bytes.status();
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(*bytes) || proto.elem_type() != onnx::SequenceProto::TENSOR)
        return Status(ErrorCode::InvalidArgument, path.string() + ": not an ONNX SequenceProto file of tensors");
    TensorSequence sequence;
    for (onnx::TensorProto& element : *proto.mutable_tensor_values()) {
        auto tensor = tensorFromProto(element, nullptr);
        if (!tensor) return tensor.status().withContext(path.string());
        sequence.elemType = tensor->dtype();
        sequence.elements.push_back(std::move(*tensor));
    }
    return sequence;
}

Result<Tensor> readNpyFile(const std::filesystem::path& path) {
    auto bytes = slurp(path);
    if (!bytes) return bytes.status();
    const std::string& b = *bytes;
    auto fail = [&](const std::string& why) {
        return Status(ErrorCode::InvalidArgument, path.string() + ": " + why);
    };
    if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) return fail("not a .npy file");
    const int major = static_cast<unsigned char>(b[6]);
    size_t headerLen, offset;
    if (major == 1) {
        headerLen = size_t(uint8_t(b[8])) | size_t(uint8_t(b[9])) << 8;
        offset = 10;
    } else {
        if (b.size() < 12) return fail("truncated header");
        headerLen = size_t(uint8_t(b[8])) | size_t(uint8_t(b[9])) << 8 |
                    size_t(uint8_t(b[10])) << 16 | size_t(uint8_t(b[11])) << 24;
        offset = 12;
    }
    if (offset + headerLen > b.size()) return fail("truncated header");
    const std::string header = b.substr(offset, headerLen);
    std::smatch m;
    if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([<>|=])([a-z])(\\d+)'")))
        return fail("header has no dtype");
    const char order = m[1].str()[0], kind = m[2].str()[0];
    const auto parsedSize = parseInt64(m[3].str());
    if (!parsedSize || *parsedSize > 16) return fail("dtype '" + m[2].str() + m[3].str() + "' is not supported");
    const int size = int(*parsedSize);
    if (order == '>' && size > 1) return fail("big-endian arrays are not supported");
    if (std::regex_search(header, std::regex("'fortran_order'\\s*:\\s*True")))
        return fail("Fortran-order arrays are not supported");
    DType type = DType::Undefined;
    if (kind == 'f' && size == 4) type = DType::Float32;
    if (kind == 'f' && size == 8) type = DType::Float64;
    if (kind == 'f' && size == 2) type = DType::Float16;
    if (kind == 'i' && size == 1) type = DType::Int8;
    if (kind == 'i' && size == 2) type = DType::Int16;
    if (kind == 'i' && size == 4) type = DType::Int32;
    if (kind == 'i' && size == 8) type = DType::Int64;
    if (kind == 'u' && size == 1) type = DType::UInt8;
    if (kind == 'u' && size == 2) type = DType::UInt16;
    if (kind == 'u' && size == 4) type = DType::UInt32;
    if (kind == 'u' && size == 8) type = DType::UInt64;
    if (kind == 'b' && size == 1) type = DType::Bool;
    if (type == DType::Undefined) return fail("dtype '" + m[2].str() + m[3].str() + "' is not supported");
    if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
        return fail("header has no shape");
    std::vector<int64_t> dims;
    std::stringstream shape(m[1].str());
    std::string item;
    while (std::getline(shape, item, ',')) {
        const size_t first = item.find_first_not_of(' ');
        if (first == std::string::npos) continue;
        const auto dim = parseInt64(item.substr(first, item.find_last_not_of(' ') + 1 - first));
        if (!dim || *dim < 0) return fail("shape (" + m[1].str() + ") is not a list of sizes");
        dims.push_back(*dim);
    }
    auto count = checkedProduct(dims);
    if (!count) return fail("shape is too large");
    const size_t need = packedByteSize(type, *count);
    const size_t dataOffset = offset + headerLen;
    if (b.size() - dataOffset < need)
        return fail("holds " + std::to_string(b.size() - dataOffset) + " data bytes, shape needs " +
                    std::to_string(need));
    std::string data = b.substr(dataOffset, need);
    return Tensor(path.stem().string(), type, dims, makeBuffer(std::move(data)), 0, need);
}

Status writeTensorProtoFile(const std::filesystem::path& path, const Tensor& tensor) {
    onnx::TensorProto proto;
    tensorToProto(tensor, &proto);
    std::ofstream out(path, std::ios::binary);
    if (!out || !proto.SerializeToOstream(&out))
        return Status(ErrorCode::Io, path.string() + ": cannot write file");
    return Status::ok();
}

Status writeSequenceProtoFile(const std::filesystem::path& path, const std::string& name, const TensorSequence& sequence) {
    onnx::SequenceProto proto;
    proto.set_name(name);
    proto.set_elem_type(onnx::SequenceProto::TENSOR);
    for (const Tensor& element : sequence.elements) tensorToProto(element, proto.add_tensor_values());
    std::ofstream out(path, std::ios::binary);
    if (!out || !proto.SerializeToOstream(&out))
        return Status(ErrorCode::Io, path.string() + ": cannot write file");
    return Status::ok();
}

}  // namespace fsc
