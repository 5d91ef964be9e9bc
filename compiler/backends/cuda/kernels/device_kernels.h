#pragma once
// Host launchers of the GPU kernels (device_kernels.cu), one overload of launch() per kind of
// DeviceLaunch parameters; only the CUDA device plugin calls them. Each returns the launch's
// error (cudaGetLastError).
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

cudaError_t launch(const EwParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const BiasActParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const CopyParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const SoftmaxParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const NormParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const GatherParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const WhereParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const ReduceParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const PoolParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const ChannelAffineParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const FillParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const ResizeParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const QuantizeParams& p, LaunchGeometry g, cudaStream_t s);
// Dynamic shared memory: one float per key.
cudaError_t launch(const AttentionParams& p, LaunchGeometry g, cudaStream_t s);
cudaError_t launch(const AttentionSoftmaxParams& p, LaunchGeometry g,
                                   cudaStream_t s);

}  // namespace fsc::dk
