// The two ops ONNX Runtime's transformers optimizer (and Optimum's optimization levels 2 to 4)
// writes into a BERT-family model, as its contrib op documentation defines them:
//   Attention (input, weights, bias, mask_index, past, attention_bias): self-attention with
//     the Q, K and V projections packed in one weight, heads split and merged; with GPT-2's
//     past key/value state in and the present one out;
//   EmbedLayerNormalization (input_ids, segment_ids, word, position and segment embeddings,
//     gamma, beta, mask, position_ids): the three lookups summed and normalized, and the
//     mask's count of tokens per sequence (Attention's 1-D mask_index).
// O1's lower-contrib-ops writes Attention as a product and our fused attention; these
// kernels run it at O0, as the oracle the lowering is checked against. MultiHeadAttention, its
// form with Q, K and V given apart (encoder-decoder and diffusion models), shares the masks
// and the fused attention's loop; QAttention and QEmbedLayerNormalization, what
// quantize_dynamic makes of the two, share their code.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "compiler/backends/cpu/contrib_kernels.h"
#include "compiler/backends/cpu/cpu_common.h"
#include "compiler/backends/cpu/fused_kernels.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/integer_product_to_float.h"
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
Result<std::vector<float>> additiveMask(const KernelContext& ctx, const RtTensor* m,
                                        const RtTensor* attentionBias, const MaskSpec& spec,
                                        std::vector<int64_t>& dims) {
    const int64_t batch = spec.batch, seq = spec.seq, keys = spec.keys, heads = spec.heads;
    std::vector<float> mask;
    if (!m && !spec.unidirectional && !attentionBias) return mask;
    mask.assign(size_t(batch * seq * keys), 0.0f);
    if (m) {
        if (!isIndexType(*m)) return bad(ctx, "the mask must be int32");
        const auto& d = m->dims;
        const bool ends = d.size() == 1 && d[0] == batch,
                   startsToo = d.size() == 1 && d[0] == 2 * batch;
        const bool keys2d = d.size() == 2 && d[0] == batch && d[1] == keys;
        const bool full3d = d.size() == 3 && d[0] == batch && d[1] == seq && d[2] == keys;
        if (!ends && !startsToo && !keys2d && !full3d)
            return bad(ctx, "the mask " + dimsString(d) +
                                " is none of (batch), (2 x batch), (batch, keys) and "
                                "(batch, sequence, keys) for batch " +
                                std::to_string(batch) + ", sequence " + std::to_string(seq) +
                                " and " + std::to_string(keys) + " keys");
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
                for (int64_t k = s + 1 + (keys - seq); k < keys; ++k)
                    mask[size_t((b * seq + s) * keys + k)] += spec.filter;
    dims = {batch, 1, seq, keys};
    if (!attentionBias) return mask;
    const auto& d = attentionBias->dims;
    if (attentionBias->dtype != DType::Float32 || d.size() != 4 || (d[0] != 1 && d[0] != batch) ||
        (d[1] != 1 && d[1] != heads) || d[2] != seq || d[3] != keys)
        return bad(ctx, "attention_bias " + dimsString(d) +
                            " is not float32 (batch or 1, heads or 1, sequence, keys)");
    std::vector<float> full(size_t(batch * heads * seq * keys));
    const float* pb = attentionBias->as<float>();
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < heads; ++h) {
            const float* from =
                pb + ((d[0] == 1 ? 0 : b) * d[1] + (d[1] == 1 ? 0 : h)) * seq * keys;
            float* to = full.data() + (b * heads + h) * seq * keys;
            addArrays(mask.data() + b * seq * keys, from, to, seq * keys);
        }
    dims = {batch, heads, seq, keys};
    return full;
}

// What Attention and QAttention read alike: input (batch, sequence, hidden) by weights
// (hidden, Q + K + V widths), split by qkv_hidden_sizes or in three equal parts.
struct PackedProjection {
    int64_t batch, seq, hidden, packed, width[3];
    int64_t rows() const { return batch * seq; }
};

struct PackedAttentionAttrs {
    int64_t heads;
    std::vector<int64_t> hiddenSizes;
    bool unidirectional;
    float filter, scale;
};

