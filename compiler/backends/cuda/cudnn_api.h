#pragma once
// The cuDNN 9 entry points the device plugin uses, listed once: the struct holding them and
// the dlsym calls that fill it both expand this list. Part of the CUDA device plugin only.
#include <cudnn.h>

#include "compiler/backends/cuda/cudnn_convolution.h"

#define FSC_CUDNN_ENTRY_POINTS(X)                  \
    X(cudnnCreate)                                 \
    X(cudnnDestroy)                                \
    X(cudnnSetStream)                              \
    X(cudnnGetErrorString)                         \
    X(cudnnGetVersion)                             \
    X(cudnnCreateTensorDescriptor)                 \
    X(cudnnDestroyTensorDescriptor)                \
    X(cudnnSetTensorNdDescriptor)                  \
    X(cudnnCreateFilterDescriptor)                 \
    X(cudnnDestroyFilterDescriptor)                \
    X(cudnnSetFilterNdDescriptor)                  \
    X(cudnnCreateConvolutionDescriptor)            \
    X(cudnnDestroyConvolutionDescriptor)           \
    X(cudnnSetConvolutionNdDescriptor)             \
    X(cudnnSetConvolutionGroupCount)               \
    X(cudnnSetConvolutionMathType)                 \
    X(cudnnGetConvolutionForwardAlgorithm_v7)      \
    X(cudnnGetConvolutionForwardWorkspaceSize)     \
    X(cudnnConvolutionForward)                     \
    X(cudnnBackendCreateDescriptor)                \
    X(cudnnBackendDestroyDescriptor)               \
    X(cudnnBackendSetAttribute)                    \
    X(cudnnBackendGetAttribute)                    \
    X(cudnnBackendFinalize)                        \
    X(cudnnBackendExecute)

namespace fsc {

struct CudnnConvolution::Api {
#define FSC_DNN_FN(name) decltype(&::name) name = nullptr;
    FSC_CUDNN_ENTRY_POINTS(FSC_DNN_FN)
#undef FSC_DNN_FN
};

}  // namespace fsc
