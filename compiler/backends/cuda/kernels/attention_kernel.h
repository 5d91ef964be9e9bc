#pragma once
// ai.fusescope.Attention, one warp per query row (docs/fused_ops.md): lanes take the keys
// l, l + 32, ... to compute the row's scores into a scratch row (shared memory on the GPU),
// the row's max and sum meet in the warp's butterflies, then lanes take the output columns
// and sum probabilities times V. The Lq x Lk scores never exist as a whole; Q, K^T, V, the
// mask and the output are read and written through their strides, so the head transposes
// cost no copy. The CPU twin runs the lane functions for 32 lanes with the same scratch row.
#include "compiler/backends/cuda/kernels/hd.h"

namespace fsc::dk {

inline constexpr int kAttentionMaxBatchRank = 6;
inline constexpr int64_t kAttentionMaxKeys = 12288;  // 48 KiB of float scores per warp

struct AttentionParams {
    static constexpr const char* kName = "fsc_attention_rows";  // the kernel, as profilers name it
    const void* q;
    const void* kt;
    const void* v;
    const void* mask;  // null: no mask; same type as q
    void* out;
    ElemType type;
    int batchRank;
    int64_t batchDims[kAttentionMaxBatchRank];
    int64_t batchStrides[5][kAttentionMaxBatchRank];  // q, kt, v, mask, out
    // Row and column strides of each operand's matrix: q [Lq, D], kt [D, Lk], v [Lk, Dv],
    // mask [Lq, Lk], out [Lq, Dv].
    int64_t rowStride[5], colStride[5];
    int64_t lq, lk, d, dv;
    float scale;
    int64_t rows;  // batch count * lq
};

// Element offsets of a query row's batch into each operand, and the row's index in Lq.
FSC_HD int64_t attentionOffsets(const AttentionParams& p, int64_t row, int64_t off[5]) {
    int64_t b = row / p.lq;
    for (int k = 0; k < 5; ++k) off[k] = 0;
    for (int i = p.batchRank - 1; i >= 0; --i) {
        const int64_t idx = b % p.batchDims[i];
        b /= p.batchDims[i];
        for (int k = 0; k < 5; ++k) off[k] += idx * p.batchStrides[k][i];
    }
    return row % p.lq;
}

// Scores of this lane's keys into scores[]; returns the lane's max.
FSC_HD float attentionLaneScores(const AttentionParams& p, int64_t row, int lane, float* scores) {
    int64_t off[5];
    const int64_t i = attentionOffsets(p, row, off);
    float best = -INFINITY;
    for (int64_t key = lane; key < p.lk; key += 32) {
        float s = 0.f;
        for (int64_t c = 0; c < p.d; ++c)
            s += loadFloat(p.q, p.type, off[0] + i * p.rowStride[0] + c * p.colStride[0]) *
                 loadFloat(p.kt, p.type, off[1] + c * p.rowStride[1] + key * p.colStride[1]);
        s *= p.scale;
        if (p.mask) s += loadFloat(p.mask, p.type, off[3] + i * p.rowStride[3] + key * p.colStride[3]);
        scores[key] = s;
        best = fmaxf(best, s);
    }
    return best;
}

// exp(score - max) in place for this lane's keys; returns the lane's sum.
FSC_HD float attentionLaneExp(const AttentionParams& p, int lane, float* scores, float rowMax) {
    float sum = 0.f;
    for (int64_t key = lane; key < p.lk; key += 32) {
        scores[key] = expf(scores[key] - rowMax);
        sum += scores[key];
    }
    return sum;
}

// This lane's output columns: the weights (every lane's) times V, over the row's sum.
FSC_HD void attentionLaneWrite(const AttentionParams& p, int64_t row, int lane, const float* scores, float rowSum) {
    int64_t off[5];
    const int64_t i = attentionOffsets(p, row, off);
    const float inv = 1.f / rowSum;
    for (int64_t c = lane; c < p.dv; c += 32) {
        float acc = 0.f;
        for (int64_t key = 0; key < p.lk; ++key)
            acc += scores[key] * loadFloat(p.v, p.type, off[2] + key * p.rowStride[2] + c * p.colStride[2]);
        storeFloat(p.out, p.type, off[4] + i * p.rowStride[4] + c * p.colStride[4], acc * inv);
    }
}

// The softmax between the two GEMMs of the cuBLAS route (attention_gemms.h): one warp per
// row of float32 scores S (scale already applied by the first GEMM) adds the row's mask,
// takes its max and sum, and writes the probabilities P in the operands' type. P may be S
// itself (float32): each lane reads and writes only its own columns.
struct AttentionSoftmaxParams {
    static constexpr const char* kName = "fsc_attention_softmax";  // the kernel, as profilers name it
    float* scores;  // rows x lk, rows `ld` apart
    void* probs;    // rows x lk, rows `ld` apart, `type`
    ElemType type;
    const void* mask;  // as AttentionParams' mask, or null
    int batchRank;
    int64_t batchDims[kAttentionMaxBatchRank];
    int64_t maskBatchStrides[kAttentionMaxBatchRank];
    int64_t maskRowStride, maskColStride;
    int64_t lq, lk, ld;
    int64_t firstRow;  // the index of scores' row 0 among all batch * lq query rows
    int64_t rows;
};

// The mask's element offset for a row of the scores (its query row and batch index).
FSC_HD int64_t attentionMaskOffset(const AttentionSoftmaxParams& p, int64_t row) {
    const int64_t all = p.firstRow + row;
    int64_t b = all / p.lq, off = (all % p.lq) * p.maskRowStride;
    for (int i = p.batchRank - 1; i >= 0; --i) {
        off += (b % p.batchDims[i]) * p.maskBatchStrides[i];
        b /= p.batchDims[i];
    }
    return off;
}

// Adds the mask to this lane's scores in place; returns the lane's max.
FSC_HD float attentionSoftmaxLaneMax(const AttentionSoftmaxParams& p, int64_t row, int lane) {
    float* s = p.scores + row * p.ld;
    const int64_t maskRow = p.mask ? attentionMaskOffset(p, row) : 0;
    float best = -INFINITY;
    for (int64_t key = lane; key < p.lk; key += 32) {
        float x = s[key];
        if (p.mask) {
            x += loadFloat(p.mask, p.type, maskRow + key * p.maskColStride);
            s[key] = x;
        }
        best = fmaxf(best, x);
    }
    return best;
}

// exp(score - max) in place for this lane's keys; returns the lane's sum.
FSC_HD float attentionSoftmaxLaneExp(const AttentionSoftmaxParams& p, int64_t row, int lane, float rowMax) {
    float* s = p.scores + row * p.ld;
    float sum = 0.f;
    for (int64_t key = lane; key < p.lk; key += 32) {
        s[key] = expf(s[key] - rowMax);
        sum += s[key];
    }
    return sum;
}

FSC_HD void attentionSoftmaxLaneWrite(const AttentionSoftmaxParams& p, int64_t row, int lane, float rowSum) {
    const float* s = p.scores + row * p.ld;
    const float inv = 1.f / rowSum;
    for (int64_t key = lane; key < p.lk; key += 32) storeFloat(p.probs, p.type, row * p.ld + key, s[key] * inv);
}

// The register route for rows of at most 32 * N keys: each lane keeps its N scores in
// registers, so the row is read once and P written once (the lane functions above read S
// three times and write it once; on an H100 that was ViT's largest attention kernel). The
// GPU kernel and the simulated device both run these three steps, with the warp's max and
// sum between them.
// The N a launch picks for `lk` keys, or 0 where the row is longer: the lane functions run.
FSC_HD int attentionRegistersPerLane(int64_t lk) {
    for (int n = 4; n <= 32; n *= 2)
        if (lk <= int64_t(n) * 32) return n;
    return 0;
}

// This lane's keys (masked) into x; returns the lane's max.
template <int N>
FSC_HD float attentionRegistersLoad(const AttentionSoftmaxParams& p, int64_t row, int lane, float (&x)[N]) {
    const float* s = p.scores + row * p.ld;
    const int64_t maskRow = p.mask ? attentionMaskOffset(p, row) : 0;
    float best = -INFINITY;
    FSC_UNROLL
    for (int j = 0; j < N; ++j) {
        const int64_t key = lane + int64_t(j) * 32;
        x[j] = -INFINITY;
        if (key < p.lk) {
            x[j] = s[key];
            if (p.mask) x[j] += loadFloat(p.mask, p.type, maskRow + key * p.maskColStride);
            best = fmaxf(best, x[j]);
        }
    }
    return best;
}

// exp(x - max) in place; returns the lane's sum.
template <int N>
FSC_HD float attentionRegistersExp(const AttentionSoftmaxParams& p, int lane, float (&x)[N], float rowMax) {
    float sum = 0.f;
    FSC_UNROLL
    for (int j = 0; j < N; ++j) {
        if (lane + int64_t(j) * 32 < p.lk) {
            x[j] = expf(x[j] - rowMax);
            sum += x[j];
        }
    }
    return sum;
}

template <int N>
FSC_HD void attentionRegistersWrite(const AttentionSoftmaxParams& p, int64_t row, int lane, const float (&x)[N],
                                    float rowSum) {
    const float inv = 1.f / rowSum;
    FSC_UNROLL
    for (int j = 0; j < N; ++j) {
        const int64_t key = lane + int64_t(j) * 32;
        if (key < p.lk) storeFloat(p.probs, p.type, row * p.ld + key, x[j] * inv);
    }
}

}  // namespace fsc::dk
