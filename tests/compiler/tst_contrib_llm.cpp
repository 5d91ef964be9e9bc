// The LLM ops onnxruntime-genai writes (contrib_llm.cpp, contrib_ops.cpp) against loops
// written from their documentation: RotaryEmbedding in halves and interleaved, with a partial
// rotary width; GroupQueryAttention for a prompt, a decoding step after a past, and Q, K and V
// packed with the rotation inside; the two RMS norms. Each was also checked against ONNX
// Runtime 1.31 on the same files (docs/benchmarks.md).
#include <QTest>

#include <cmath>

#include "compiler/pipelines.h"
#include "contrib_test_support.h"
#include "core/graph_builder.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

constexpr int64_t kHead = 8, kPositions = 16;

RtTensor int64s(std::vector<int64_t> dims, std::vector<int64_t> values) {
    RtTensor t = allocateTensor(DType::Int64, std::move(dims));
    std::copy(values.begin(), values.end(), t.as<int64_t>());
    return t;
}

RtTensor int32s(std::vector<int64_t> dims, std::vector<int32_t> values) {
    RtTensor t = allocateTensor(DType::Int32, std::move(dims));
    std::copy(values.begin(), values.end(), t.as<int32_t>());
    return t;
}

// cos and sin of position x frequency, (positions, half).
std::pair<RtTensor, RtTensor> caches(int64_t half) {
    RtTensor c = allocateTensor(DType::Float32, {kPositions, half}), s = allocateTensor(DType::Float32, {kPositions, half});
    for (int64_t p = 0; p < kPositions; ++p)
        for (int64_t i = 0; i < half; ++i) {
            const double angle = double(p) / std::pow(10000.0, double(i) / double(half));
            c.as<float>()[p * half + i] = float(std::cos(angle));
            s.as<float>()[p * half + i] = float(std::sin(angle));
        }
    return {c, s};
}

// The documented rotation of one head's first `rotary` values at position p.
void rotateNaive(float* x, int64_t p, int64_t rotary, bool interleaved, const RtTensor& cos, const RtTensor& sin) {
    const int64_t half = rotary / 2, width = cos.dims[1];
    std::vector<float> in(x, x + rotary);
    for (int64_t i = 0; i < half; ++i) {
        const double c = cos.as<float>()[p * width + i], s = sin.as<float>()[p * width + i];
        const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
        x[a] = float(in[size_t(a)] * c - in[size_t(b)] * s);
        x[b] = float(in[size_t(b)] * c + in[size_t(a)] * s);
    }
}

Model singleNode(const std::string& op, const std::vector<std::pair<std::string, RtTensor>>& inputs,
                 const std::vector<std::pair<std::string, RtTensor>>& constants, std::vector<std::string> outputs,
                 std::vector<Attribute> attrs, const std::string& domain = kMs) {
    GraphBuilder g;
    std::vector<ValueId> ins;
    for (const auto& [name, t] : inputs) ins.push_back(name.empty() ? ValueId() : g.input(name, t.dtype, Shape::ofSizes(t.dims)));
    for (const auto& [name, t] : constants) ins.push_back(g.initializer(constant(name, t)));
    for (ValueId out : g.node(op, ins, outputs, attrs, "op", domain)) g.output(out);
    return imported(g);
}

}  // namespace

class TestContribLlm : public QObject {
    Q_OBJECT
private slots:
    void rotaryEmbeddingTurnsEachHead_data() {
        QTest::addColumn<bool>("interleaved");
        QTest::addColumn<int>("rotary");
        QTest::newRow("halves") << false << int(kHead);
        QTest::newRow("interleaved pairs") << true << int(kHead);
        QTest::newRow("the first half of each head") << false << int(kHead / 2);
    }
    void rotaryEmbeddingTurnsEachHead() {
        QFETCH(bool, interleaved);
        QFETCH(int, rotary);
        const int64_t batch = 2, seq = 3, heads = 3;
        const RtTensor x = randomTensor({batch, seq, heads * kHead}, 1);
        const RtTensor positions = int64s({batch, seq}, {0, 1, 2, 9, 4, 15});
        const auto [cos, sin] = caches(rotary / 2);
        const Model m = singleNode("RotaryEmbedding", {{"x", x}, {"positions", positions}}, {{"cos", cos}, {"sin", sin}}, {"y"},
                                   {intAttr("num_heads", heads), intAttr("interleaved", interleaved), intAttr("rotary_embedding_dim", rotary)});
        RtTensor want = allocateTensor(DType::Float32, x.dims);
        std::copy(x.as<float>(), x.as<float>() + x.numel(), want.as<float>());
        for (int64_t r = 0; r < batch * seq; ++r)
            for (int64_t h = 0; h < heads; ++h)
                rotateNaive(want.as<float>() + (r * heads + h) * kHead, positions.as<int64_t>()[r], rotary, interleaved, cos, sin);
        expectClose(runModel(m, {x, positions})[0], want, 1e-6);
    }