Result<PackedProjection> packedProjection(const KernelContext& ctx, const RtTensor& x,
                                          const RtTensor& w, const RtTensor* bias,
                                          const PackedAttentionAttrs& attrs) {
    if (x.rank() != 3 || w.rank() != 2 || w.dims[0] != x.dims[2])
        return bad(ctx, "input " + dimsString(x.dims) + " and weights " + dimsString(w.dims) +
                            " are not (batch, sequence, hidden) and (hidden, 3 x hidden)");
    PackedProjection p{x.dims[0],
                       x.dims[1],
                       x.dims[2],
                       w.dims[1],
                       {w.dims[1] / 3, w.dims[1] / 3, w.dims[1] - 2 * (w.dims[1] / 3)}};
    if (!attrs.hiddenSizes.empty()) {
        if (attrs.hiddenSizes.size() != 3)
            return bad(ctx, "qkv_hidden_sizes must hold three sizes");
        std::copy(attrs.hiddenSizes.begin(), attrs.hiddenSizes.end(), p.width);
    }
    const int64_t hq = p.width[0], hk = p.width[1], hv = p.width[2];
    if (hq != hk || hq + hk + hv != p.packed || hq % attrs.heads || hv % attrs.heads || hq <= 0)
        return bad(ctx, "weights " + dimsString(w.dims) + " do not split into Q, K and V of " +
                            std::to_string(attrs.heads) + " heads each");
    if (bias && (bias->dtype != DType::Float32 || bias->numel() != p.packed))
        return bad(ctx, "bias needs " + std::to_string(p.packed) + " float32 values");
    return p;
}

// Self-attention over the projections Q, K and V, each (batch, sequence, heads, head size) in
// its own buffer, into out (batch, sequence, V's width). With a past state (2, batch, heads,
// past length, head size: keys then values, as GPT-2's optimized form caches them), the keys
// and values are the past's followed by this call's; present (output 1, where it is read)
// holds them all for the next call.
Status attendProjected(KernelContext& ctx, const PackedProjection& p, const float* const qkv[3],
                       const RtTensor* maskIndex, const RtTensor* attentionBias, const RtTensor* past,
                       const PackedAttentionAttrs& attrs, float* out) {
    const int64_t heads = attrs.heads, headSize = p.width[0] / heads, vHeadSize = p.width[2] / heads;
    const float scale = attrs.scale != 0.0f ? attrs.scale : 1.0f / std::sqrt(float(headSize));
    const bool pastGiven = past && past->numel() > 0;
    if (!pastGiven && !ctx.outputWanted(1)) {
        std::vector<int64_t> maskDims;
        auto mask = additiveMask(ctx, maskIndex, attentionBias,
                                 {p.batch, heads, p.seq, p.seq, attrs.filter, attrs.unidirectional}, maskDims);
        if (!mask) return mask.status();
        auto layout = attentionLayout({p.batch, p.seq, heads, headSize}, {p.batch, p.seq, heads, headSize},
                                      {p.batch, p.seq, heads, vHeadSize}, mask->empty() ? nullptr : &maskDims,
                                      {{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}});
        if (!layout) return layout.status().withContext(ctx.where());
        attentionFloat(ctx.pool(), qkv[0], qkv[1], qkv[2], mask->empty() ? nullptr : mask->data(), out, *layout,
                       scale);
        return Status::ok();
    }
    if (headSize != vHeadSize) return bad(ctx, "a past or present state needs Q, K and V of one width");
    const int64_t pastLength = pastGiven && past->rank() == 5 ? past->dims[3] : 0;
    if (pastGiven && (past->dtype != DType::Float32 ||
                      past->dims != std::vector<int64_t>{2, p.batch, heads, pastLength, headSize}))
        return bad(ctx, "past " + dimsString(past->dims) + " is not float32 (2, batch " + std::to_string(p.batch) +
                            ", " + std::to_string(heads) + " heads, past length, head size " +
                            std::to_string(headSize) + ")");
    const int64_t total = pastLength + p.seq, half = p.batch * heads * total * headSize,
                  pastHalf = p.batch * heads * pastLength * headSize;
    std::vector<float> scratch;
    float* present = nullptr;
    if (ctx.outputWanted(1)) {
        auto t = ctx.output(1, DType::Float32, {2, p.batch, heads, total, headSize});
        if (!t) return t.status();
        present = (*t)->as<float>();
    } else {
        scratch.resize(size_t(2 * half));
        present = scratch.data();
    }
    // Each head's keys (then values): the past's rows, then this call's.
    const size_t rowBytes = size_t(headSize) * sizeof(float);
    for (int kv = 0; kv < 2; ++kv)
        for (int64_t b = 0; b < p.batch; ++b)
            for (int64_t h = 0; h < heads; ++h) {
                float* to = present + kv * half + (b * heads + h) * total * headSize;
                if (pastGiven)
                    std::memcpy(to, past->as<float>() + kv * pastHalf +
                                        (b * heads + h) * pastLength * headSize,
                                size_t(pastLength) * rowBytes);
                for (int64_t s = 0; s < p.seq; ++s)
                    std::memcpy(to + (pastLength + s) * headSize,
                                qkv[1 + kv] + ((b * p.seq + s) * heads + h) * headSize, rowBytes);
            }
    std::vector<int64_t> maskDims;
    auto mask = additiveMask(ctx, maskIndex, attentionBias,
                             {p.batch, heads, p.seq, total, attrs.filter, attrs.unidirectional}, maskDims);
    if (!mask) return mask.status();
    const std::vector<int64_t> cache = {p.batch, heads, total, headSize};
    auto layout = attentionLayout({p.batch, p.seq, heads, headSize}, cache, cache, mask->empty() ? nullptr : &maskDims,
                                  {{0, 2, 1, 3}, {0, 1, 3, 2}, {}, {0, 2, 1, 3}});
    if (!layout) return layout.status().withContext(ctx.where());
    attentionFloat(ctx.pool(), qkv[0], present, present + half, mask->empty() ? nullptr : mask->data(), out, *layout,
                   scale);
    return Status::ok();
}

