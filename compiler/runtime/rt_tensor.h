#pragma once
// A tensor at run time: dtype, concrete dims and a pointer into storage the tensor may or
// may not own (an arena slot, a heap block, or an initializer's bytes). Strings are kept
// in a side vector, a sequence's elements in another; most kernels never see either.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace fsc {

struct RtTensor {
    DType dtype = DType::Undefined;
    std::vector<int64_t> dims;
    void* data = nullptr;
    std::shared_ptr<void> owner;  // keeps `data` alive; empty for arena slots
    std::shared_ptr<std::vector<std::string>> strings;  // dtype String only
    // A sequence value (ONNX's seq(tensor)): its elements, each with storage of its own and
    // never written again; `dtype` is theirs, and the sequence itself has no data.
    std::shared_ptr<const std::vector<RtTensor>> sequence;
    // `data` is a device address (CUDA backend): the host reads it only through the device.
    bool onDevice = false;

    bool defined() const { return dtype != DType::Undefined || sequence; }
    bool isSequence() const { return sequence != nullptr; }
    int64_t numel() const;
    size_t bytes() const;
    size_t rank() const { return dims.size(); }
    template <typename T>
    T* as() { return static_cast<T*>(data); }
    template <typename T>
    const T* as() const { return static_cast<const T*>(data); }
    std::string typeString() const;  // "float32[1,3,224,224]"
};

// A sequence of these elements (taken as they are: give each storage of its own first).
RtTensor makeSequence(DType elemType, std::vector<RtTensor> elements);
// A tensor with its own zero-initialised heap storage (64-byte aligned). Throws
// OutOfMemory when there is none to be had.
RtTensor allocateTensor(DType dtype, std::vector<int64_t> dims);
// The same, its contents left as they come: for a kernel's output, which the kernel writes
// whole, as it does an output placed in the reused arena (Mask R-CNN's paste loop allocates a
// growing [n, 320, 320] each turn: zeroing it first cost a pass over it and its page faults).
RtTensor allocateOutputTensor(DType dtype, std::vector<int64_t> dims);
// Zero-copy view of a constant tensor (keeps its buffer alive).
Result<RtTensor> tensorFromConstant(const Tensor& constant);
// Deep copy into a core Tensor (for writing files and comparisons).
Tensor tensorToConstant(const RtTensor& tensor, const std::string& name);
// Copy with its own storage.
RtTensor cloneTensor(const RtTensor& tensor);
// Element i read as double / int64 whatever the dtype (for small shape tensors and stats).
double elementAsDouble(const RtTensor& tensor, int64_t i);
int64_t elementAsInt(const RtTensor& tensor, int64_t i);
// All elements of an integer tensor (shape operands such as Reshape's shape).
Result<std::vector<int64_t>> readInts(const RtTensor& tensor, const std::string& what);

}  // namespace fsc
