// The two ops ONNX Runtime's transformers optimizer (and Optimum's optimization levels 2 to 4)
// writes into a BERT-family model, as its contrib op documentation defines them:
//   Attention (input, weights, bias, mask_index, past, attention_bias): self-attention with
//     the Q, K and V projections packed in one weight, heads split and merged;
//   EmbedLayerNormalization (input_ids, segment_ids, word, position and segment embeddings,
//     gamma, beta, mask, position_ids): the three lookups summed and normalized, and the
//     mask's count of tokens per sequence (Attention's 1-D mask_index).
// O1's lower-contrib-ops writes Attention as a product and our fused attention; these
// kernels run it at O0, as the oracle the lowering is checked against. MultiHeadAttention, its
// form with Q, K and V given apart (encoder-decoder and diffusion models), shares the masks
// and the fused attention's loop.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/backends/cpu/contrib_kernels.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/fused_kernels.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/runtime/thread_pool.h"

namespace fsc::cpu {
namespace {

// How the scores are masked, as ONNX Runtime's attention ops read their mask inputs.
struct MaskSpec {
    int64_t batch, heads, seq, keys;
    float filter;
    bool unidirectional;
};

// What is added to the scores, (batch, 1, sequence, keys) or with attention_bias
// (batch, heads, sequence, keys); empty when nothing is. The mask (mask_index, key_padding_mask):
//   (batch): keys at and after each sequence's end are masked;
//   (2 x batch): ends, then starts; keys before the start are masked too;
//   (batch, keys) or (batch, sequence, keys): where the mask is 0 or less.
// A masked score gets mask_filter_value added; unidirectional masks the keys after each
// query (the queries being the last `seq` of the keys).
Result<std::vector<float>> additiveMask(const KernelContext& ctx, const RtTensor* m, const RtTensor* attentionBias,
                                        const MaskSpec& spec, std::vector<int64_t>& dims) {
    const int64_t batch = spec.batch, seq = spec.seq, keys = spec.keys, heads = spec.heads;
    std::vector<float> mask;
    if (!m && !spec.unidirectional && !attentionBias) return mask;
    mask.assign(size_t(batch * seq * keys), 0.0f);
    if (m) {
        if (!isIndexType(*m)) return bad(ctx, "the mask must be int32");
        const auto& d = m->dims;
        const bool ends = d.size() == 1 && d[0] == batch, startsToo = d.size() == 1 && d[0] == 2 * batch;
        const bool keys2d = d.size() == 2 && d[0] == batch && d[1] == keys;
        const bool full3d = d.size() == 3 && d[0] == batch && d[1] == seq && d[2] == keys;
        if (!ends && !startsToo && !keys2d && !full3d)
            return bad(ctx, "the mask " + dimsString(d) + " is none of (batch), (2 x batch), (batch, keys) and "
                                "(batch, sequence, keys) for batch " + std::to_string(batch) + ", sequence " +
                                std::to_string(seq) + " and " + std::to_string(keys) + " keys");
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t s = 0; s < seq; ++s) {
                float* row = mask.data() + (b * seq + s) * keys;
                for (int64_t k = 0; k < keys; ++k) {
                    bool masked;
                    if (ends || startsToo)
                        masked = k >= indexAt(*m, b) || (startsToo && k < indexAt(*m, batch + b));
                    else
                        masked = indexAt(*m, full3d ? (b * seq + s) * keys + k : b * keys + k) <= 0;
                    if (masked) row[k] = spec.filter;
                }
            }
    }
    if (spec.unidirectional)
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t s = 0; s < seq; ++s)
                for (int64_t k = s + 1 + (keys - seq); k < keys; ++k) mask[size_t((b * seq + s) * keys + k)] += spec.filter;
    dims = {batch, 1, seq, keys};
    if (!attentionBias) return mask;
    const auto& d = attentionBias->dims;
    if (attentionBias->dtype != DType::Float32 || d.size() != 4 || (d[0] != 1 && d[0] != batch) || (d[1] != 1 && d[1] != heads) ||
        d[2] != seq || d[3] != keys)
        return bad(ctx, "attention_bias " + dimsString(d) + " is not float32 (batch or 1, heads or 1, sequence, keys)");
    std::vector<float> full(size_t(batch * heads * seq * keys));
    const float* pb = attentionBias->as<float>();
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < heads; ++h) {
            const float* from = pb + ((d[0] == 1 ? 0 : b) * d[1] + (d[1] == 1 ? 0 : h)) * seq * keys;
            float* to = full.data() + (b * heads + h) * seq * keys;
            addArrays(mask.data() + b * seq * keys, from, to, seq * keys);
        }
    dims = {batch, heads, seq, keys};
    return full;
}

