// The kernels of kernels/*.h on the GPU: each __global__ function is a thin shell around the
// per-element or per-lane function the CPU twin (simulated_gpu.cpp) runs too, and the
// host launcher below picks one by the launch's kind.
#include <cuda_runtime.h>

#include "compiler/backends/cuda/kernels/device_kernels.h"

namespace fsc::dk {
namespace {

__device__ __forceinline__ int64_t firstIndex() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t gridStride() { return int64_t(gridDim.x) * blockDim.x; }

__global__ void fscElementwise(const EwParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) elementwiseProgramElement(p, i);
}
// Its own kernel, so the program's register file (local memory) is not in its frame.
__global__ void fscElementwiseSingleOp(const EwParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) elementwiseSingleOpElement(p, i);
}
__global__ void fscBiasActivation(const BiasActParams p) {
    const int64_t steps = biasActSteps(p);
    for (int64_t i = firstIndex(); i < steps; i += gridStride()) biasActElement(p, i);
}
__global__ void fscStridedCopy(const CopyParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) copyElement(p, i);
}

// The butterfly the CPU twin mirrors lane by lane.
__device__ __forceinline__ float warpMax(float v) {
    for (int offset = kLanes / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}
__device__ __forceinline__ float warpSum(float v) {
    for (int offset = kLanes / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// One warp per row; a warp past the last row leaves as a whole, so the shuffles stay full.
__global__ void fscSoftmaxRows(const SoftmaxParams p) {
    const int lane = threadIdx.x % kLanes;
    const int64_t row = int64_t(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
    if (row >= p.rows) return;
    const float rowMax = warpMax(softmaxLaneMax(p, row, lane));
    const float rowSum = warpSum(softmaxLaneSum(p, row, lane, rowMax));
    softmaxLaneWrite(p, row, lane, rowMax, rowSum);
}

__global__ void fscNormRows(const NormParams p) {
    const int lane = threadIdx.x % kLanes;
    const int64_t row = int64_t(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
    if (row >= p.rows) return;
    const float sum = warpSum(normLaneSum(p, row, lane));
    const float mean = p.rms ? 0.f : sum / float(p.cols);
    float meanSquare = sum / float(p.cols);
    if (!p.rms) meanSquare = warpSum(normLaneSquares(p, row, lane, mean)) / float(p.cols);
    normLaneWrite(p, row, lane, mean, rsqrtf(meanSquare + p.epsilon));
}

__global__ void fscGather(const GatherParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) gatherElement(p, i);
}
__global__ void fscWhere(const WhereParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) whereElement(p, i);
}
__global__ void fscReduce(const ReduceParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) reduceElement(p, i);
}
__global__ void fscPool(const PoolParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) poolElement(p, i);
}
__global__ void fscChannelAffine(const ChannelAffineParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) channelAffineElement(p, i);
}

__global__ void fscFill(const FillParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) fillElement(p, i);
}
__global__ void fscResize(const ResizeParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) resizeElement(p, i);
}
__global__ void fscQuantize(const QuantizeParams p) {
    for (int64_t i = firstIndex(); i < p.count; i += gridStride()) quantizeElement(p, i);
}

// One warp per block and query row; the row's scores live in the block's shared memory.
__global__ void fscAttentionRows(const AttentionParams p) {
    extern __shared__ float scores[];
    const int lane = threadIdx.x;
    const int64_t row = blockIdx.x;
    if (row >= p.rows) return;
    const float rowMax = warpMax(attentionLaneScores(p, row, lane, scores));
    const float rowSum = warpSum(attentionLaneExp(p, lane, scores, rowMax));
    __syncwarp();  // every lane reads every key's weight next
    attentionLaneWrite(p, row, lane, scores, rowSum);
}

