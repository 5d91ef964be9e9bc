// The com.microsoft ops of decoder-only LLMs as onnxruntime-genai's model builder (and
// Optimum's ONNX Runtime exports) write them, as their contrib op documentation defines them:
//   RotaryEmbedding (input, position_ids, cos_cache, sin_cache): the first rotary_embedding_dim
//     values of each head turned by their position's angles, in halves or interleaved pairs;
//   GroupQueryAttention (query, key, value, past_key, past_value, seqlens_k,
//     total_sequence_length, cos_cache, sin_cache): causal attention of num_heads query heads
//     over kv_num_heads key/value heads, the new keys and values appended to the past ones
//     (present_key, present_value), optionally rotating Q and K first; a sliding window
//     (local_window_size), a soft cap on the scores and the smooth softmax as its attributes ask.
// (MatMulNBits, their weights, has its own file; SimplifiedLayerNormalization and its Skip
// form are in contrib_ops.cpp.)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "compiler/backends/cpu/contrib_kernels.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {
namespace {

// Turns the first `rotary` values of one head by the angles of one position (cos and sin:
// rotary / 2 values each): halves (x[i], x[i + rotary / 2]) or interleaved pairs (x[2i], x[2i + 1]).
void rotate(float* x, const float* cos, const float* sin, int64_t rotary, bool interleaved) {
    const int64_t half = rotary / 2;
    for (int64_t i = 0; i < half; ++i) {
        float& a = interleaved ? x[2 * i] : x[i];
        float& b = interleaved ? x[2 * i + 1] : x[i + half];
        const float a0 = a, b0 = b;
        a = a0 * cos[i] - b0 * sin[i];
        b = b0 * cos[i] + a0 * sin[i];
    }
}

struct RotaryCache {
    const float *cos = nullptr, *sin = nullptr;
    int64_t positions = 0, half = 0;
};

Result<RotaryCache> rotaryCache(const KernelContext& ctx, const RtTensor* cos, const RtTensor* sin, int64_t headSize) {
    if (!cos || !sin) return bad(ctx, "needs cos_cache and sin_cache");
    if (cos->dtype != DType::Float32 || sin->dtype != DType::Float32 || cos->rank() != 2 || cos->dims != sin->dims ||
        2 * cos->dims[1] > headSize)
        return bad(ctx, "cos_cache and sin_cache must be float32 (positions, rotary size / 2) alike, within the head size " +
                            std::to_string(headSize));
    return RotaryCache{cos->as<float>(), sin->as<float>(), cos->dims[0], cos->dims[1]};
}

class RotaryEmbeddingKernel : public Kernel {
public:
    RotaryEmbeddingKernel(bool interleaved, int64_t heads, int64_t rotaryDim) : m_interleaved(interleaved), m_heads(heads), m_rotaryDim(rotaryDim) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *x = ctx.input(0), *positions = ctx.input(1);
        if (!x || !positions) return bad(ctx, "needs input and position_ids");
        if (x->dtype != DType::Float32) return unsupportedType(ctx, x->dtype);
        // (batch, sequence, hidden) with num_heads, or (batch, heads, sequence, head size).
        int64_t batch, seq, heads, headSize;
        const bool bnsh = x->rank() == 4;
        if (bnsh) {
            batch = x->dims[0], heads = x->dims[1], seq = x->dims[2], headSize = x->dims[3];
        } else if (x->rank() == 3) {
            batch = x->dims[0], seq = x->dims[1], heads = m_heads;
            if (heads <= 0) {  // without num_heads the caches span a whole head
                const RtTensor* cos = ctx.input(2);
                heads = cos && cos->rank() == 2 && cos->dims[1] > 0 ? x->dims[2] / (2 * cos->dims[1]) : 0;
            }
            if (heads <= 0 || x->dims[2] % heads) return bad(ctx, "num_heads does not divide the hidden size of " + dimsString(x->dims));
            headSize = x->dims[2] / heads;
        } else {
            return bad(ctx, "input " + dimsString(x->dims) + " is neither (batch, sequence, hidden) nor (batch, heads, sequence, size)");
        }
        auto cache = rotaryCache(ctx, ctx.input(2), ctx.input(3), headSize);
        if (!cache) return cache.status();
        const int64_t rotary = m_rotaryDim > 0 ? m_rotaryDim : 2 * cache->half;
        if (rotary > 2 * cache->half) return bad(ctx, "rotary_embedding_dim is wider than the caches");
        const bool oneOffset = positions->numel() == 1;
        if (!isIndexType(*positions) || (!oneOffset && positions->numel() != batch * seq))
            return bad(ctx, "position_ids must be int64 (batch, sequence), or one starting position");
        for (int64_t i = 0; i < positions->numel(); ++i) {
            const int64_t p = indexAt(*positions, i) + (oneOffset ? seq - 1 : 0);
            if (indexAt(*positions, i) < 0 || p >= cache->positions)
                return bad(ctx, "position " + std::to_string(p) + " is outside the caches' " + std::to_string(cache->positions) + " rows");
        }
        auto y = ctx.output(0, DType::Float32, x->dims);
        if (!y) return y.status();
        std::memcpy((*y)->data, x->data, x->bytes());
        float* py = (*y)->as<float>();
        ctx.pool().parallelFor(batch * seq, 4, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t b = r / seq, s = r % seq;
                const int64_t p = oneOffset ? indexAt(*positions, 0) + s : indexAt(*positions, r);
                for (int64_t h = 0; h < heads; ++h) {
                    float* head = bnsh ? py + ((b * heads + h) * seq + s) * headSize : py + (r * heads + h) * headSize;
                    rotate(head, cache->cos + p * cache->half, cache->sin + p * cache->half, rotary, m_interleaved);
                }
            }
        });
        return Status::ok();
    }