class AttentionKernel : public Kernel {
public:
    explicit AttentionKernel(PackedAttentionAttrs attrs) : m_attrs(std::move(attrs)) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *x = ctx.input(0), *w = ctx.input(1), *bias = ctx.input(2),
                       *maskIndex = ctx.input(3), *past = ctx.input(4),
                       *attentionBias = ctx.input(5);
        if (!x || !w) return bad(ctx, "needs input and weights");
        if (x->dtype != DType::Float32 || w->dtype != DType::Float32 ||
            (bias && bias->dtype != DType::Float32))
            return unsupportedType(ctx, x->dtype != DType::Float32 ? x->dtype : w->dtype);
        auto p = packedProjection(ctx, *x, *w, bias, m_attrs);
        if (!p) return p.status();
        auto out = ctx.output(0, DType::Float32, {p->batch, p->seq, p->width[2]});
        if (!out) return out.status();
        if ((*out)->numel() == 0) return Status::ok();

        // Q, K and V each in its own (batch, sequence, heads, head size) buffer, straight out of
        // the product with its column slice of the weights.
        const int64_t rows = p->rows();
        std::vector<float> qkv[3];
        int64_t column = 0;
        for (int i = 0; i < 3; ++i) {
            const int64_t width = p->width[i];
            qkv[i].resize(size_t(rows * width));
            gemm(false, false, rows, width, p->hidden, 1.0f, x->as<float>(), p->hidden,
                 w->as<float>() + column, p->packed, 0.0f, qkv[i].data(), width);
            if (bias) {
                const float* b = bias->as<float>() + column;
                ctx.pool().parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
                    for (int64_t r = r0; r < r1; ++r)
                        addArrays(qkv[i].data() + r * width, b, qkv[i].data() + r * width, width);
                });
            }
            column += width;
        }
        const float* const parts[3] = {qkv[0].data(), qkv[1].data(), qkv[2].data()};
        return attendProjected(ctx, *p, parts, maskIndex, attentionBias, past, m_attrs, (*out)->as<float>());
    }

private:
    PackedAttentionAttrs m_attrs;
};

