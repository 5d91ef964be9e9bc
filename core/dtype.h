#pragma once
// Element types, numbered exactly as ONNX's TensorProto.DataType so import and export are
// a plain cast. Includes the IR 9/10 types (float8, int4) that the system libonnx predates.
#include <cstdint>
#include <optional>
#include <string_view>

namespace fsc {

enum class DType : int32_t {
    Undefined = 0,
    Float32 = 1,
    UInt8 = 2,
    Int8 = 3,
    UInt16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Float64 = 11,
    UInt32 = 12,
    UInt64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    BFloat16 = 16,
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
    UInt4 = 21,
    Int4 = 22,
};

// The ONNX number maps to a known type (Undefined is not a valid element type).
std::optional<DType> dtypeFromOnnx(int32_t onnxType);

// Short lower-case name used in text dumps and JSON: float32, float16, bfloat16, int8, ...
std::string_view dtypeName(DType type);

// Bits per element: 4 for int4/uint4, 0 for string (variable size).
int dtypeBits(DType type);

bool isFloatingPoint(DType type);

}  // namespace fsc