class AttentionKernel : public Kernel {
public:
    AttentionKernel(int64_t heads, std::vector<int64_t> hiddenSizes, bool unidirectional, float filter, float scale)
        : m_heads(heads), m_hiddenSizes(std::move(hiddenSizes)), m_unidirectional(unidirectional), m_filter(filter),
          m_scale(scale) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *x = ctx.input(0), *w = ctx.input(1), *bias = ctx.input(2), *maskIndex = ctx.input(3),
                       *past = ctx.input(4), *attentionBias = ctx.input(5);
        if (!x || !w) return bad(ctx, "needs input and weights");
        if (past && past->numel() > 0) return bad(ctx, "a past key/value state (input 4) is not supported");
        if (ctx.outputWanted(1)) return bad(ctx, "the present key/value output is not supported");
        if (x->dtype != DType::Float32 || w->dtype != DType::Float32 || (bias && bias->dtype != DType::Float32))
            return unsupportedType(ctx, x->dtype != DType::Float32 ? x->dtype : w->dtype);
        if (x->rank() != 3 || w->rank() != 2 || w->dims[0] != x->dims[2])
            return bad(ctx, "input " + dimsString(x->dims) + " and weights " + dimsString(w->dims) +
                                " are not (batch, sequence, hidden) and (hidden, 3 x hidden)");
        const int64_t batch = x->dims[0], seq = x->dims[1], hidden = x->dims[2], packed = w->dims[1];
        int64_t hq = packed / 3, hk = hq, hv = packed - 2 * hq;
        if (!m_hiddenSizes.empty()) {
            if (m_hiddenSizes.size() != 3) return bad(ctx, "qkv_hidden_sizes must hold three sizes");
            hq = m_hiddenSizes[0], hk = m_hiddenSizes[1], hv = m_hiddenSizes[2];
        }
        if (hq != hk || hq + hk + hv != packed || hq % m_heads || hv % m_heads || hq <= 0)
            return bad(ctx, "weights " + dimsString(w->dims) + " do not split into Q, K and V of " +
                                std::to_string(m_heads) + " heads each");
        if (bias && bias->numel() != packed) return bad(ctx, "bias needs " + std::to_string(packed) + " values");
        const int64_t headSize = hq / m_heads, vHeadSize = hv / m_heads;
        auto out = ctx.output(0, DType::Float32, {batch, seq, hv});
        if (!out) return out.status();
        if ((*out)->numel() == 0) return Status::ok();

        // Q, K and V each in its own (batch, sequence, heads, head size) buffer, straight out of
        // the product with its column slice of the weights.
        const int64_t rows = batch * seq, width[3] = {hq, hk, hv};
        std::vector<float> qkv[3];
        int64_t column = 0;
        for (int i = 0; i < 3; ++i) {
            qkv[i].resize(size_t(rows * width[i]));
            gemm(false, false, rows, width[i], hidden, 1.0f, x->as<float>(), hidden, w->as<float>() + column, packed, 0.0f,
                 qkv[i].data(), width[i]);
            if (bias) {
                const float* b = bias->as<float>() + column;
                ctx.pool().parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
                    for (int64_t r = r0; r < r1; ++r) addArrays(qkv[i].data() + r * width[i], b, qkv[i].data() + r * width[i], width[i]);
                });
            }
            column += width[i];
        }

        std::vector<int64_t> maskDims;
        auto mask = additiveMask(ctx, maskIndex, attentionBias, {batch, m_heads, seq, seq, m_filter, m_unidirectional}, maskDims);
        if (!mask) return mask.status();
        auto layout = attentionLayout({batch, seq, m_heads, headSize}, {batch, seq, m_heads, headSize},
                                      {batch, seq, m_heads, vHeadSize}, mask->empty() ? nullptr : &maskDims,
                                      {{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}});
        if (!layout) return layout.status().withContext(ctx.where());
        const float scale = m_scale != 0.0f ? m_scale : 1.0f / std::sqrt(float(headSize));
        attentionFloat(ctx.pool(), qkv[0].data(), qkv[1].data(), qkv[2].data(), mask->empty() ? nullptr : mask->data(),
                       (*out)->as<float>(), *layout, scale);
        return Status::ok();
    }