// com.microsoft.QAttention (input, weight, bias, input_scale, weight_scale, mask_index,
// input_zero_point, weight_zero_point, past): Attention with 8-bit input and weights, what
// ONNX Runtime's quantize_dynamic makes of an optimized BERT's Attention (the input from a
// DynamicQuantizeLinear). The packed projection runs as MatMulIntegerToFloat's product (exact
// in int32, then scaled, the bias added); the attention itself is float, as Attention's.
class QAttentionKernel : public Kernel {
public:
    explicit QAttentionKernel(PackedAttentionAttrs attrs) : m_attrs(std::move(attrs)) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *x = ctx.input(0), *w = ctx.input(1), *bias = ctx.input(2),
                       *xScale = ctx.input(3), *wScale = ctx.input(4), *maskIndex = ctx.input(5),
                       *xZero = ctx.input(6), *wZero = ctx.input(7);
        if (!x || !w || !bias || !xScale || !wScale)
            return bad(ctx, "needs input, weight, bias, input_scale and weight_scale");
        if (xScale->dtype != DType::Float32 || xScale->numel() != 1)
            return bad(ctx, "input_scale must be one float32");
        auto p = packedProjection(ctx, *x, *w, bias, m_attrs);
        if (!p) return p.status();
        if (wScale->numel() != 1 && wScale->numel() != p->packed)
            return bad(ctx, "weight_scale needs one value or " + std::to_string(p->packed) +
                                ", one per column");
        auto out = ctx.output(0, DType::Float32, {p->batch, p->seq, p->width[2]});
        if (!out) return out.status();
        if ((*out)->numel() == 0) return Status::ok();

        const int64_t rows = p->rows();
        std::vector<float> projected;
        FSC_RETURN_IF_ERROR(m_product.multiply(ctx, *x, xZero, xScale->as<float>()[0], *w, wZero,
                                               *wScale, bias, 1,
                                               [&](const std::vector<int64_t>&) -> Result<float*> {
                                                   projected.resize(size_t(rows * p->packed));
                                                   return projected.data();
                                               }));
        // The attention reads Q, K and V each from its own buffer.
        std::vector<float> qkv[3];
        int64_t column = 0;
        for (int i = 0; i < 3; ++i) {
            const int64_t width = p->width[i];
            qkv[i].resize(size_t(rows * width));
            ctx.pool().parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r)
                    std::memcpy(qkv[i].data() + r * width,
                                projected.data() + r * p->packed + column,
                                size_t(width) * sizeof(float));
            });
            column += width;
        }
        const float* const parts[3] = {qkv[0].data(), qkv[1].data(), qkv[2].data()};
        return attendProjected(ctx, *p, parts, maskIndex, nullptr, ctx.input(8), m_attrs, (*out)->as<float>());
    }

private:
    PackedAttentionAttrs m_attrs;
    IntegerProductToFloat m_product;
};

// MultiHeadAttention (query, key, value, bias, key_padding_mask, attention_bias, past_key,
// past_value): num_heads heads of Q over K and V given apart (cross-attention too), each
// (batch, length, hidden) with the bias of all three packed in one vector, or K and V already
// split into heads as (batch, heads, keys, size) without a bias, or packed (Q, K and V in the
// query, or K and V in the key). A decoder's self-attention carries its cache: past_key and
// past_value (batch, heads, past length, size) in, present_key and present_value out. What
// ONNX Runtime's optimizer writes for encoder-decoder and diffusion models.
class MultiHeadAttentionKernel : public Kernel {
public:
    MultiHeadAttentionKernel(int64_t heads, bool unidirectional, float filter, float scale)
        : m_heads(heads), m_unidirectional(unidirectional), m_filter(filter), m_scale(scale) {}

