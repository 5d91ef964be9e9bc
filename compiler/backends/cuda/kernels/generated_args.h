#pragma once
// The arguments of a generated FusedElementwise kernel (elementwise_codegen.h's signature:
// the input pointers, the output, an FscBroadcast sized by the input count, the count),
// filled from the EwParams the CPU twin reads. GeneratedBroadcast<N> repeats the generated
// struct field for field, so the host compiler lays it out as NVRTC does (the same ABI);
// tst_cuda_codegen pins the offsets.
#include <cstddef>
#include <cstring>

#include "compiler/backends/cuda/kernels/elementwise_kernel.h"

namespace fsc::dk {

template <int N>
struct GeneratedBroadcast {
    int rank;
    long long dims[kMaxRank];
    long long strides[N][kMaxRank];
    int sameAsOutput[N];
    int allSameAsOutput;
};

struct GeneratedArgs {
    const void* in[kEwMaxInputs] = {};
    void* out = nullptr;
    alignas(8) unsigned char broadcast[sizeof(GeneratedBroadcast<kEwMaxInputs>)] = {};
    size_t broadcastBytes = 0;
    long long count = 0;
    int inputs = 0;
    // cudaLaunchKernel's `args`: one pointer per parameter, into this object.
    int pointers(void** out) {
        int n = 0;
        for (int i = 0; i < inputs; ++i) out[n++] = &in[i];
        out[n++] = &this->out;
        out[n++] = broadcast;
        out[n++] = &count;
        return n;
    }
};

template <int N>
void fillBroadcast(const EwParams& p, GeneratedArgs& args) {
    GeneratedBroadcast<N> b{};
    b.rank = p.rank;
    int all = 1;
    for (int d = 0; d < p.rank; ++d) b.dims[d] = p.dims[d];
    for (int i = 0; i < N; ++i) {
        for (int d = 0; d < p.rank; ++d) b.strides[i][d] = p.strides[i][d];
        b.sameAsOutput[i] = p.sameAsOutput[i] ? 1 : 0;
        all &= b.sameAsOutput[i];
    }
    b.allSameAsOutput = all;
    std::memcpy(args.broadcast, &b, sizeof b);
    args.broadcastBytes = sizeof b;
}

// Inputs 1 to kEwMaxInputs; other counts leave broadcastBytes 0 (the caller refuses them).
inline GeneratedArgs generatedArgs(const EwParams& p) {
    GeneratedArgs args;
    args.inputs = p.inputs;
    for (int i = 0; i < p.inputs && i < kEwMaxInputs; ++i) args.in[i] = p.in[i];
    args.out = p.out;
    args.count = p.count;
    switch (p.inputs) {
        case 1: fillBroadcast<1>(p, args); break;
        case 2: fillBroadcast<2>(p, args); break;
        case 3: fillBroadcast<3>(p, args); break;
        case 4: fillBroadcast<4>(p, args); break;
        case 5: fillBroadcast<5>(p, args); break;
        case 6: fillBroadcast<6>(p, args); break;
        case 7: fillBroadcast<7>(p, args); break;
        case 8: fillBroadcast<8>(p, args); break;
        default: break;
    }
    return args;
}

}  // namespace fsc::dk