private:
    int64_t m_heads;
    std::vector<int64_t> m_hiddenSizes;
    bool m_unidirectional;
    float m_filter, m_scale;
};

// MultiHeadAttention (query, key, value, bias, key_padding_mask, attention_bias): num_heads
// heads of Q over K and V given apart (cross-attention too), each (batch, length, hidden) with
// the bias of all three packed in one vector, or K and V already split into heads as (batch,
// heads, keys, size) without a bias. What ONNX Runtime's optimizer writes for encoder-decoder
// and diffusion models.
class MultiHeadAttentionKernel : public Kernel {
public:
    MultiHeadAttentionKernel(int64_t heads, bool unidirectional, float filter, float scale)
        : m_heads(heads), m_unidirectional(unidirectional), m_filter(filter), m_scale(scale) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *bias = ctx.input(3), *mask = ctx.input(4),
                       *attentionBias = ctx.input(5);
        for (size_t i : {size_t(6), size_t(7)})
            if (ctx.input(i) && ctx.input(i)->numel() > 0) return bad(ctx, "past_key and past_value are not supported");
        for (size_t i : {size_t(1), size_t(2), size_t(3)})
            if (ctx.outputWanted(i)) return bad(ctx, "the present key/value and qk outputs are not supported");
        if (!q || !k || !v) return bad(ctx, "needs query, key and value (Q, K and V packed together are not supported)");
        for (const RtTensor* t : {q, k, v, bias})
            if (t && t->dtype != DType::Float32) return unsupportedType(ctx, t->dtype);
        if (q->rank() != 3 || q->dims[2] % m_heads)
            return bad(ctx, "query " + dimsString(q->dims) + " is not (batch, sequence, hidden) of " + std::to_string(m_heads) + " heads");
        const int64_t batch = q->dims[0], seq = q->dims[1], hidden = q->dims[2], size = hidden / m_heads;
        const bool split = k->rank() == 4;  // (batch, heads, keys, size), as a decoder's cross-attention caches them
        const int64_t keys = split ? k->dims[2] : k->rank() == 3 ? k->dims[1] : -1;
        const int64_t vSize = split ? (v->rank() == 4 ? v->dims[3] : -1) : (v->rank() == 3 && v->dims[2] % m_heads == 0 ? v->dims[2] / m_heads : -1);
        const bool keyFits = split ? k->dims == std::vector<int64_t>{batch, m_heads, keys, size}
                                   : k->rank() == 3 && k->dims[0] == batch && k->dims[2] == hidden;
        const bool valueFits = vSize > 0 && (split ? v->dims[0] == batch && v->dims[1] == m_heads && v->dims[2] == keys
                                                   : v->dims[0] == batch && v->dims[1] == keys);
        if (!keyFits || !valueFits)
            return bad(ctx, "key " + dimsString(k->dims) + " and value " + dimsString(v->dims) + " do not fit query " + dimsString(q->dims));
        if (bias && (split || bias->numel() != 2 * hidden + vSize * m_heads))
            return bad(ctx, split ? "a bias with key and value split into heads is not supported"
                                  : "bias needs " + std::to_string(2 * hidden + vSize * m_heads) + " values");
        auto out = ctx.output(0, DType::Float32, {batch, seq, m_heads * vSize});
        if (!out) return out.status();
        if ((*out)->numel() == 0) return Status::ok();