    Status compute(KernelContext& ctx) override {
        const RtTensor *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *bias = ctx.input(3),
                       *mask = ctx.input(4), *attentionBias = ctx.input(5), *pastKey = ctx.input(6),
                       *pastValue = ctx.input(7);
        if (ctx.outputWanted(3)) return bad(ctx, "the qk output is not supported");
        for (const RtTensor* t : {q, k, v, bias, pastKey, pastValue})
            if (t && t->dtype != DType::Float32) return unsupportedType(ctx, t->dtype);
        if (!q) return bad(ctx, "needs a query");
        // Q, K and V packed in the query (batch, sequence, heads, 3, size), or K and V in the
        // key (batch, keys, heads, 2, size), as the optimizer writes diffusion models for GPUs:
        // each part (batch, length, heads x size), as if given apart.
        RtTensor unpacked[3];
        if (q->rank() == 5 || (k && k->rank() == 5)) {
            const RtTensor& packed = q->rank() == 5 ? *q : *k;
            const int64_t parts = q->rank() == 5 ? 3 : 2;
            if (packed.dims[2] != m_heads || packed.dims[3] != parts || (parts == 3 && (k || v)) || (parts == 2 && v))
                return bad(ctx, "packed " + std::string(parts == 3 ? "query " : "key ") + dimsString(packed.dims) +
                                    " is not (batch, length, " + std::to_string(m_heads) + " heads, " +
                                    std::to_string(parts) + ", size) with the parts after it left out");
            const int64_t rows = packed.dims[0] * packed.dims[1] * m_heads, size = packed.dims[4];
            for (int64_t part = 0; part < parts; ++part) {
                RtTensor& t = unpacked[3 - parts + part];
                t = allocateTensor(DType::Float32, {packed.dims[0], packed.dims[1], m_heads * size});
                for (int64_t r = 0; r < rows; ++r)
                    std::memcpy(t.as<float>() + r * size, packed.as<float>() + (r * parts + part) * size,
                                size_t(size) * sizeof(float));
            }
            if (parts == 3) q = &unpacked[0];
            k = &unpacked[1], v = &unpacked[2];
        }
        if (!k || !v) return bad(ctx, "needs key and value (or both packed with the query, or value with the key)");
        if (q->rank() != 3 || q->dims[2] % m_heads)
            return bad(ctx, "query " + dimsString(q->dims) + " is not (batch, sequence, hidden) of " +
                                std::to_string(m_heads) + " heads");
        const int64_t batch = q->dims[0], seq = q->dims[1], hidden = q->dims[2], size = hidden / m_heads;
        // (batch, heads, keys, size): a decoder's cross-attention cache.
        const bool split = k->rank() == 4;
        const int64_t keys = split ? k->dims[2] : k->rank() == 3 ? k->dims[1] : -1;
        const int64_t vSize = split ? (v->rank() == 4 ? v->dims[3] : -1)
                                    : (v->rank() == 3 && v->dims[2] % m_heads == 0 ? v->dims[2] / m_heads : -1);
        const bool keyFits = split ? k->dims == std::vector<int64_t>{batch, m_heads, keys, size}
                                   : k->rank() == 3 && k->dims[0] == batch && k->dims[2] == hidden;
        const bool valueFits = vSize > 0 && (split ? v->dims[0] == batch && v->dims[1] == m_heads && v->dims[2] == keys
                                                   : v->dims[0] == batch && v->dims[1] == keys);
        if (!keyFits || !valueFits)
            return bad(ctx, "key " + dimsString(k->dims) + " and value " + dimsString(v->dims) + " do not fit query " +
                                dimsString(q->dims));
        if (bias && (split || bias->numel() != 2 * hidden + vSize * m_heads))
            return bad(ctx, split ? "a bias with key and value split into heads is not supported"
                                  : "bias needs " + std::to_string(2 * hidden + vSize * m_heads) + " values");
        const bool pastGiven = (pastKey && pastKey->numel() > 0) || (pastValue && pastValue->numel() > 0);
        const bool cached = pastGiven || ctx.outputWanted(1) || ctx.outputWanted(2);
        if (cached && split) return bad(ctx, "past and present states need key and value as (batch, keys, hidden)");
        const int64_t pastLength = pastGiven && pastKey && pastKey->rank() == 4 ? pastKey->dims[2] : 0;
        if (pastGiven && (!pastKey || !pastValue || pastKey->dims != std::vector<int64_t>{batch, m_heads, pastLength, size} ||
                          pastValue->dims != std::vector<int64_t>{batch, m_heads, pastLength, vSize}))
            return bad(ctx, "past_key and past_value must both be (batch " + std::to_string(batch) + ", " +
                                std::to_string(m_heads) + " heads, past length, size)");
        auto out = ctx.output(0, DType::Float32, {batch, seq, m_heads * vSize});
        if (!out) return out.status();

        // The operands with their part of the bias added (the inputs themselves when there is
        // none).
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

        // With a cache: present_key and present_value (batch, heads, past + keys, size), the
        // past's rows then this call's, in the outputs or in scratch when they are not read.
        const int64_t total = pastLength + keys;
        std::vector<float> scratch[2];
        if (cached) {
            const RtTensor* past[2] = {pastKey, pastValue};
            const float* now[2] = {pk, pv};
            float* present[2];
            for (int kv = 0; kv < 2; ++kv) {
                const int64_t width = kv ? vSize : size;
                const std::vector<int64_t> dims = {batch, m_heads, total, width};
                if (ctx.outputWanted(size_t(1 + kv))) {
                    auto t = ctx.output(size_t(1 + kv), DType::Float32, dims);
                    if (!t) return t.status();
                    present[kv] = (*t)->as<float>();
                } else {
                    scratch[kv].resize(size_t(batch * m_heads * total * width));
                    present[kv] = scratch[kv].data();
                }
                for (int64_t b = 0; b < batch; ++b)
                    for (int64_t h = 0; h < m_heads; ++h) {
                        float* to = present[kv] + (b * m_heads + h) * total * width;
                        if (pastLength)
                            std::memcpy(to, past[kv]->as<float>() + (b * m_heads + h) * pastLength * width,
                                        size_t(pastLength * width) * sizeof(float));
                        for (int64_t t = 0; t < keys; ++t)
                            std::memcpy(to + (pastLength + t) * width, now[kv] + ((b * keys + t) * m_heads + h) * width,
                                        size_t(width) * sizeof(float));
                    }
            }
            pk = present[0], pv = present[1];
        }
        if ((*out)->numel() == 0) return Status::ok();

        std::vector<int64_t> maskDims;
        auto additive =
            additiveMask(ctx, mask, attentionBias, {batch, m_heads, seq, total, m_filter, m_unidirectional}, maskDims);
        if (!additive) return additive.status();
        const bool headsFirst = split || cached;  // K and V as (batch, heads, keys, size)
        const std::vector<int64_t> kDims = headsFirst ? std::vector<int64_t>{batch, m_heads, total, size}
                                                      : std::vector<int64_t>{batch, keys, m_heads, size};
        const std::vector<int64_t> vDims = headsFirst ? std::vector<int64_t>{batch, m_heads, total, vSize}
                                                      : std::vector<int64_t>{batch, keys, m_heads, vSize};
        auto layout = attentionLayout({batch, seq, m_heads, size}, kDims, vDims, additive->empty() ? nullptr : &maskDims,
                                      {{0, 2, 1, 3},
                                       headsFirst ? std::vector<int64_t>{0, 1, 3, 2} : std::vector<int64_t>{0, 2, 3, 1},
                                       headsFirst ? std::vector<int64_t>{} : std::vector<int64_t>{0, 2, 1, 3},
                                       {0, 2, 1, 3}});
        if (!layout) return layout.status().withContext(ctx.where());
        const float scale = m_scale != 0.0f ? m_scale : 1.0f / std::sqrt(float(size));
        attentionFloat(ctx.pool(), pq, pk, pv, additive->empty() ? nullptr : additive->data(), (*out)->as<float>(),
                       *layout, scale);
        return Status::ok();
    }

private:
    int64_t m_heads;
    bool m_unidirectional;
    float m_filter, m_scale;
};

