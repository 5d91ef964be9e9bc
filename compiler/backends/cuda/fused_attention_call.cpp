#include "compiler/backends/cuda/fused_attention_call.h"

#include <algorithm>
#include <cmath>

#include "compiler/backends/cuda/device.h"

namespace fsc {
namespace {

constexpr int64_t kAlignmentBytes = 16;
constexpr int64_t kMaxHeadDim = 128;

Status unsupported(const std::string& why) { return Status(ErrorCode::Unsupported, "fused attention: " + why); }

bool isHalfKind(dk::ElemType t) { return t == dk::ElemType::F16 || t == dk::ElemType::BF16; }

// Elements from the first to one past the last a 4-D strided operand reaches.
int64_t spanElements(const int64_t dims[4], const int64_t strides[4]) {
    int64_t last = 0;
    for (int i = 0; i < 4; ++i) {
        if (dims[i] == 0) return 0;
        last += (dims[i] - 1) * strides[i];
    }
    return last + 1;
}

struct Operand {
    const char* name;
    const void* ptr;
    const int64_t* strides;
    int64_t dims[4];
};

std::vector<Operand> operandsOf(const FusedAttentionCall& c) {
    std::vector<Operand> ops = {{"Q", c.q, c.qStrides, {c.batch, c.heads, c.sq, c.d}},
                                {"K", c.k, c.kStrides, {c.batch, c.heads, c.skv, c.d}},
                                {"V", c.v, c.vStrides, {c.batch, c.heads, c.skv, c.dv}},
                                {"O", c.o, c.oStrides, {c.batch, c.heads, c.sq, c.dv}}};
    if (c.bias) ops.push_back({"bias", c.bias, c.biasStrides, {c.batch, c.heads, c.sq, c.skv}});
    return ops;
}

}  // namespace

Status checkFusedAttentionCall(const FusedAttentionCall& c) {
    if (!isHalfKind(c.type)) return unsupported("only float16 and bfloat16");
    if (c.batch < 1 || c.heads < 1 || c.sq < 1 || c.skv < 1 || c.d < 1 || c.dv < 1)
        return unsupported("every dim must be at least 1");
    if (c.d % 8 || c.dv % 8 || c.d > kMaxHeadDim || c.dv > kMaxHeadDim)
        return unsupported("head dims " + std::to_string(c.d) + " and " + std::to_string(c.dv) +
                           " must be multiples of 8 and at most " + std::to_string(kMaxHeadDim));
    const int64_t perAlignment = kAlignmentBytes / dk::elemBytes(c.type);
    for (const Operand& op : operandsOf(c)) {
        const std::string name = op.name;
        if (!op.ptr) return unsupported(name + " is missing");
        if (reinterpret_cast<uintptr_t>(op.ptr) % kAlignmentBytes) return unsupported(name + " is not 16-byte aligned");
        const bool bias = name == "bias";
        for (int i = 0; i < 4; ++i) {
            const int64_t s = op.strides[i];
            if (s < 0 || (s == 0 && !bias && op.dims[i] > 1)) return unsupported(name + " has a negative or zero stride");
            if (i == 3) {
                if (!bias && s != 1 && op.dims[3] > 1) return unsupported(name + "'s columns are not contiguous");
                continue;
            }
            // The bias is read as a pointwise operand: only its start needs the alignment.
            if (!bias && op.dims[i] > 1 && s % perAlignment)
                return unsupported(name + "'s stride " + std::to_string(s) + " is not 16-byte aligned");
        }
    }
    return Status::ok();
}

std::vector<DeviceExtent> fusedAttentionExtents(const FusedAttentionCall& c) {
    std::vector<DeviceExtent> extents;
    const size_t e = size_t(dk::elemBytes(c.type));
    for (const Operand& op : operandsOf(c)) {
        const bool output = op.ptr == c.o;
        extents.push_back({op.ptr, size_t(spanElements(op.dims, op.strides)) * e, output, op.name});
    }
    return extents;
}

std::optional<FusedAttentionCall> fusedAttentionCallOf(const AttentionLayout& L, dk::ElemType type, float scale,
                                                       const AttentionPointers& x, std::string* why) {
    if (!isHalfKind(type)) {
        *why = "only float16 and bfloat16 run fused";
        return std::nullopt;
    }
    enum { Q, KT, V, M, Y, kOperands };
    struct Dim {
        int64_t extent;
        int64_t stride[kOperands];
    };
    std::vector<Dim> dims;
    for (size_t i = 0; i < L.batchDims.size(); ++i) {
        if (L.batchDims[i] == 1) continue;
        Dim d{L.batchDims[i], {}};
        for (int k = 0; k < kOperands; ++k) d.stride[k] = L.batchStrides[k][i];
        if (!dims.empty()) {
            Dim& outer = dims.back();
            bool merges = true;
            for (int k = 0; k < kOperands; ++k) merges = merges && outer.stride[k] == d.extent * d.stride[k];
            if (merges) {
                outer.extent *= d.extent;
                std::copy(std::begin(d.stride), std::end(d.stride), outer.stride);
                continue;
            }
        }
        dims.push_back(d);
    }
    if (dims.size() > 2) {
        *why = "the batch dims do not fold into batch and heads";
        return std::nullopt;
    }
    while (dims.size() < 2) dims.insert(dims.begin(), Dim{1, {}});
    FusedAttentionCall c;
    c.type = type;
    c.batch = dims[0].extent;
    c.heads = dims[1].extent;
    c.sq = L.lq;
    c.skv = L.lk;
    c.d = L.d;
    c.dv = L.dv;
    c.scale = scale;
    auto matrix = [&](int k) {
        const std::vector<int64_t>& s = L.view[k].strides;
        const size_t r = s.size();
        return std::pair<int64_t, int64_t>{r >= 2 ? s[r - 2] : 0, r >= 1 ? s[r - 1] : 0};
    };
    auto fill = [&](int k, int64_t* strides, std::pair<int64_t, int64_t> rowCol) {
        strides[0] = dims[0].stride[k];
        strides[1] = dims[1].stride[k];
        strides[2] = rowCol.first;
        strides[3] = rowCol.second;
    };
    fill(Q, c.qStrides, matrix(Q));
    const auto kt = matrix(KT);  // K^T [d, skv]: K's rows are K^T's columns
    fill(KT, c.kStrides, {kt.second, kt.first});
    fill(V, c.vStrides, matrix(V));
    fill(Y, c.oStrides, matrix(Y));
    c.q = x.q;
    c.k = x.kt;
    c.v = x.v;
    c.o = x.out;
    if (x.mask) {
        c.bias = x.mask;
        fill(M, c.biasStrides, matrix(M));
    }
    return c;
}

DeviceLaunch attentionRowsLaunch(const FusedAttentionCall& c, void* out) {
    DeviceLaunch l;
    dk::AttentionParams& p = l.set<dk::AttentionParams>();
    p.q = c.q;
    p.kt = c.k;
    p.v = c.v;
    p.mask = c.bias;
    p.out = out;
    p.type = c.type;
    p.batchRank = 2;
    p.batchDims[0] = c.batch;
    p.batchDims[1] = c.heads;
    const int64_t* strides[5] = {c.qStrides, c.kStrides, c.vStrides, c.biasStrides, c.oStrides};
    for (int k = 0; k < 5; ++k) {
        p.batchStrides[k][0] = strides[k][0];
        p.batchStrides[k][1] = strides[k][1];
        p.rowStride[k] = strides[k][2];
        p.colStride[k] = strides[k][3];
    }
    // The kernel reads K^T [d, skv]: its rows step through K's columns.
    std::swap(p.rowStride[1], p.colStride[1]);
    p.lq = c.sq;
    p.lk = c.skv;
    p.d = c.d;
    p.dv = c.dv;
    p.scale = c.scale;
    p.rows = c.batch * c.heads * c.sq;
    l.extents = fusedAttentionExtents(c);
    l.extents[3].ptr = out;
    l.geometry = dk::attentionGeometry(p.rows);
    return l;
}

void referenceFusedAttention(const FusedAttentionCall& c) {
    std::vector<float> p(size_t(c.skv)), acc(size_t(c.dv));
    auto at = [](const int64_t* s, int64_t b, int64_t h, int64_t r, int64_t col) {
        return b * s[0] + h * s[1] + r * s[2] + col * s[3];
    };
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t h = 0; h < c.heads; ++h)
            for (int64_t i = 0; i < c.sq; ++i) {
                float best = -INFINITY;
                for (int64_t j = 0; j < c.skv; ++j) {
                    float s = 0.f;
                    for (int64_t t = 0; t < c.d; ++t)
                        s += dk::loadFloat(c.q, c.type, at(c.qStrides, b, h, i, t)) *
                             dk::loadFloat(c.k, c.type, at(c.kStrides, b, h, j, t));
                    s *= c.scale;
                    if (c.bias) s += dk::loadFloat(c.bias, c.type, at(c.biasStrides, b, h, i, j));
                    p[size_t(j)] = s;
                    best = std::max(best, s);
                }
                float sum = 0.f;
                for (float& s : p) {
                    s = std::exp(s - best);
                    sum += s;
                }
                std::fill(acc.begin(), acc.end(), 0.f);
                for (int64_t j = 0; j < c.skv; ++j) {
                    uint16_t bits[2];  // the probability in the operands' type, as the second product reads it
                    dk::storeFloat(bits, c.type, 0, p[size_t(j)] / sum);
                    const float w = dk::loadFloat(bits, c.type, 0);
                    for (int64_t t = 0; t < c.dv; ++t) acc[size_t(t)] += w * dk::loadFloat(c.v, c.type, at(c.vStrides, b, h, j, t));
                }
                for (int64_t t = 0; t < c.dv; ++t) dk::storeFloat(c.o, c.type, at(c.oStrides, b, h, i, t), acc[size_t(t)]);
            }
}

}  // namespace fsc