        // The operands with their part of the bias added (the inputs themselves when there is none).
        auto biased = [&](const RtTensor* t, int64_t offset, std::vector<float>& buffer) -> const float* {
            if (!bias) return t->as<float>();
            const int64_t width = t->dims.back();
            buffer.resize(size_t(t->numel()));
            for (int64_t r = 0; r < t->numel() / width; ++r)
                addArrays(t->as<float>() + r * width, bias->as<float>() + offset, buffer.data() + r * width, width);
            return buffer.data();
        };
        std::vector<float> qb, kb, vb;
        const float *pq = biased(q, 0, qb), *pk = biased(k, hidden, kb), *pv = biased(v, 2 * hidden, vb);

        std::vector<int64_t> maskDims;
        auto additive = additiveMask(ctx, mask, attentionBias, {batch, m_heads, seq, keys, m_filter, m_unidirectional}, maskDims);
        if (!additive) return additive.status();
        const std::vector<int64_t> kDims = split ? k->dims : std::vector<int64_t>{batch, keys, m_heads, size};
        const std::vector<int64_t> vDims = split ? v->dims : std::vector<int64_t>{batch, keys, m_heads, vSize};
        auto layout = attentionLayout({batch, seq, m_heads, size}, kDims, vDims, additive->empty() ? nullptr : &maskDims,
                                      {{0, 2, 1, 3}, split ? std::vector<int64_t>{0, 1, 3, 2} : std::vector<int64_t>{0, 2, 3, 1},
                                       split ? std::vector<int64_t>{} : std::vector<int64_t>{0, 2, 1, 3}, {0, 2, 1, 3}});
        if (!layout) return layout.status().withContext(ctx.where());
        const float scale = m_scale != 0.0f ? m_scale : 1.0f / std::sqrt(float(size));
        attentionFloat(ctx.pool(), pq, pk, pv, additive->empty() ? nullptr : additive->data(), (*out)->as<float>(), *layout, scale);
        return Status::ok();
    }

private:
    int64_t m_heads;
    bool m_unidirectional;
    float m_filter, m_scale;
};

class EmbedLayerNormalizationKernel : public Kernel {
public:
    explicit EmbedLayerNormalizationKernel(float epsilon) : m_epsilon(epsilon) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *ids = ctx.input(0), *segments = ctx.input(1), *words = ctx.input(2), *positions = ctx.input(3),
                       *segmentTable = ctx.input(4), *gamma = ctx.input(5), *beta = ctx.input(6), *mask = ctx.input(7),
                       *positionIds = ctx.input(8);
        if (!ids || !words || !positions || !gamma || !beta)
            return bad(ctx, "needs input_ids, the word and position embeddings, gamma and beta");
        if (!isIndexType(*ids) || ids->rank() != 2) return bad(ctx, "input_ids must be int32 (batch, sequence)");
        if (words->dtype != DType::Float32 || words->rank() != 2) return bad(ctx, "the word embedding must be float32 (vocabulary, hidden)");
        const int64_t batch = ids->dims[0], seq = ids->dims[1], hidden = words->dims[1];
        auto sameTable = [&](const RtTensor* t) { return !t || (t->dtype == DType::Float32 && t->rank() == 2 && t->dims[1] == hidden); };
        if (!sameTable(positions) || !sameTable(segmentTable))
            return bad(ctx, "the position and segment embeddings must be float32 with " + std::to_string(hidden) + " columns");
        if (gamma->numel() != hidden || beta->numel() != hidden || gamma->dtype != DType::Float32 || beta->dtype != DType::Float32)
            return bad(ctx, "gamma and beta need " + std::to_string(hidden) + " float32 values");
        auto sameIds = [&](const RtTensor* t) { return !t || (isIndexType(*t) && t->dims == ids->dims); };
        if (!sameIds(segments) || !sameIds(mask) || (segments && !segmentTable))
            return bad(ctx, "segment_ids and mask must be int32 like input_ids " + dimsString(ids->dims) +
                                ", and segment_ids needs the segment embedding");
        if (positionIds && !(isIndexType(*positionIds) && positionIds->rank() == 2 &&
                             (positionIds->dims[0] == batch || positionIds->dims[0] == 1) && positionIds->dims[1] == seq))
            return bad(ctx, "position_ids must be int32 (batch or 1, sequence)");