    void groupQueryAttentionAttendsCausallyOverPastAndNew_data() {
        QTest::addColumn<int>("seq");
        QTest::addColumn<int>("past");
        QTest::addColumn<bool>("packed");
        QTest::addColumn<bool>("rotary");
        QTest::addColumn<int>("window");      // local_window_size (-1: none)
        QTest::addColumn<double>("softcap");  // 0: none
        QTest::addColumn<bool>("smooth");
        QTest::newRow("prompt") << 4 << 0 << false << false << -1 << 0.0 << false;
        QTest::newRow("decoding after a past") << 1 << 5 << false << false << -1 << 0.0 << false;
        QTest::newRow("a chunk after a past, rotated") << 3 << 5 << false << true << -1 << 0.0 << false;
        QTest::newRow("packed prompt, rotated") << 4 << 0 << true << true << -1 << 0.0 << false;
        QTest::newRow("a sliding window of 2 after a past") << 3 << 5 << false << false << 2 << 0.0 << false;
        QTest::newRow("a sliding window of 3 in a prompt") << 6 << 0 << false << false << 3 << 0.0 << false;
        QTest::newRow("soft cap and smooth softmax") << 4 << 2 << false << false << -1 << 0.5 << true;
    }
    void groupQueryAttentionAttendsCausallyOverPastAndNew() {
        QFETCH(int, seq);
        QFETCH(int, past);
        QFETCH(bool, packed);
        QFETCH(bool, rotary);
        QFETCH(int, window);
        QFETCH(double, softcap);
        QFETCH(bool, smooth);
        const int64_t heads = 4, kvHeads = 2, total = past + seq;
        const RtTensor q = randomTensor({1, seq, heads * kHead}, 2), k = randomTensor({1, seq, kvHeads * kHead}, 3),
                       v = randomTensor({1, seq, kvHeads * kHead}, 4);
        const RtTensor pastK = randomTensor({1, kvHeads, past, kHead}, 5), pastV = randomTensor({1, kvHeads, past, kHead}, 6);
        const auto [cos, sin] = caches(kHead / 2);
        RtTensor qkv = allocateTensor(DType::Float32, {1, seq, (heads + 2 * kvHeads) * kHead});
        for (int64_t s = 0; s < seq; ++s) {
            float* row = qkv.as<float>() + s * (heads + 2 * kvHeads) * kHead;
            std::copy_n(q.as<float>() + s * heads * kHead, heads * kHead, row);
            std::copy_n(k.as<float>() + s * kvHeads * kHead, kvHeads * kHead, row + heads * kHead);
            std::copy_n(v.as<float>() + s * kvHeads * kHead, kvHeads * kHead, row + (heads + kvHeads) * kHead);
        }
        std::vector<std::pair<std::string, RtTensor>> inputs;
        if (packed) inputs = {{"qkv", qkv}, {"", {}}, {"", {}}};
        else inputs = {{"q", q}, {"k", k}, {"v", v}};
        if (past) inputs.insert(inputs.end(), {{"past_key", pastK}, {"past_value", pastV}});
        else inputs.insert(inputs.end(), {{"", {}}, {"", {}}});
        inputs.insert(inputs.end(), {{"seqlens_k", int32s({1}, {int32_t(total - 1)})}, {"total", int32s({}, {int32_t(total)})}});
        std::vector<std::pair<std::string, RtTensor>> constants;
        if (rotary) constants = {{"cos", cos}, {"sin", sin}};
        const Model m = singleNode("GroupQueryAttention", inputs, constants, {"y", "present_key", "present_value"},
                                   {intAttr("num_heads", heads), intAttr("kv_num_heads", kvHeads), intAttr("do_rotary", rotary),
                                    intAttr("local_window_size", window), floatAttr("softcap", float(softcap)),
                                    intAttr("smooth_softmax", smooth)});
        std::vector<RtTensor> feeds;
        for (const auto& [name, t] : inputs)
            if (!name.empty()) feeds.push_back(t);
        const auto got = runModel(m, feeds);

        // present: the past, then the new keys (rotated at their positions) and values.
        RtTensor wantK = allocateTensor(DType::Float32, {1, kvHeads, total, kHead});
        RtTensor wantV = allocateTensor(DType::Float32, {1, kvHeads, total, kHead});
        for (int64_t h = 0; h < kvHeads; ++h)
            for (int64_t t = 0; t < total; ++t) {
                float* kt = wantK.as<float>() + (h * total + t) * kHead;
                float* vt = wantV.as<float>() + (h * total + t) * kHead;
                const bool old = t < past;
                std::copy_n(old ? pastK.as<float>() + (h * past + t) * kHead : k.as<float>() + ((t - past) * kvHeads + h) * kHead, kHead, kt);
                std::copy_n(old ? pastV.as<float>() + (h * past + t) * kHead : v.as<float>() + ((t - past) * kvHeads + h) * kHead, kHead, vt);
                if (rotary && !old) rotateNaive(kt, t, kHead, false, cos, sin);
            }
        RtTensor want = allocateTensor(DType::Float32, {1, seq, heads * kHead});
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t s = 0; s < seq; ++s) {
                std::vector<float> query(q.as<float>() + (s * heads + h) * kHead, q.as<float>() + (s * heads + h + 1) * kHead);
                if (rotary) rotateNaive(query.data(), past + s, kHead, false, cos, sin);
                // The keys the query sees: `window` of them, its own position the last (all
                // before it without a window), as ONNX Runtime 1.31 counts them.
                const int64_t keys = past + s + 1, kv = h / (heads / kvHeads);
                const int64_t first = window > 0 ? std::max<int64_t>(0, keys - window) : 0;
                std::vector<double> p(static_cast<size_t>(keys), 0.0);
                double best = smooth ? 0.0 : -1e300, sum = 0;
                for (int64_t t = first; t < keys; ++t) {
                    double dot = 0;
                    for (int64_t i = 0; i < kHead; ++i) dot += double(query[size_t(i)]) * wantK.as<float>()[(kv * total + t) * kHead + i];
                    double x = dot / std::sqrt(double(kHead));
                    if (softcap > 0) x = softcap * std::tanh(x / softcap);
                    best = std::max(best, p[size_t(t)] = x);
                }
                for (int64_t t = first; t < keys; ++t) sum += p[size_t(t)] = std::exp(p[size_t(t)] - best);
                if (smooth) sum += std::exp(-best);  // the extra zero logit
                for (int64_t i = 0; i < kHead; ++i) {
                    double out = 0;
                    for (int64_t t = first; t < keys; ++t) out += p[size_t(t)] / sum * wantV.as<float>()[(kv * total + t) * kHead + i];
                    want.as<float>()[(s * heads + h) * kHead + i] = float(out);
                }
            }
        expectClose(got[0], want, 2e-5);
        expectClose(got[1], wantK, 1e-6);
        expectClose(got[2], wantV, 0);
    }

    void simplifiedNormsAreRootMeanSquare() {
        const RtTensor x = randomTensor({2, 3, 24}, 7), skip = randomTensor({2, 3, 24}, 8), gamma = randomTensor({24}, 9),
                       bias = randomTensor({24}, 10);
        auto rms = [&](bool withSkip) {
            RtTensor y = allocateTensor(DType::Float32, x.dims);
            for (int64_t r = 0; r < 6; ++r) {
                std::vector<double> v(24);
                double square = 0;
                for (int64_t i = 0; i < 24; ++i) {
                    v[size_t(i)] = x.as<float>()[r * 24 + i] + (withSkip ? double(skip.as<float>()[r * 24 + i]) + bias.as<float>()[i] : 0.0);
                    square += v[size_t(i)] * v[size_t(i)] / 24;
                }
                for (int64_t i = 0; i < 24; ++i)
                    y.as<float>()[r * 24 + i] = float(v[size_t(i)] / std::sqrt(square + 1e-5) * gamma.as<float>()[i]);
            }
            return y;
        };
        const Model plain = singleNode("SimplifiedLayerNormalization", {{"x", x}}, {{"gamma", gamma}}, {"y"}, {floatAttr("epsilon", 1e-5f)}, "");
        expectClose(runModel(plain, {x})[0], rms(false), 1e-5);
        // O1 writes it as our RmsNorm: ONNX's checker knows no SimplifiedLayerNormalization in its domain.
        auto o2 = compileWith(plain, *pipelinePasses("O2"));
        QCOMPARE(countOps(*o2.model.graph, "RmsNorm"), 1);
        QCOMPARE(countOps(*o2.model.graph, "SimplifiedLayerNormalization"), 0);
        expectClose(runModel(o2.model, {x})[0], rms(false), 1e-5);
        const Model skipped = singleNode("SkipSimplifiedLayerNormalization", {{"x", x}, {"skip", skip}}, {{"gamma", gamma}, {"bias", bias}},
                                         {"y"}, {floatAttr("epsilon", 1e-5f)});
        expectClose(runModel(skipped, {x, skip})[0], rms(true), 1e-5);
    }
};

QTEST_GUILESS_MAIN(TestContribLlm)
#include "tst_contrib_llm.moc"