private:
    bool m_interleaved;
    int64_t m_heads, m_rotaryDim;
};

class GroupQueryAttentionKernel : public Kernel {
public:
    // How each row of scores is shaped before it weighs V: a sliding window (Mistral's, Phi-3's;
    // -1 for none), a soft cap (Gemma 2's; 0 for none), and the smooth softmax's extra zero logit.
    struct ScoreShape {
        int64_t window;
        float softcap;
        bool smooth;
    };

    GroupQueryAttentionKernel(int64_t heads, int64_t kvHeads, float scale, bool rotary, bool interleaved, ScoreShape shape)
        : m_heads(heads), m_kvHeads(kvHeads), m_scale(scale), m_rotary(rotary), m_interleaved(interleaved), m_shape(shape) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *query = ctx.input(0), *key = ctx.input(1), *value = ctx.input(2), *pastKey = ctx.input(3),
                       *pastValue = ctx.input(4), *seqlens = ctx.input(5), *total = ctx.input(6);
        for (size_t unsupported : {size_t(9), size_t(10), size_t(11)})
            if (ctx.input(unsupported)) return bad(ctx, "position_ids, attention_bias and head_sink inputs are not supported");
        if (!query || !seqlens || !total) return bad(ctx, "needs query, seqlens_k and total_sequence_length");
        if (query->dtype != DType::Float32) return unsupportedType(ctx, query->dtype);
        if (query->rank() != 3) return bad(ctx, "query " + dimsString(query->dims) + " is not (batch, sequence, hidden)");
        const int64_t batch = query->dims[0], seq = query->dims[1];
        const bool packed = !key && !value;
        if (!packed && (!key || !value)) return bad(ctx, "needs both key and value, or neither (Q, K and V packed in query)");
        const int64_t width = query->dims[2], headSize = width / (packed ? m_heads + 2 * m_kvHeads : m_heads);
        if (headSize <= 0 || width % (packed ? m_heads + 2 * m_kvHeads : m_heads))
            return bad(ctx, "query " + dimsString(query->dims) + " does not split into the heads");
        for (const RtTensor* t : {key, value})
            if (t && (t->dtype != DType::Float32 || t->dims != std::vector<int64_t>{batch, seq, m_kvHeads * headSize}))
                return bad(ctx, "key and value must be float32 (batch, sequence, kv_num_heads x " + std::to_string(headSize) + ")");
        if (seqlens->dtype != DType::Int32 || seqlens->numel() != batch) return bad(ctx, "seqlens_k must be int32 (batch)");
        if (total->dtype != DType::Int32 || total->numel() != 1) return bad(ctx, "total_sequence_length must be one int32");
        const int64_t totalLength = total->as<int32_t>()[0];
        const bool firstPrompt = seq == totalLength;
        int64_t pastLength = 0;
        if (pastKey || pastValue) {
            if (!pastKey || !pastValue || pastKey->dims != pastValue->dims || pastKey->rank() != 4 || pastKey->dims[0] != batch ||
                pastKey->dims[1] != m_kvHeads || pastKey->dims[3] != headSize || pastKey->dtype != DType::Float32)
                return bad(ctx, "past_key and past_value must be float32 (batch, kv_num_heads, past, " + std::to_string(headSize) + ")");
            pastLength = pastKey->dims[2];
        }
        const int64_t present = std::max(totalLength, pastLength);
        std::vector<int64_t> valid(static_cast<size_t>(batch)), past(static_cast<size_t>(batch));
        for (int64_t b = 0; b < batch; ++b) {
            valid[size_t(b)] = int64_t(seqlens->as<int32_t>()[b]) + 1;
            past[size_t(b)] = firstPrompt ? 0 : valid[size_t(b)] - seq;
            if (valid[size_t(b)] > present || past[size_t(b)] < 0 || past[size_t(b)] > pastLength)
                return bad(ctx, "seqlens_k[" + std::to_string(b) + "] = " + std::to_string(valid[size_t(b)] - 1) +
                                    " does not fit " + std::to_string(seq) + " new tokens after a past of " + std::to_string(pastLength));
        }
        RotaryCache cache;
        if (m_rotary) {
            auto c = rotaryCache(ctx, ctx.input(7), ctx.input(8), headSize);
            if (!c) return c.status();
            cache = *c;
            for (int64_t b = 0; b < batch; ++b)
                if (past[size_t(b)] + seq > cache.positions) return bad(ctx, "positions beyond the rotary caches' rows");
        }
        auto out = ctx.output(0, DType::Float32, {batch, seq, m_heads * headSize});
        auto presentKey = ctx.output(1, DType::Float32, {batch, m_kvHeads, present, headSize});
        auto presentValue = ctx.output(2, DType::Float32, {batch, m_kvHeads, present, headSize});
        if (!out) return out.status();
        if (!presentKey) return presentKey.status();
        if (!presentValue) return presentValue.status();