// Rows of at most 32 * N keys, scores in registers (attention_kernel.h's register route:
// the simulated device runs the same three steps).
template <int N>
__global__ void fscAttentionSoftmaxInRegisters(const AttentionSoftmaxParams p) {
    const int lane = threadIdx.x % kLanes;
    const int64_t row = int64_t(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
    if (row >= p.rows) return;
    float x[N];
    const float rowMax = warpMax(attentionRegistersLoad<N>(p, row, lane, x));
    const float rowSum = warpSum(attentionRegistersExp<N>(p, lane, x, rowMax));
    attentionRegistersWrite<N>(p, row, lane, x, rowSum);
}

// One warp per row of scores, as fscSoftmaxRows; the lanes' exps stay in the scores row.
__global__ void fscAttentionSoftmax(const AttentionSoftmaxParams p) {
    const int lane = threadIdx.x % kLanes;
    const int64_t row = int64_t(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
    if (row >= p.rows) return;
    const float rowMax = warpMax(attentionSoftmaxLaneMax(p, row, lane));
    const float rowSum = warpSum(attentionSoftmaxLaneExp(p, row, lane, rowMax));
    attentionSoftmaxLaneWrite(p, row, lane, rowSum);
}

}  // namespace

cudaError_t launch(const EwParams& p, LaunchGeometry g, cudaStream_t s) {
    if (p.singleOp) fscElementwiseSingleOp<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    else fscElementwise<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const BiasActParams& p, LaunchGeometry g, cudaStream_t s) {
    fscBiasActivation<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const CopyParams& p, LaunchGeometry g, cudaStream_t s) {
    fscStridedCopy<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const SoftmaxParams& p, LaunchGeometry g, cudaStream_t s) {
    fscSoftmaxRows<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const NormParams& p, LaunchGeometry g, cudaStream_t s) {
    fscNormRows<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}

cudaError_t launch(const GatherParams& p, LaunchGeometry g, cudaStream_t s) {
    fscGather<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const WhereParams& p, LaunchGeometry g, cudaStream_t s) {
    fscWhere<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const ReduceParams& p, LaunchGeometry g, cudaStream_t s) {
    fscReduce<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const PoolParams& p, LaunchGeometry g, cudaStream_t s) {
    fscPool<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const ChannelAffineParams& p, LaunchGeometry g, cudaStream_t s) {
    fscChannelAffine<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const FillParams& p, LaunchGeometry g, cudaStream_t s) {
    fscFill<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const ResizeParams& p, LaunchGeometry g, cudaStream_t s) {
    fscResize<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const QuantizeParams& p, LaunchGeometry g, cudaStream_t s) {
    fscQuantize<<<unsigned(g.grid), unsigned(g.block), 0, s>>>(p);
    return cudaGetLastError();
}
cudaError_t launch(const AttentionParams& p, LaunchGeometry g, cudaStream_t s) {
    // Rounded up to 16 bytes: nvcc reads the row's last keys as one 16-byte vector (LDS.128)
    // that may pass its end (compute-sanitizer on an H100 caught it at 6 keys).
    const size_t shared = (size_t(p.lk > 0 ? p.lk : 1) * sizeof(float) + 15) / 16 * 16;
    fscAttentionRows<<<unsigned(g.grid), unsigned(g.block), shared, s>>>(p);
    return cudaGetLastError();
}

cudaError_t launch(const AttentionSoftmaxParams& p, LaunchGeometry g, cudaStream_t s) {
    const dim3 grid(unsigned(g.grid)), block(unsigned(g.block));
    switch (attentionRegistersPerLane(p.lk)) {
        case 4: fscAttentionSoftmaxInRegisters<4><<<grid, block, 0, s>>>(p); break;
        case 8: fscAttentionSoftmaxInRegisters<8><<<grid, block, 0, s>>>(p); break;
        case 16: fscAttentionSoftmaxInRegisters<16><<<grid, block, 0, s>>>(p); break;
        case 32: fscAttentionSoftmaxInRegisters<32><<<grid, block, 0, s>>>(p); break;
        default: fscAttentionSoftmax<<<grid, block, 0, s>>>(p); break;
    }
    return cudaGetLastError();
}

}  // namespace fsc::dk