        // Every index is checked before anything is read through it.
        auto check = [&](const RtTensor* t, const RtTensor* table, const char* what) -> Status {
            if (!t) return Status::ok();
            for (int64_t i = 0; i < t->numel(); ++i) {
                const int64_t v = indexAt(*t, i);
                if (v < 0 || v >= table->dims[0])
                    return bad(ctx, std::string(what) + " holds " + std::to_string(v) + ", outside the embedding's " +
                                        std::to_string(table->dims[0]) + " rows");
            }
            return Status::ok();
        };
        FSC_RETURN_IF_ERROR(check(ids, words, "input_ids"));
        FSC_RETURN_IF_ERROR(check(segments, segmentTable, "segment_ids"));
        FSC_RETURN_IF_ERROR(check(positionIds, positions, "position_ids"));
        if (!positionIds && seq > positions->dims[0])
            return bad(ctx, "the sequence of " + std::to_string(seq) + " tokens is longer than the position embedding's " +
                                std::to_string(positions->dims[0]) + " rows");

        auto y = ctx.output(0, DType::Float32, {batch, seq, hidden});
        if (!y) return y.status();
        float* sumOut = nullptr;
        if (ctx.outputWanted(2)) {
            auto sum = ctx.output(2, DType::Float32, {batch, seq, hidden});
            if (!sum) return sum.status();
            sumOut = (*sum)->as<float>();
        }
        if (ctx.outputWanted(1)) {  // tokens per sequence: the mask's ones (zeros without a mask)
            auto index = ctx.output(1, DType::Int32, {batch});
            if (!index) return index.status();
            for (int64_t b = 0; b < batch; ++b) {
                int32_t count = 0;
                for (int64_t s = 0; mask && s < seq; ++s) count += indexAt(*mask, b * seq + s) == 1;
                (*index)->as<int32_t>()[b] = count;
            }
        }
        const float *w = words->as<float>(), *p = positions->as<float>(), *g = gamma->as<float>(), *be = beta->as<float>();
        const float* sg = segmentTable ? segmentTable->as<float>() : nullptr;
        float* py = (*y)->as<float>();
        ctx.pool().parallelFor(batch * seq, std::max<int64_t>(1, 8192 / std::max<int64_t>(hidden, 1)), [&](int64_t r0, int64_t r1) {
            std::vector<float> scratch(sumOut ? 0 : size_t(hidden));
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t b = r / seq, s = r % seq;
                const int64_t position = positionIds ? indexAt(*positionIds, (positionIds->dims[0] == 1 ? 0 : b) * seq + s) : s;
                float* sum = sumOut ? sumOut + r * hidden : scratch.data();
                addArrays(w + indexAt(*ids, r) * hidden, p + position * hidden, sum, hidden);
                if (segments) addArrays(sum, sg + indexAt(*segments, r) * hidden, sum, hidden);
                double mean = 0, variance = 0;
                meanVariance(sum, hidden, mean, variance);
                normalizeArray(sum, float(mean), float(1.0 / std::sqrt(variance + double(m_epsilon))), g, be, py + r * hidden, hidden);
            }
        });
        return Status::ok();
    }

private:
    float m_epsilon;
};

}  // namespace

KernelFactory contribAttention() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t heads = init.getInt("num_heads", 0);
        if (heads <= 0) return init.invalid("needs a num_heads attribute above 0");
        if (init.getInt("do_rotary", 0)) return init.invalid("do_rotary (rotary embeddings inside Attention) is not supported");
        return std::unique_ptr<Kernel>(new AttentionKernel(heads, init.getInts("qkv_hidden_sizes"), init.getInt("unidirectional", 0) != 0,
                                                           init.getFloat("mask_filter_value", -10000.0f), init.getFloat("scale", 0.0f)));
    };
}

KernelFactory multiHeadAttention() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t heads = init.getInt("num_heads", 0);
        if (heads <= 0) return init.invalid("needs a num_heads attribute above 0");
        return std::unique_ptr<Kernel>(new MultiHeadAttentionKernel(heads, init.getInt("unidirectional", 0) != 0,
                                                                    init.getFloat("mask_filter_value", -10000.0f),
                                                                    init.getFloat("scale", 0.0f)));
    };
}

KernelFactory embedLayerNormalization() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new EmbedLayerNormalizationKernel(init.getFloat("epsilon", 1e-12f)));
    };
}

}  // namespace fsc::cpu
