#pragma once
// Host launchers of the GPU kernels (device_kernels.cu); only the CUDA device plugin
// calls them. Each returns the launch's error (cudaGetLastError).
#include <cuda_runtime.h>

#include "compiler/backends/cuda/kernels/attention_kernel.h"
#include "compiler/backends/cuda/kernels/copy_kernel.h"
#include "compiler/backends/cuda/kernels/elementwise_kernel.h"
#include "compiler/backends/cuda/kernels/index_kernels.h"
#include "compiler/backends/cuda/kernels/launch_geometry.h"
#include "compiler/backends/cuda/kernels/quantize_kernel.h"
#include "compiler/backends/cuda/kernels/reduce_kernels.h"
#include "compiler/backends/cuda/kernels/resize_kernel.h"
#include "compiler/backends/cuda/kernels/row_kernels.h"

namespace fsc::dk {

cudaError_t launchElementwise(const EwParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchBiasActivation(const BiasActParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchStridedCopy(const CopyParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchSoftmaxRows(const SoftmaxParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchNormRows(const NormParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchGather(const GatherParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchWhere(const WhereParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchReduce(const ReduceParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchPool(const PoolParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchChannelAffine(const ChannelAffineParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchFill(const FillParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchResize(const ResizeParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchQuantize(const QuantizeParams& p, LaunchGeometry g, cudaStream_t s);
// Dynamic shared memory: one float per key.
cudaError_t launchAttentionRows(const AttentionParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launchAttentionSoftmax(const AttentionSoftmaxParams& p, LaunchGeometry g,
                                   cudaStream_t s);

}  // namespace fsc::dk
