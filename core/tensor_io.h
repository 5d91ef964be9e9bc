#pragma once
// Tensors in files: ONNX TensorProto (`.pb`, the layout of ONNX's own test data) and
// NumPy `.npy` (little-endian, C order). Errors name the file and the cause.
#include <filesystem>

#include "core/status.h"
#include "core/tensor.h"

namespace fsc {

// Chooses the format by extension: `.npy` is NumPy, anything else a TensorProto.
Result<Tensor> readTensorFile(const std::filesystem::path& path);
Result<Tensor> readTensorProtoFile(const std::filesystem::path& path);
// A SequenceProto file of tensors (ONNX's test data for sequence inputs and outputs).
struct TensorSequence {
    DType elemType = DType::Undefined;
    std::vector<Tensor> elements;
};
Result<TensorSequence> readSequenceProtoFile(const std::filesystem::path& path);
Result<Tensor> readNpyFile(const std::filesystem::path& path);
Status writeTensorProtoFile(const std::filesystem::path& path, const Tensor& tensor);
// A sequence output as ONNX stores one (a SequenceProto of tensors).
Status writeSequenceProtoFile(const std::filesystem::path& path, const std::string& name, const TensorSequence& sequence);

}  // namespace fsc