        // Q as (batch, heads, sequence, size), rotated; the new K and V written into present
        // after each sequence's past (rotated K), the rest of present zero.
        std::vector<float> q(size_t(batch * m_heads * seq * headSize));
        float *pk = (*presentKey)->as<float>(), *pv = (*presentValue)->as<float>();
        std::memset(pk, 0, (*presentKey)->bytes());
        std::memset(pv, 0, (*presentValue)->bytes());
        const float* in = query->as<float>();
        const int64_t rowWidth = width;  // floats per (batch, token) row of query
        auto source = [&](int part, int64_t b, int64_t s, int64_t head) -> const float* {  // part 0 Q, 1 K, 2 V
            if (packed) {
                const int64_t offset = part == 0 ? head : part == 1 ? m_heads + head : m_heads + m_kvHeads + head;
                return in + (b * seq + s) * rowWidth + offset * headSize;
            }
            if (part == 0) return in + (b * seq + s) * rowWidth + head * headSize;
            return (part == 1 ? key : value)->as<float>() + (b * seq + s) * m_kvHeads * headSize + head * headSize;
        };
        for (int64_t b = 0; b < batch; ++b) {
            for (int64_t h = 0; h < m_kvHeads; ++h) {
                const size_t chunk = size_t(headSize * sizeof(float));
                const int64_t keep = past[size_t(b)];
                for (int64_t t = 0; t < keep; ++t) {
                    std::memcpy(pk + ((b * m_kvHeads + h) * present + t) * headSize, pastKey->as<float>() + ((b * m_kvHeads + h) * pastLength + t) * headSize, chunk);
                    std::memcpy(pv + ((b * m_kvHeads + h) * present + t) * headSize, pastValue->as<float>() + ((b * m_kvHeads + h) * pastLength + t) * headSize, chunk);
                }
                for (int64_t s = 0; s < seq && keep + s < present; ++s) {
                    float* k = pk + ((b * m_kvHeads + h) * present + keep + s) * headSize;
                    std::memcpy(k, source(1, b, s, h), chunk);
                    if (m_rotary) rotate(k, cache.cos + (keep + s) * cache.half, cache.sin + (keep + s) * cache.half, 2 * cache.half, m_interleaved);
                    std::memcpy(pv + ((b * m_kvHeads + h) * present + keep + s) * headSize, source(2, b, s, h), chunk);
                }
            }
            for (int64_t h = 0; h < m_heads; ++h)
                for (int64_t s = 0; s < seq; ++s) {
                    float* qs = q.data() + ((b * m_heads + h) * seq + s) * headSize;
                    std::memcpy(qs, source(0, b, s, h), size_t(headSize) * sizeof(float));
                    if (m_rotary)
                        rotate(qs, cache.cos + (past[size_t(b)] + s) * cache.half, cache.sin + (past[size_t(b)] + s) * cache.half,
                               2 * cache.half, m_interleaved);
                }
        }

