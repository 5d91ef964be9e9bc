#pragma once
// Helpers shared by the CPU kernels: dtype dispatch, broadcasting, axis handling.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "compiler/runtime/kernel.h"
#include "compiler/runtime/kernel_registry.h"

namespace fsc::cpu {

inline Status unsupportedType(const KernelContext& ctx, DType t) {
    return Status(ErrorCode::Unsupported,
                  ctx.where() + ": dtype " + std::string(dtypeName(t)) + " is not supported");
}
inline Status bad(const KernelContext& ctx, const std::string& message) {
    return Status(ErrorCode::InvalidModel, ctx.where() + ": " + message);
}

// out[i] = op(in[i]). Input and output never overlap, and saying so lets the compiler
// vectorize the loop.
template <typename T, typename U, typename Op>
void mapElements(const T* __restrict in, U* __restrict out, int64_t n, Op op) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(in[i]);
}

// Calls f(T{}) with T the C++ type of `t`. Returns Unsupported for other types.
template <typename F>
Status dispatchFloat(const KernelContext& ctx, DType t, F&& f) {
    switch (t) {
        case DType::Float32: return f(float{});
        case DType::Float64: return f(double{});
        default: return unsupportedType(ctx, t);
    }
}
template <typename F>
Status dispatchNumeric(const KernelContext& ctx, DType t, F&& f) {
    switch (t) {
        case DType::Float32: return f(float{});
        case DType::Float64: return f(double{});
        case DType::Int8: return f(int8_t{});
        case DType::UInt8: return f(uint8_t{});
        case DType::Int16: return f(int16_t{});
        case DType::UInt16: return f(uint16_t{});
        case DType::Int32: return f(int32_t{});
        case DType::UInt32: return f(uint32_t{});
        case DType::Int64: return f(int64_t{});
        case DType::UInt64: return f(uint64_t{});
        default: return unsupportedType(ctx, t);
    }
}
template <typename F>
Status dispatchAll(const KernelContext& ctx, DType t, F&& f) {
    if (t == DType::Bool) return f(bool{});
    return dispatchNumeric(ctx, t, std::forward<F>(f));
}
// Data movement: by element size only (any fixed-size dtype, strings excluded).
template <typename F>
Status dispatchBySize(const KernelContext& ctx, DType t, F&& f) {
    switch (dtypeBits(t)) {
        case 8: return f(uint8_t{});
        case 16: return f(uint16_t{});
        case 32: return f(uint32_t{});
        case 64: return f(uint64_t{});
        default: return unsupportedType(ctx, t);
    }
}

inline int64_t product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX) {
    int64_t n = 1;
    for (size_t i = from; i < std::min(to, dims.size()); ++i) n *= dims[i];
    return n;
}

// Normalises a possibly negative axis into [0, rank).
inline Result<int64_t> normAxis(const KernelContext& ctx, int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
        return bad(ctx, "axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

std::string dimsString(const std::vector<int64_t>& dims);

// Numpy broadcasting of several shapes.
Result<std::vector<int64_t>> broadcastShapes(const KernelContext& ctx,
                                             const std::vector<const std::vector<int64_t>*>& shapes);

// Walks the output of a broadcast in rows: fn(outOffset, inOffsets[], count, innerStrides[])
// where inner strides are 0 or 1. Adjacent dims that are laid out alike are merged so rows
// are as long as possible. Rows are spread over the pool.
struct BroadcastRows {
    std::vector<int64_t> outerDims;                 // merged dims without the row dim
    std::vector<std::vector<int64_t>> outerStrides;  // per input
    int64_t rowLength = 1;
    std::vector<int64_t> rowStride;  // per input: 0 or 1
    int64_t rows = 1;
};
BroadcastRows planBroadcast(const std::vector<int64_t>& out,
                            const std::vector<const std::vector<int64_t>*>& ins);
// Offsets of row r for every input.
void rowOffsets(const BroadcastRows& plan, int64_t row, int64_t* offsets);

template <typename Fn>
void forEachRow(ThreadPool& pool, const BroadcastRows& plan, Fn&& fn) {
    const size_t n = plan.outerStrides.size();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, plan.rowLength));
    pool.parallelFor(plan.rows, grain, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> offsets(n);
        for (int64_t r = begin; r < end; ++r) {
            rowOffsets(plan, r, offsets.data());
            fn(r * plan.rowLength, offsets.data());
        }
    });
}

// Where a kernel body puts its output: the context's slot or a temporary.
using OutputAlloc = std::function<Result<RtTensor*>(DType, std::vector<int64_t>)>;

// Float/double products into fresh tensors, for the quantized kernels (which compute
// integer products exactly in double).
Result<RtTensor> matMulToNew(KernelContext& ctx, const RtTensor& a, const RtTensor& b);
// MatMul's product (numpy's broadcasting, the float GEMM) into the kernel's output 0.
Result<RtTensor*> matMulToOutput(KernelContext& ctx, const RtTensor& a, const RtTensor& b);

// Strides of a contiguous tensor.
std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims);

}  // namespace fsc::cpu