// EmbedLayerNormalization's inputs after the ids: the float tables.
struct EmbedTables {
    const RtTensor *words, *positions, *segments, *gamma, *beta;
};

Status embedLayerNorm(KernelContext& ctx, const RtTensor* ids, const RtTensor* segments,
                      const EmbedTables& tables, const RtTensor* mask, const RtTensor* positionIds,
                      float epsilon) {
    const RtTensor *words = tables.words, *positions = tables.positions,
                   *segmentTable = tables.segments, *gamma = tables.gamma, *beta = tables.beta;
    if (!ids || !words || !positions || !gamma || !beta)
        return bad(ctx, "needs input_ids, the word and position embeddings, gamma and beta");
    if (!isIndexType(*ids) || ids->rank() != 2)
        return bad(ctx, "input_ids must be int32 (batch, sequence)");
    if (words->dtype != DType::Float32 || words->rank() != 2)
        return bad(ctx, "the word embedding must be float32 (vocabulary, hidden)");
    const int64_t batch = ids->dims[0], seq = ids->dims[1], hidden = words->dims[1];
    auto sameTable = [&](const RtTensor* t) {
        return !t || (t->dtype == DType::Float32 && t->rank() == 2 && t->dims[1] == hidden);
    };
    if (!sameTable(positions) || !sameTable(segmentTable))
        return bad(ctx, "the position and segment embeddings must be float32 with " +
                            std::to_string(hidden) + " columns");
    if (gamma->numel() != hidden || beta->numel() != hidden || gamma->dtype != DType::Float32 ||
        beta->dtype != DType::Float32)
        return bad(ctx, "gamma and beta need " + std::to_string(hidden) + " float32 values");
    auto sameIds = [&](const RtTensor* t) {
        return !t || (isIndexType(*t) && t->dims == ids->dims);
    };
    if (!sameIds(segments) || !sameIds(mask) || (segments && !segmentTable))
        return bad(ctx, "segment_ids and mask must be int32 like input_ids " +
                            dimsString(ids->dims) +
                            ", and segment_ids needs the segment embedding");
    if (positionIds && !(isIndexType(*positionIds) && positionIds->rank() == 2 &&
                         (positionIds->dims[0] == batch || positionIds->dims[0] == 1) &&
                         positionIds->dims[1] == seq))
        return bad(ctx, "position_ids must be int32 (batch or 1, sequence)");

    // Every index is checked before anything is read through it.
    auto check = [&](const RtTensor* t, const RtTensor* table, const char* what) -> Status {
        if (!t) return Status::ok();
        for (int64_t i = 0; i < t->numel(); ++i) {
            const int64_t v = indexAt(*t, i);
            if (v < 0 || v >= table->dims[0])
                return bad(ctx, std::string(what) + " holds " + std::to_string(v) +
                                    ", outside the embedding's " + std::to_string(table->dims[0]) +
                                    " rows");
        }
        return Status::ok();
    };
    FSC_RETURN_IF_ERROR(check(ids, words, "input_ids"));
    FSC_RETURN_IF_ERROR(check(segments, segmentTable, "segment_ids"));
    FSC_RETURN_IF_ERROR(check(positionIds, positions, "position_ids"));
    if (!positionIds && seq > positions->dims[0])
        return bad(ctx, "the sequence of " + std::to_string(seq) +
                            " tokens is longer than the position embedding's " +
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
    const float *w = words->as<float>(), *p = positions->as<float>(), *g = gamma->as<float>(),
                *be = beta->as<float>();
    const float* sg = segmentTable ? segmentTable->as<float>() : nullptr;
    float* py = (*y)->as<float>();
    ctx.pool().parallelFor(
        batch * seq, std::max<int64_t>(1, 8192 / std::max<int64_t>(hidden, 1)),
        [&](int64_t r0, int64_t r1) {
            std::vector<float> scratch(sumOut ? 0 : size_t(hidden));
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t b = r / seq, s = r % seq;
                const int64_t position =
                    positionIds
                        ? indexAt(*positionIds, (positionIds->dims[0] == 1 ? 0 : b) * seq + s)
                        : s;
                float* sum = sumOut ? sumOut + r * hidden : scratch.data();
                addArrays(w + indexAt(*ids, r) * hidden, p + position * hidden, sum, hidden);
                if (segments) addArrays(sum, sg + indexAt(*segments, r) * hidden, sum, hidden);
                double mean = 0, variance = 0;
                meanVariance(sum, hidden, mean, variance);
                normalizeArray(sum, float(mean), float(1.0 / std::sqrt(variance + double(epsilon))),
                               g, be, py + r * hidden, hidden);
            }
        });
    return Status::ok();
}