        // Per (batch, head): scores over the valid keys, each query row softmaxed over its
        // causal keys (those after it weigh 0), times V; written as (batch, sequence, hidden).
        const float scale = m_scale != 0.0f ? m_scale : 1.0f / std::sqrt(float(headSize));
        const int64_t group = m_heads / m_kvHeads;
        float* py = (*out)->as<float>();
        ctx.pool().parallelFor(batch * m_heads, 1, [&](int64_t i0, int64_t i1) {
            std::vector<float> scores;
            for (int64_t i = i0; i < i1; ++i) {
                const int64_t b = i / m_heads, h = i % m_heads, kv = b * m_kvHeads + h / group;
                const int64_t keys = valid[size_t(b)];
                scores.assign(size_t(seq * keys), 0.0f);
                gemm(false, true, seq, keys, headSize, scale, q.data() + i * seq * headSize, headSize, pk + kv * present * headSize,
                     headSize, 0.0f, scores.data(), keys);
                for (int64_t s = 0; s < seq; ++s) {
                    float* row = scores.data() + s * keys;
                    // The query's own position and the window's keys before it weigh V: `window`
                    // keys in all, as ONNX Runtime 1.31 (and Mistral's mask) count them.
                    const int64_t causal = std::min(keys, past[size_t(b)] + s + 1);
                    const int64_t start = m_shape.window > 0 && causal > m_shape.window ? causal - m_shape.window : 0;
                    weigh(row + start, causal - start);
                    std::fill(row, row + start, 0.0f);
                    std::fill(row + causal, row + keys, 0.0f);
                }
                gemm(false, false, seq, headSize, keys, 1.0f, scores.data(), keys, pv + kv * present * headSize, headSize, 0.0f,
                     py + (b * seq * m_heads + h) * headSize, m_heads * headSize);
            }
        });
        return Status::ok();
    }

private:
    // A row of scaled scores into weights, as ONNX Runtime's CPU kernel shapes them: the soft
    // cap (c tanh(x / c)) first, then softmax, or the smooth softmax, whose denominator also
    // holds exp(0) (the row's maximum taken with 0).
    void weigh(float* row, int64_t n) const {
        if (m_shape.softcap > 0.0f)
            for (int64_t i = 0; i < n; ++i) row[i] = m_shape.softcap * std::tanh(row[i] / m_shape.softcap);
        if (!m_shape.smooth) {
            softmaxArray(row, row, n);
            return;
        }
        float top = 0.0f;
        for (int64_t i = 0; i < n; ++i) top = std::max(top, row[i]);
        double sum = std::exp(double(-top));
        for (int64_t i = 0; i < n; ++i) sum += row[i] = std::exp(row[i] - top);
        const float inverse = float(1.0 / sum);
        for (int64_t i = 0; i < n; ++i) row[i] *= inverse;
    }

    int64_t m_heads, m_kvHeads;
    float m_scale;
    bool m_rotary, m_interleaved;
    ScoreShape m_shape;
};

}  // namespace

KernelFactory rotaryEmbedding() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        if (init.getInt("is_packed_batching", 0)) return init.invalid("is_packed_batching is not supported");
        if (init.getFloat("scale", 1.0f) != 1.0f) return init.invalid("a scale other than 1 is not supported");
        return std::unique_ptr<Kernel>(new RotaryEmbeddingKernel(init.getInt("interleaved", 0) != 0, init.getInt("num_heads", 0),
                                                                 init.getInt("rotary_embedding_dim", 0)));
    };
}

KernelFactory groupQueryAttention() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t heads = init.getInt("num_heads", 0), kvHeads = init.getInt("kv_num_heads", 0);
        if (heads <= 0 || kvHeads <= 0 || heads % kvHeads) return init.invalid("num_heads must be a multiple of kv_num_heads, both above 0");
        const float softcap = init.getFloat("softcap", 0.0f);
        if (init.getInt("local_window_size", -1) == 0 || init.getInt("local_window_size", -1) < -1)
            return init.invalid("local_window_size must be -1 (none) or above 0");
        if (softcap < 0.0f) return init.invalid("softcap must be 0 (none) or above");
        const GroupQueryAttentionKernel::ScoreShape shape{init.getInt("local_window_size", -1), softcap,
                                                          init.getInt("smooth_softmax", 0) != 0};
        return std::unique_ptr<Kernel>(new GroupQueryAttentionKernel(heads, kvHeads, init.getFloat("scale", 0.0f),
                                                                     init.getInt("do_rotary", 0) != 0,
                                                                     init.getInt("rotary_interleaved", 0) != 0, shape));
    };
}

}  // namespace fsc::cpu
