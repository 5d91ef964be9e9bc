// com.microsoft.Attention, MultiHeadAttention and EmbedLayerNormalization (what ONNX Runtime's
// transformers optimizer writes) against loops written from the contrib op documentation: the
// kernels at O0, and at O2 lower-contrib-ops' products, mask ops and fused attention, for
// every form of mask_index. Both were also checked against ONNX Runtime 1.31 itself
// (docs/benchmarks.md).
#include <QTest>

#include <cmath>
#include <functional>
#include <random>

#include "compiler/pipelines.h"
#include "compiler/runtime/input_sizing.h"
#include "contrib_test_support.h"
#include "core/graph_builder.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

constexpr int64_t kBatch = 2, kSeq = 6, kHidden = 16;
constexpr float kFilter = -10000.0f;

RtTensor ints(std::vector<int64_t> dims, std::vector<int32_t> values) {
    RtTensor t = allocateTensor(DType::Int32, std::move(dims));
    std::copy(values.begin(), values.end(), t.as<int32_t>());
    return t;
}

// The documented computation: Q, K, V = x W + bias split in three; per head
// softmax(scale Q K^T + additive(b, h, s, k)) V, heads merged.
RtTensor naiveAttention(const RtTensor& x, const RtTensor& w, const RtTensor& bias, int64_t heads,
                        const int64_t sizes[3], float scale,
                        const std::function<double(int64_t, int64_t, int64_t, int64_t)>& additive) {
    const int64_t packed = w.dims[1];
    std::vector<double> qkv(size_t(kBatch * kSeq * packed));
    for (int64_t r = 0; r < kBatch * kSeq; ++r)
        for (int64_t c = 0; c < packed; ++c) {
            double sum = bias.as<float>()[c];
            for (int64_t i = 0; i < kHidden; ++i)
                sum += double(x.as<float>()[r * kHidden + i]) * w.as<float>()[i * packed + c];
            qkv[size_t(r * packed + c)] = sum;
        }
    const int64_t d = sizes[0] / heads, dv = sizes[2] / heads;
    RtTensor y = allocateTensor(DType::Float32, {kBatch, kSeq, sizes[2]});
    for (int64_t b = 0; b < kBatch; ++b)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t s = 0; s < kSeq; ++s) {
                std::vector<double> p(kSeq);
                double best = -1e300, total = 0;
                for (int64_t k = 0; k < kSeq; ++k) {
                    double dot = 0;
                    for (int64_t i = 0; i < d; ++i)
                        dot += qkv[size_t((b * kSeq + s) * packed + h * d + i)] *
                               qkv[size_t((b * kSeq + k) * packed + sizes[0] + h * d + i)];
                    p[size_t(k)] = scale * dot + additive(b, h, s, k);
                    best = std::max(best, p[size_t(k)]);
                }
                for (double& v : p) total += v = std::exp(v - best);
                for (int64_t i = 0; i < dv; ++i) {
                    double out = 0;
                    for (int64_t k = 0; k < kSeq; ++k)
                        out += p[size_t(k)] / total *
                               qkv[size_t((b * kSeq + k) * packed + 2 * sizes[0] + h * dv + i)];
                    y.as<float>()[(b * kSeq + s) * sizes[2] + h * dv + i] = float(out);
                }
            }
    return y;
}

// 8-bit values spread over the type's range (uint8 0..255, int8 -128..127).
RtTensor randomBytes(DType type, std::vector<int64_t> dims, uint32_t seed) {
    std::mt19937 rng(seed);
    RtTensor t = allocateTensor(type, std::move(dims));
    for (int64_t i = 0; i < t.numel(); ++i) t.as<uint8_t>()[i] = uint8_t(rng());
    return t;
}

RtTensor scalarOf(DType type, double value) {
    RtTensor t = allocateTensor(type, {});
    if (type == DType::Float32)
        t.as<float>()[0] = float(value);
    else if (type == DType::UInt8)
        t.as<uint8_t>()[0] = uint8_t(value);
    else
        t.as<int8_t>()[0] = int8_t(value);
    return t;
}

// (q - zero) x scale, per tensor or (with one of each per column of a matrix) per column.
RtTensor dequantized(const RtTensor& q, const RtTensor& scale, const RtTensor& zero) {
    RtTensor f = allocateTensor(DType::Float32, q.dims);
    const int64_t columns = scale.numel() > 1 ? q.dims.back() : 1;
    for (int64_t i = 0; i < q.numel(); ++i) {
        const int64_t c = columns > 1 ? i % columns : 0;
        f.as<float>()[i] =
            float(double(elementAsInt(q, i) - elementAsInt(zero, c)) * scale.as<float>()[c]);
    }
    return f;
}

