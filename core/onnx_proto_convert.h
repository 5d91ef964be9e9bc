#pragma once
// Conversions between ONNX protobuf messages and the IR's value types. Internal to core:
// the importer and exporter use it; nothing outside core sees protobuf.
#include <onnx/onnx_pb.h>

#include "core/external_data.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace fsc {

// ONNX's shape inference runs on messages whose tensors of at least this size have no
// bytes (they are moved into the IR on import): smaller ones stay so it can still read
// the constants it needs (Reshape targets, Slice bounds).
inline constexpr size_t kInferenceDatalessBytes = 4096;

// Reads a TensorProto. Large raw data is moved out of the message rather than copied;
// external data is mapped through `externalData` (null: external data is an error).
Result<Tensor> tensorFromProto(onnx::TensorProto& proto, ExternalDataResolver* externalData);
Result<SparseTensor> sparseTensorFromProto(onnx::SparseTensorProto& proto,
                                           ExternalDataResolver* externalData);
Result<ValueType> valueTypeFromProto(const onnx::TypeProto& proto);

void tensorToProto(const Tensor& tensor, onnx::TensorProto* proto);
void sparseTensorToProto(const SparseTensor& tensor, onnx::SparseTensorProto* proto);
void valueTypeToProto(const ValueType& type, onnx::TypeProto* proto);

}  // namespace fsc