class EmbedLayerNormalizationKernel : public Kernel {
public:
    explicit EmbedLayerNormalizationKernel(float epsilon) : m_epsilon(epsilon) {}

    Status compute(KernelContext& ctx) override {
        return embedLayerNorm(
            ctx, ctx.input(0), ctx.input(1),
            {ctx.input(2), ctx.input(3), ctx.input(4), ctx.input(5), ctx.input(6)}, ctx.input(7),
            ctx.input(8), m_epsilon);
    }

private:
    float m_epsilon;
};

// com.microsoft.QEmbedLayerNormalization (input_ids, segment_ids, the word, position and
// segment embeddings, gamma and beta as 8-bit values, mask, then their five scales and five
// zero points): what quantize_dynamic makes of EmbedLayerNormalization. The tables are
// dequantized once while they stay the same constants (per call otherwise), then it runs as
// EmbedLayerNormalization.
class QEmbedLayerNormalizationKernel : public Kernel {
public:
    explicit QEmbedLayerNormalizationKernel(float epsilon) : m_epsilon(epsilon) {}

    Status compute(KernelContext& ctx) override {
        constexpr size_t kTables = 5, kFirstTable = 2, kFirstScale = 8, kFirstZero = 13;
        const void* sources[kTables];
        bool constant = true;
        for (size_t t = 0; t < kTables; ++t) {
            const RtTensor *q = ctx.input(kFirstTable + t), *scale = ctx.input(kFirstScale + t),
                           *zero = ctx.input(kFirstZero + t);
            sources[t] = q ? q->data : nullptr;
            if (!q) continue;
            if (q->dtype != DType::UInt8 && q->dtype != DType::Int8)
                return unsupportedType(ctx, q->dtype);
            if (!scale || scale->dtype != DType::Float32 || scale->numel() != 1 ||
                (zero && zero->numel() != 1) || (zero && zero->dtype != q->dtype))
                return bad(ctx,
                           "each quantized table needs one float32 scale and at most one zero "
                           "point of its type");
            constant = constant && ctx.inputConstant(kFirstTable + t) &&
                       ctx.inputConstant(kFirstScale + t) &&
                       (!zero || ctx.inputConstant(kFirstZero + t));
        }
        std::lock_guard<std::mutex> keep(m_mutex);  // a plan may run on several threads
        if (!constant || !std::equal(sources, sources + kTables, m_sources)) {
            for (size_t t = 0; t < kTables; ++t) {
                const RtTensor* q = ctx.input(kFirstTable + t);
                m_tables[t] = q ? dequantized(*q, ctx.input(kFirstScale + t)->as<float>()[0],
                                              ctx.input(kFirstZero + t)
                                                  ? elementAsInt(*ctx.input(kFirstZero + t), 0)
                                                  : 0)
                                : RtTensor();
                m_sources[t] = constant ? sources[t] : nullptr;
            }
        }
        auto table = [&](size_t t) { return ctx.input(kFirstTable + t) ? &m_tables[t] : nullptr; };
        return embedLayerNorm(ctx, ctx.input(0), ctx.input(1),
                              {table(0), table(1), table(2), table(3), table(4)}, ctx.input(7),
                              nullptr, m_epsilon);
    }

private:
    static RtTensor dequantized(const RtTensor& q, float scale, int64_t zero) {
        RtTensor f = allocateTensor(DType::Float32, q.dims);
        float* to = f.as<float>();
        for (int64_t i = 0; i < q.numel(); ++i) to[i] = float(elementAsInt(q, i) - zero) * scale;
        return f;
    }