// EmbedLayerNormalization's first output from its documentation: the three rows summed, then
// normalized over the hidden axis.
RtTensor naiveEmbedLayerNorm(const RtTensor& words, const RtTensor& position,
                             const RtTensor& segment, const RtTensor& gamma, const RtTensor& beta,
                             const RtTensor& ids, const RtTensor& segments, double epsilon,
                             RtTensor* sums = nullptr) {
    RtTensor y = allocateTensor(DType::Float32, {kBatch, kSeq, kHidden});
    std::vector<double> sum(kHidden);
    for (int64_t r = 0; r < kBatch * kSeq; ++r) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < kHidden; ++i) {
            sum[size_t(i)] = double(words.as<float>()[ids.as<int32_t>()[r] * kHidden + i]) +
                             position.as<float>()[(r % kSeq) * kHidden + i] +
                             segment.as<float>()[segments.as<int32_t>()[r] * kHidden + i];
            if (sums) sums->as<float>()[r * kHidden + i] = float(sum[size_t(i)]);
            mean += sum[size_t(i)] / double(kHidden);
        }
        for (int64_t i = 0; i < kHidden; ++i)
            var += (sum[size_t(i)] - mean) * (sum[size_t(i)] - mean) / double(kHidden);
        for (int64_t i = 0; i < kHidden; ++i)
            y.as<float>()[r * kHidden + i] =
                float((sum[size_t(i)] - mean) / std::sqrt(var + epsilon) * gamma.as<float>()[i] +
                      beta.as<float>()[i]);
    }
    return y;
}

int countContrib(const Model& m, const char* op) {
    int n = 0;
    for (NodeId id : m.graph->order())
        n += m.graph->node(id).domain == kMs && m.graph->node(id).opType == op;
    return n;
}

}  // namespace

class TestContribAttention : public QObject {
    Q_OBJECT
private slots:
    void attentionReadsEveryMaskForm_data() {
        QTest::addColumn<QString>("form");
        QTest::addColumn<bool>("lowered");
        for (auto [form, lowered] : {std::pair{"none", true},
                                     {"ends", true},
                                     {"starts and ends", false},
                                     {"keys", true},
                                     {"full", true},
                                     {"causal", true},
                                     {"causal and ends", true},
                                     {"attention bias", true},
                                     {"own sizes and scale", true}})
            QTest::newRow(form) << QString(form) << lowered;
    }
    void attentionReadsEveryMaskForm() {
        QFETCH(QString, form);
        QFETCH(bool, lowered);
        const bool ownSizes = form == "own sizes and scale", causal = form.startsWith("causal");
        const int64_t heads = 2, sizes[3] = {kHidden, kHidden, ownSizes ? 12 : kHidden};
        const int64_t packed = sizes[0] + sizes[1] + sizes[2];
        const RtTensor x = randomTensor({kBatch, kSeq, kHidden}, 1),
                       w = randomTensor({kHidden, packed}, 2, 0.3f),
                       bias = randomTensor({packed}, 3, 0.1f),
                       attentionBias = randomTensor({1, heads, kSeq, kSeq}, 4);
        RtTensor mask;
        if (form == "ends" || form == "causal and ends") mask = ints({kBatch}, {4, 6});
        if (form == "starts and ends") mask = ints({2 * kBatch}, {5, 6, 1, 0});
        if (form == "keys" || form == "attention bias")
            mask = ints({kBatch, kSeq}, {1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0});
        if (form == "full") {
            std::vector<int32_t> v(size_t(kBatch * kSeq * kSeq));
            for (size_t i = 0; i < v.size(); ++i) v[i] = (i * 7 % 5) != 0;
            mask = ints({kBatch, kSeq, kSeq}, v);
        }
        auto masked = [&](int64_t b, int64_t s, int64_t k) {
            if (!mask.data) return false;
            const int32_t* m = mask.as<int32_t>();
            if (mask.rank() == 1)
                return k >= m[b] || (mask.dims[0] == 2 * kBatch && k < m[kBatch + b]);
            return (mask.rank() == 2 ? m[b * kSeq + k] : m[(b * kSeq + s) * kSeq + k]) <= 0;
        };
        auto additive = [&](int64_t b, int64_t h, int64_t s, int64_t k) {
            double v = masked(b, s, k) ? kFilter : 0.0;
            if (causal && k > s) v += kFilter;
            if (form == "attention bias") v += attentionBias.as<float>()[(h * kSeq + s) * kSeq + k];
            return v;
        };
        const float scale = ownSizes ? 0.4f : 1.0f / std::sqrt(float(kHidden / heads));

        GraphBuilder g;
        std::vector<ValueId> inputs = {
            g.input("x", DType::Float32, Shape::ofSizes({kBatch, kSeq, kHidden})),
            g.initializer(constant("w", w)), g.initializer(constant("bias", bias))};
        std::vector<RtTensor> feeds = {x};
        if (mask.data) {
            inputs.push_back(g.input("mask", DType::Int32, Shape::ofSizes(mask.dims)));
            feeds.push_back(mask);
        }
        if (form == "attention bias") {
            inputs.resize(5);
            inputs.push_back(
                g.input("attention_bias", DType::Float32, Shape::ofSizes(attentionBias.dims)));
            feeds.push_back(attentionBias);
        }
        std::vector<Attribute> attrs = {intAttr("num_heads", heads),
                                        intAttr("unidirectional", causal)};
        if (ownSizes) attrs.push_back(intsAttr("qkv_hidden_sizes", {sizes[0], sizes[1], sizes[2]}));
        if (ownSizes) attrs.push_back(floatAttr("scale", scale));
        g.output(g.node("Attention", inputs, {"y"}, attrs, "attention", kMs)[0]);
        const Model m = imported(g);
        QCOMPARE(m.graph->value(m.graph->outputs[0]).type.shape,
                 Shape::ofSizes({kBatch, kSeq, sizes[2]}));

        const RtTensor want = naiveAttention(x, w, bias, heads, sizes, scale, additive);
        expectClose(runModel(m, feeds)[0], want, 2e-5);
        auto o2 = compileWith(m, *pipelinePasses("O2"));
        QCOMPARE(countContrib(o2.model, "Attention"), lowered ? 0 : 1);
        QCOMPARE(countOps(*o2.model.graph, "Attention"), 1);
        expectClose(runModel(o2.model, feeds)[0], want, 2e-5);
    }

    void multiHeadAttentionAttendsOverKeysGivenApart_data() {
        QTest::addColumn<bool>("split");
        QTest::newRow("cross-attention, bias and key padding mask") << false;
        QTest::newRow("key and value split into heads") << true;
    }
    void multiHeadAttentionAttendsOverKeysGivenApart() {
        QFETCH(bool, split);
        constexpr int64_t heads = 2, keys = 7, size = kHidden / heads, vSize = 12;
        const RtTensor q = randomTensor({kBatch, kSeq, kHidden}, 40);
        // Stored as given: (batch, keys, heads x size), or split (batch, heads, keys, size).
        const RtTensor k = split ? randomTensor({kBatch, heads, keys, size}, 41)
                                 : randomTensor({kBatch, keys, kHidden}, 41);
        const RtTensor v = split ? randomTensor({kBatch, heads, keys, vSize}, 42)
                                 : randomTensor({kBatch, keys, heads * vSize}, 42);
        const RtTensor bias = randomTensor({2 * kHidden + heads * vSize}, 43, 0.3f);
        const RtTensor mask = ints({kBatch, keys}, {1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0});
        GraphBuilder g;
        std::vector<ValueId> inputs = {g.input("q", DType::Float32, Shape::ofSizes(q.dims)),
                                       g.input("k", DType::Float32, Shape::ofSizes(k.dims)),
                                       g.input("v", DType::Float32, Shape::ofSizes(v.dims))};
        std::vector<RtTensor> feeds = {q, k, v};
        if (!split) {
            inputs.push_back(g.initializer(constant("bias", bias)));
            inputs.push_back(g.input("mask", DType::Int32, Shape::ofSizes(mask.dims)));
            feeds.push_back(mask);
        }
        g.output(g.node("MultiHeadAttention", inputs, {"y"}, {intAttr("num_heads", heads)},
                        "cross_attention", kMs)[0]);
        const Model m = imported(g);
        QCOMPARE(m.graph->value(m.graph->outputs[0]).type.shape,
                 Shape::ofSizes({kBatch, kSeq, heads * vSize}));

        auto at = [&](const RtTensor& t, int64_t b, int64_t h, int64_t row, int64_t i,
                      int64_t width, int64_t biasAt) {
            if (split) return double(t.as<float>()[((b * heads + h) * keys + row) * width + i]);
            const int64_t rows = t.dims[1];
            return double(t.as<float>()[(b * rows + row) * heads * width + h * width + i]) +
                   bias.as<float>()[biasAt + h * width + i];
        };
        RtTensor want = allocateTensor(DType::Float32, {kBatch, kSeq, heads * vSize});
        for (int64_t b = 0; b < kBatch; ++b)
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t s = 0; s < kSeq; ++s) {
                    std::vector<double> p(static_cast<size_t>(keys));
                    double best = -1e300, total = 0;
                    for (int64_t key = 0; key < keys; ++key) {
                        double dot = 0;
                        for (int64_t i = 0; i < size; ++i)
                            dot += (double(q.as<float>()[(b * kSeq + s) * kHidden + h * size + i]) +
                                    (split ? 0.0 : bias.as<float>()[h * size + i])) *
                                   at(k, b, h, key, i, size, kHidden);
                        p[size_t(key)] =
                            dot / std::sqrt(double(size)) +
                            (!split && mask.as<int32_t>()[b * keys + key] == 0 ? kFilter : 0.0);
                        best = std::max(best, p[size_t(key)]);
                    }
                    for (double& x : p) total += x = std::exp(x - best);
                    for (int64_t i = 0; i < vSize; ++i) {
                        double out = 0;
                        for (int64_t key = 0; key < keys; ++key)
                            out += p[size_t(key)] / total * at(v, b, h, key, i, vSize, 2 * kHidden);
                        want.as<float>()[(b * kSeq + s) * heads * vSize + h * vSize + i] =
                            float(out);
                    }
                }
        expectClose(runModel(m, feeds)[0], want, 2e-5);
    }

    // A decoder's self-attention with its cache (past_key and past_value in, present_key and
    // present_value out), against the same attention given the cache as K and V split into
    // heads (the form checked above), with the bias added beforehand.
    void multiHeadAttentionContinuesFromAPastState() {
        constexpr int64_t heads = 2, size = kHidden / heads, pastLength = 4, total = pastLength + kSeq;
        const RtTensor q = randomTensor({kBatch, kSeq, kHidden}, 80), k = randomTensor({kBatch, kSeq, kHidden}, 81),
                       v = randomTensor({kBatch, kSeq, kHidden}, 82), bias = randomTensor({3 * kHidden}, 83, 0.3f),
                       pastKey = randomTensor({kBatch, heads, pastLength, size}, 84),
                       pastValue = randomTensor({kBatch, heads, pastLength, size}, 85);
        GraphBuilder g;
        auto outs = g.node("MultiHeadAttention",
                           {g.input("q", DType::Float32, Shape::ofSizes(q.dims)), g.input("k", DType::Float32, Shape::ofSizes(k.dims)),
                            g.input("v", DType::Float32, Shape::ofSizes(v.dims)), g.initializer(constant("bias", bias)), ValueId(),
                            ValueId(), g.input("past_key", DType::Float32, Shape::ofSizes(pastKey.dims)),
                            g.input("past_value", DType::Float32, Shape::ofSizes(pastValue.dims))},
                           {"y", "present_key", "present_value"}, {intAttr("num_heads", heads), intAttr("unidirectional", 1)},
                           "self_attention", kMs);
        for (ValueId o : outs) g.output(o);
        const Model m = imported(g);
        const Shape presentShape = Shape::ofSizes({kBatch, heads, total, size});
        QCOMPARE(m.graph->value(outs[1]).type.shape, presentShape);
        QCOMPARE(m.graph->value(outs[2]).type.shape, presentShape);
        const auto got = runModel(m, {q, k, v, pastKey, pastValue});

        // The cache by hand: past rows, then this call's (bias added) split into heads.
        RtTensor biasedQ = allocateTensor(DType::Float32, q.dims), cache[2];
        for (int64_t i = 0; i < q.numel(); ++i) biasedQ.as<float>()[i] = q.as<float>()[i] + bias.as<float>()[i % kHidden];
        for (int kv = 0; kv < 2; ++kv) {
            const RtTensor &now = kv ? v : k, &past = kv ? pastValue : pastKey;
            cache[kv] = allocateTensor(DType::Float32, {kBatch, heads, total, size});
            for (int64_t b = 0; b < kBatch; ++b)
                for (int64_t h = 0; h < heads; ++h)
                    for (int64_t t = 0; t < total; ++t)
                        for (int64_t i = 0; i < size; ++i)
                            cache[kv].as<float>()[((b * heads + h) * total + t) * size + i] =
                                t < pastLength ? past.as<float>()[((b * heads + h) * pastLength + t) * size + i]
                                               : now.as<float>()[(b * kSeq + t - pastLength) * kHidden + h * size + i] +
                                                     bias.as<float>()[(1 + kv) * kHidden + h * size + i];
        }
        // Causal over the cache: query s sees keys up to pastLength + s.
        std::vector<float> causal(size_t(kSeq * total));
        for (int64_t s = 0; s < kSeq; ++s)
            for (int64_t t = 0; t < total; ++t) causal[size_t(s * total + t)] = t > pastLength + s ? kFilter : 0.0f;
        GraphBuilder r;
        r.output(r.node("MultiHeadAttention",
                        {r.input("q", DType::Float32, Shape::ofSizes(q.dims)),
                         r.input("k", DType::Float32, Shape::ofSizes(cache[0].dims)),
                         r.input("v", DType::Float32, Shape::ofSizes(cache[1].dims)), ValueId(), ValueId(),
                         r.initializer(floatTensor("causal", {1, 1, kSeq, total}, causal))},
                        {"y"}, {intAttr("num_heads", heads)}, "reference", kMs)[0]);
        const auto want = runModel(imported(r), {biasedQ, cache[0], cache[1]});
        expectClose(got[0], want[0], 1e-5);
        expectClose(got[1], cache[0], 0);
        expectClose(got[2], cache[1], 0);
    }

    // Q, K and V packed in the query (batch, sequence, heads, 3, size), or K and V in the key
    // (batch, keys, heads, 2, size), as the optimizer writes diffusion models for GPUs (ONNX
    // Runtime's CPU refuses both): the same as the parts given apart.
    void multiHeadAttentionUnpacksPackedOperands() {
        constexpr int64_t heads = 2, size = kHidden / heads;
        for (const int64_t parts : {3, 2}) {
            const RtTensor packed = randomTensor({kBatch, kSeq, heads, parts, size}, 90 + uint32_t(parts));
            const RtTensor q = randomTensor({kBatch, kSeq, kHidden}, 95);
            RtTensor apart[3];
            for (int64_t part = 0; part < 3; ++part) {
                apart[part] = allocateTensor(DType::Float32, {kBatch, kSeq, kHidden});
                for (int64_t r = 0; r < kBatch * kSeq * heads; ++r)
                    for (int64_t i = 0; i < size; ++i)
                        apart[part].as<float>()[r * size + i] =
                            part < 3 - parts ? q.as<float>()[r * size + i]
                                             : packed.as<float>()[(r * parts + part - (3 - parts)) * size + i];
            }
            GraphBuilder g;
            std::vector<ValueId> inputs;
            std::vector<RtTensor> feeds;
            if (parts == 2) {
                inputs.push_back(g.input("q", DType::Float32, Shape::ofSizes(q.dims)));
                feeds.push_back(q);
            }
            inputs.push_back(g.input("packed", DType::Float32, Shape::ofSizes(packed.dims)));
            feeds.push_back(packed);
            g.output(g.node("MultiHeadAttention", inputs, {"y"}, {intAttr("num_heads", heads)}, "packed", kMs)[0]);
            const Model m = imported(g);
            QCOMPARE(m.graph->value(m.graph->outputs[0]).type.shape, Shape::ofSizes({kBatch, kSeq, kHidden}));
            GraphBuilder r;
            r.output(r.node("MultiHeadAttention",
                            {r.input("q", DType::Float32, Shape::ofSizes(q.dims)), r.input("k", DType::Float32, Shape::ofSizes(q.dims)),
                             r.input("v", DType::Float32, Shape::ofSizes(q.dims))},
                            {"y"}, {intAttr("num_heads", heads)}, "apart", kMs)[0]);
            expectClose(runModel(m, feeds)[0], runModel(imported(r), {apart[0], apart[1], apart[2]})[0], 0);
        }
    }

    void generatedIdsStayInsideTheirTables() {
        // token_type_ids through a Cast into EmbedLayerNormalization's two segment rows, ids into
        // a Gather of five rows, and an integer input that indexes nothing.
        GraphBuilder g;
        ValueId types = g.input("token_type_ids", DType::Int64, Shape::ofSizes({1, 4}));
        ValueId ids = g.input("ids", DType::Int64, Shape::ofSizes({1, 4}));
        ValueId free = g.input("count", DType::Int64, Shape::ofSizes({1}));
        ValueId types32 = g.op("Cast", {types}, "types32", {intAttr("to", 6)});
        ValueId ids32 = g.op("Cast", {ids}, "ids32", {intAttr("to", 6)});
        auto table = [&](const char* name, int64_t rows) {
            return g.initializer(constant(name, randomTensor({rows, 8}, uint32_t(rows))));
        };
        auto emb =
            g.node("EmbedLayerNormalization",
                   {ids32, types32, table("words", 50), table("positions", 16),
                    table("segments", 2), g.initializer(constant("gamma", randomTensor({8}, 1))),
                    g.initializer(constant("beta", randomTensor({8}, 2)))},
                   {"y", "mask_index"}, {}, "embeddings", kMs);
        g.output(emb[0]);
        g.output(g.op("Gather", {table("small", 5), ids}, "picked"));
        g.output(g.op("Add", {free, free}, "twice"));
        const Model m = imported(g);
        QCOMPARE(generatedIntegerBound(*m.graph, types), int64_t(2));
        QCOMPARE(generatedIntegerBound(*m.graph, ids), int64_t(5));
        QCOMPARE(generatedIntegerBound(*m.graph, free), int64_t(10));
    }

    void layersReadingOneMaskShareItsOps() {
        // An encoder's layers all read EmbedLayerNormalization's mask_index: its ops are built
        // once.
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({kBatch, kSeq, kHidden}));
        ValueId mask = g.input("mask", DType::Int32, Shape::ofSizes({kBatch}));
        for (int layer = 0; layer < 3; ++layer) {
            const std::string n = std::to_string(layer);
            x = g.node(
                "Attention",
                {x,
                 g.initializer(
                     constant("w" + n, randomTensor({kHidden, 3 * kHidden}, 10 + layer, 0.3f))),
                 g.initializer(constant("b" + n, randomTensor({3 * kHidden}, 20 + layer, 0.1f))),
                 mask},
                {"y" + n}, {intAttr("num_heads", 4)}, "attention" + n, kMs)[0];
        }
        g.output(x);
        const Model m = imported(g);
        auto o2 = compileWith(m, *pipelinePasses("O2"));
        QCOMPARE(countOps(*o2.model.graph, "Attention"), 3);
        QCOMPARE(countOps(*o2.model.graph, "Where"), 1);
        const std::vector<RtTensor> feeds = {randomTensor({kBatch, kSeq, kHidden}, 30),
                                             ints({kBatch}, {3, 6})};
        expectClose(runModel(o2.model, feeds)[0], runModel(m, feeds)[0], 2e-5);
    }

    // GPT-2 as ONNX Runtime's optimizer writes it with its cache: Attention reads past (2,
    // batch, heads, past length, head size) and writes present, the past's keys and values
    // followed by this call's; the causal mask counts the past, the raw mask covers both.
    void attentionContinuesFromAPastState() {
        constexpr int64_t heads = 2, size = kHidden / heads, pastLength = 3, total = pastLength + kSeq;
        const RtTensor x = randomTensor({kBatch, kSeq, kHidden}, 70), w = randomTensor({kHidden, 3 * kHidden}, 71, 0.3f),
                       bias = randomTensor({3 * kHidden}, 72, 0.1f), past = randomTensor({2, kBatch, heads, pastLength, size}, 73);
        std::vector<int32_t> maskValues(size_t(kBatch * total), 1);
        maskValues[0] = maskValues[1] = 0;  // the first sequence's two oldest keys are padding
        const RtTensor mask = ints({kBatch, total}, maskValues);
        GraphBuilder g;
        auto outs = g.node("Attention",
                           {g.input("x", DType::Float32, Shape::ofSizes({kBatch, kSeq, kHidden})), g.initializer(constant("w", w)),
                            g.initializer(constant("bias", bias)), g.input("mask", DType::Int32, Shape::ofSizes({kBatch, total})),
                            g.input("past", DType::Float32, Shape::ofSizes(past.dims))},
                           {"y", "present"}, {intAttr("num_heads", heads), intAttr("unidirectional", 1)}, "gpt_attention", kMs);
        for (ValueId v : outs) g.output(v);
        const Model m = imported(g);
        QCOMPARE(m.graph->value(outs[1]).type, ValueType::tensor(DType::Float32, Shape::ofSizes({2, kBatch, heads, total, size})));

        // This call's K and V after the past's, per head; then the documented attention.
        std::vector<double> qkv(size_t(kBatch * kSeq * 3 * kHidden));
        for (int64_t r = 0; r < kBatch * kSeq; ++r)
            for (int64_t c = 0; c < 3 * kHidden; ++c) {
                double sum = bias.as<float>()[c];
                for (int64_t i = 0; i < kHidden; ++i) sum += double(x.as<float>()[r * kHidden + i]) * w.as<float>()[i * 3 * kHidden + c];
                qkv[size_t(r * 3 * kHidden + c)] = sum;
            }
        RtTensor wantPresent = allocateTensor(DType::Float32, {2, kBatch, heads, total, size});
        auto cached = [&](int kv, int64_t b, int64_t h, int64_t t, int64_t i) -> double {
            if (t < pastLength) return past.as<float>()[(((kv * kBatch + b) * heads + h) * pastLength + t) * size + i];
            return qkv[size_t((b * kSeq + t - pastLength) * 3 * kHidden + (1 + kv) * kHidden + h * size + i)];
        };
        for (int kv = 0; kv < 2; ++kv)
            for (int64_t b = 0; b < kBatch; ++b)
                for (int64_t h = 0; h < heads; ++h)
                    for (int64_t t = 0; t < total; ++t)
                        for (int64_t i = 0; i < size; ++i)
                            wantPresent.as<float>()[(((kv * kBatch + b) * heads + h) * total + t) * size + i] = float(cached(kv, b, h, t, i));
        RtTensor want = allocateTensor(DType::Float32, {kBatch, kSeq, kHidden});
        for (int64_t b = 0; b < kBatch; ++b)
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t s = 0; s < kSeq; ++s) {
                    std::vector<double> p(static_cast<size_t>(total));
                    double best = -1e300, sum = 0;
                    for (int64_t t = 0; t < total; ++t) {
                        double dot = 0;
                        for (int64_t i = 0; i < size; ++i) dot += qkv[size_t((b * kSeq + s) * 3 * kHidden + h * size + i)] * cached(0, b, h, t, i);
                        p[size_t(t)] = dot / std::sqrt(double(size)) + (maskValues[size_t(b * total + t)] ? 0.0 : kFilter) +
                                       (t > pastLength + s ? kFilter : 0.0);
                        best = std::max(best, p[size_t(t)]);
                    }
                    for (double& v : p) sum += v = std::exp(v - best);
                    for (int64_t i = 0; i < size; ++i) {
                        double o = 0;
                        for (int64_t t = 0; t < total; ++t) o += p[size_t(t)] / sum * cached(1, b, h, t, i);
                        want.as<float>()[(b * kSeq + s) * kHidden + h * size + i] = float(o);
                    }
                }
        const auto got = runModel(m, {x, mask, past});
        expectClose(got[0], want, 2e-5);
        expectClose(got[1], wantPresent, 1e-5);
        auto o2 = compileWith(m, *pipelinePasses("O2"));
        QCOMPARE(countContrib(o2.model, "Attention"), 1);  // the lowering leaves a cache to the kernel
        expectClose(runModel(o2.model, {x, mask, past})[0], want, 2e-5);

        // A past of another shape: one line naming it and what was expected.
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(bool(exec));
        auto out = (*exec)->run({x, mask, randomTensor({2, kBatch, heads, pastLength, size + 1}, 74)});
        QVERIFY(!out);
        const std::string message = out.status().message();
        QVERIFY2(message.find("past") != std::string::npos && message.find('\n') == std::string::npos,
                 message.c_str());
    }

    void embedLayerNormalizationSumsNormalizesAndCounts() {
        constexpr int64_t vocab = 11, positions = 9;
        const RtTensor words = randomTensor({vocab, kHidden}, 40),
                       position = randomTensor({positions, kHidden}, 41),
                       segment = randomTensor({2, kHidden}, 42),
                       gamma = randomTensor({kHidden}, 43), beta = randomTensor({kHidden}, 44);
        const RtTensor ids = ints({kBatch, kSeq}, {1, 5, 10, 0, 3, 3, 7, 2, 9, 4, 6, 8});
        const RtTensor segments = ints({kBatch, kSeq}, {0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1});
        const RtTensor mask = ints({kBatch, kSeq}, {1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1});
        GraphBuilder g;
        auto outs =
            g.node("EmbedLayerNormalization",
                   {g.input("ids", DType::Int32, Shape::ofSizes({kBatch, kSeq})),
                    g.input("segments", DType::Int32, Shape::ofSizes({kBatch, kSeq})),
                    g.initializer(constant("words", words)),
                    g.initializer(constant("positions", position)),
                    g.initializer(constant("segment", segment)),
                    g.initializer(constant("gamma", gamma)), g.initializer(constant("beta", beta)),
                    g.input("mask", DType::Int32, Shape::ofSizes({kBatch, kSeq}))},
                   {"y", "mask_index", "sum"}, {floatAttr("epsilon", 1e-5f)}, "embeddings", kMs);
        for (ValueId v : outs) g.output(v);
        const Model m = imported(g);
        QCOMPARE(m.graph->value(outs[1]).type,
                 ValueType::tensor(DType::Int32, Shape::ofSizes({kBatch})));
        const auto got = runModel(m, {ids, segments, mask});

        RtTensor wantSum = allocateTensor(DType::Float32, {kBatch, kSeq, kHidden});
        const RtTensor wantY = naiveEmbedLayerNorm(words, position, segment, gamma, beta, ids,
                                                   segments, 1e-5, &wantSum);
        expectClose(got[0], wantY, 1e-5);
        QCOMPARE(got[1].as<int32_t>()[0], 4);  // the mask's ones
        QCOMPARE(got[1].as<int32_t>()[1], 6);
        expectClose(got[2], wantSum, 1e-6);

        // A token id outside the vocabulary: one line naming the node and the id.
        const RtTensor wrong = ints({kBatch, kSeq}, {1, 5, 10, 0, 3, 3, 7, 2, 9, 4, 6, 11});
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(bool(exec));
        auto out = (*exec)->run({wrong, segments, mask});
        QVERIFY(!out);
        const std::string message = out.status().message();
        QVERIFY2(message.find("embeddings") != std::string::npos &&
                     message.find("input_ids holds 11") != std::string::npos,
                 message.c_str());
    }

    // QAttention as quantize_dynamic writes it: uint8 input with its zero point, weights int8
    // with one scale per column and zero points of 0 (the VNNI product where the CPU has it),
    // or uint8 with one zero point (the int8 GEMM). Against the documented attention over
    // the dequantized input and weights.
    void quantizedAttentionAttendsOverTheDequantizedProjection_data() {
        QTest::addColumn<bool>("perColumn");
        QTest::newRow("int8 weights, a scale per column") << true;
        QTest::newRow("uint8 weights with a zero point") << false;
    }
    void quantizedAttentionAttendsOverTheDequantizedProjection() {
        QFETCH(bool, perColumn);
        const int64_t heads = 2, packed = 3 * kHidden, sizes[3] = {kHidden, kHidden, kHidden};
        const DType wType = perColumn ? DType::Int8 : DType::UInt8;
        const RtTensor x = randomBytes(DType::UInt8, {kBatch, kSeq, kHidden}, 50),
                       w = randomBytes(wType, {kHidden, packed}, 51);
        const RtTensor xScale = scalarOf(DType::Float32, 0.02), xZero = scalarOf(DType::UInt8, 131);
        RtTensor wScale = scalarOf(DType::Float32, 0.004), wZero = scalarOf(wType, 120);
        if (perColumn) {
            wScale = randomTensor({packed}, 52, 0.001f);
            for (int64_t c = 0; c < packed; ++c)
                wScale.as<float>()[c] = 0.004f + std::abs(wScale.as<float>()[c]);
            wZero = allocateTensor(DType::Int8, {packed});
            std::fill_n(wZero.as<int8_t>(), packed, int8_t(0));
        }
        const RtTensor bias = randomTensor({packed}, 53, 0.1f), maskIndex = ints({kBatch}, {4, 6});

        GraphBuilder g;
        const ValueId out =
            g.node("QAttention",
                   {g.input("x", DType::UInt8, Shape::ofSizes({kBatch, kSeq, kHidden})),
                    g.initializer(tensorToConstant(w, "w")), g.initializer(constant("bias", bias)),
                    g.input("x_scale", DType::Float32, Shape::ofSizes({})),
                    g.initializer(tensorToConstant(wScale, "w_scale")),
                    g.input("mask_index", DType::Int32, Shape::ofSizes({kBatch})),
                    g.input("x_zero", DType::UInt8, Shape::ofSizes({})),
                    g.initializer(tensorToConstant(wZero, "w_zero"))},
                   {"y"}, {intAttr("num_heads", heads)}, "quantized_attention", kMs)[0];
        g.output(out);
        const Model m = imported(g);
        QCOMPARE(m.graph->value(out).type,
                 ValueType::tensor(DType::Float32, Shape::ofSizes({kBatch, kSeq, kHidden})));

        const RtTensor want = naiveAttention(
            dequantized(x, xScale, xZero), dequantized(w, wScale, wZero), bias, heads, sizes,
            1.0f / std::sqrt(float(kHidden / heads)), [&](int64_t b, int64_t, int64_t, int64_t k) {
                return k >= maskIndex.as<int32_t>()[b] ? double(kFilter) : 0.0;
            });
        const std::vector<RtTensor> feeds = {x, xScale, maskIndex, xZero};
        expectClose(runModel(m, feeds)[0], want, 2e-5);
        auto o2 = compileWith(m, *pipelinePasses("O2"));
        QCOMPARE(countContrib(o2.model, "QAttention"), 1);
        expectClose(runModel(o2.model, feeds)[0], want, 2e-5);
    }

    // QEmbedLayerNormalization: the five tables as uint8 with a scale and zero point each, the
    // mask counted as EmbedLayerNormalization counts it.
    void quantizedEmbedLayerNormalizationDequantizesItsTables() {
        constexpr int64_t vocab = 11, positions = 9;
        const char* names[5] = {"words", "positions", "segment", "gamma", "beta"};
        const std::vector<int64_t> dims[5] = {
            {vocab, kHidden}, {positions, kHidden}, {2, kHidden}, {kHidden}, {kHidden}};
        RtTensor q[5], scale[5], zero[5], table[5];
        for (int t = 0; t < 5; ++t) {
            q[t] = randomBytes(DType::UInt8, dims[t], 60 + t);
            scale[t] = scalarOf(DType::Float32, 0.01 * (t + 1));
            zero[t] = scalarOf(DType::UInt8, 100 + 7 * t);
            table[t] = dequantized(q[t], scale[t], zero[t]);
        }
        const RtTensor ids = ints({kBatch, kSeq}, {1, 5, 10, 0, 3, 3, 7, 2, 9, 4, 6, 8});
        const RtTensor segments = ints({kBatch, kSeq}, {0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1});
        const RtTensor mask = ints({kBatch, kSeq}, {1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0});
        GraphBuilder g;
        std::vector<ValueId> inputs = {
            g.input("ids", DType::Int32, Shape::ofSizes({kBatch, kSeq})),
            g.input("segments", DType::Int32, Shape::ofSizes({kBatch, kSeq}))};
        for (int t = 0; t < 5; ++t)
            inputs.push_back(g.initializer(tensorToConstant(q[t], names[t])));
        inputs.push_back(g.input("mask", DType::Int32, Shape::ofSizes({kBatch, kSeq})));
        for (int t = 0; t < 5; ++t)
            inputs.push_back(
                g.initializer(tensorToConstant(scale[t], std::string(names[t]) + "_scale")));
        for (int t = 0; t < 5; ++t)
            inputs.push_back(
                g.initializer(tensorToConstant(zero[t], std::string(names[t]) + "_zero")));
        auto outs = g.node("QEmbedLayerNormalization", inputs, {"y", "mask_index"},
                           {floatAttr("epsilon", 1e-5f)}, "embeddings", kMs);
        for (ValueId v : outs) g.output(v);
        const Model m = imported(g);
        QCOMPARE(m.graph->value(outs[0]).type,
                 ValueType::tensor(DType::Float32, Shape::ofSizes({kBatch, kSeq, kHidden})));
        QCOMPARE(m.graph->value(outs[1]).type,
                 ValueType::tensor(DType::Int32, Shape::ofSizes({kBatch})));
        const RtTensor want = naiveEmbedLayerNorm(table[0], table[1], table[2], table[3], table[4],
                                                  ids, segments, 1e-5);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(bool(exec));
        for (int pass = 0; pass < 2;
             ++pass) {  // the second run reads the tables dequantized by the first
            auto got = (*exec)->run({ids, segments, mask});
            QVERIFY(bool(got));
            expectClose((*got)[0], want, 1e-5);
            QCOMPARE((*got)[1].as<int32_t>()[0], 3);
            QCOMPARE((*got)[1].as<int32_t>()[1], 5);
        }
    }
};

QTEST_GUILESS_MAIN(TestContribAttention)
#include "tst_contrib_attention.moc"