    float m_epsilon;
    std::mutex m_mutex;
    RtTensor m_tables[5];
    const void* m_sources[5] = {};
};

}  // namespace

namespace {

Result<PackedAttentionAttrs> packedAttentionAttrs(const KernelInit& init) {
    const int64_t heads = init.getInt("num_heads", 0);
    if (heads <= 0) return init.invalid("needs a num_heads attribute above 0");
    if (init.getInt("do_rotary", 0))
        return init.invalid("do_rotary (rotary embeddings inside Attention) is not supported");
    if (init.getInt("past_present_share_buffer", 0))
        return init.invalid("past_present_share_buffer (one buffer for past and present) is not supported");
    return PackedAttentionAttrs{
        heads, init.getInts("qkv_hidden_sizes"), init.getInt("unidirectional", 0) != 0,
        init.getFloat("mask_filter_value", -10000.0f), init.getFloat("scale", 0.0f)};
}

}  // namespace

KernelFactory contribAttention() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        auto attrs = packedAttentionAttrs(init);
        if (!attrs) return attrs.status();
        return std::unique_ptr<Kernel>(new AttentionKernel(std::move(*attrs)));
    };
}

KernelFactory multiHeadAttention() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        const int64_t heads = init.getInt("num_heads", 0);
        if (heads <= 0) return init.invalid("needs a num_heads attribute above 0");
        return std::unique_ptr<Kernel>(new MultiHeadAttentionKernel(
            heads, init.getInt("unidirectional", 0) != 0,
            init.getFloat("mask_filter_value", -10000.0f), init.getFloat("scale", 0.0f)));
    };
}

KernelFactory quantizedAttention() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        auto attrs = packedAttentionAttrs(init);
        if (!attrs) return attrs.status();
        return std::unique_ptr<Kernel>(new QAttentionKernel(std::move(*attrs)));
    };
}

KernelFactory quantizedEmbedLayerNormalization() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(
            new QEmbedLayerNormalizationKernel(init.getFloat("epsilon", 1e-12f)));
    };
}

KernelFactory embedLayerNormalization() {
    return [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(
            new EmbedLayerNormalizationKernel(init.getFloat("epsilon", 1e-12f)));
    };
}

}  // namespace fsc::cpu
