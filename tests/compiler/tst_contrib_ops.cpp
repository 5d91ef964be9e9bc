// ONNX Runtime's com.microsoft ops that its optimizer saves into models (contrib_ops.cpp,
// matmul_integer_to_float.cpp), each against the standard ops it stands for, run on the same
// CPU runtime: the Gelu family, SkipLayerNormalization with its bias and sum output,
// FusedMatMul with every transpose attribute, and DynamicQuantizeMatMul to the bit against
// DynamicQuantizeLinear, MatMulInteger, Cast, Mul and Add. And a model holding such an op in
// front of a Gemm and a Shape imports (libonnx's value propagation crashed on it).
#include <QTest>

#include <cmath>
#include <cstring>

#include "compiler/pipelines.h"
#include "contrib_test_support.h"
#include "core/graph_builder.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;


class TestContribOps : public QObject {
    Q_OBJECT
private slots:
    void geluFamilyFollowsItsFormulas() {
        const RtTensor x = randomTensor({2, 3, 40}, 1, 2.0f), bias = randomTensor({40}, 2);
        struct Case {
            const char* op;
            bool bias;
            double (*f)(double);
        };
        const Case cases[] = {
            {"Gelu", false, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
            {"BiasGelu", true, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
            {"FastGelu", true,
             [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }},
            {"QuickGelu", false, [](double v) { return v / (1 + std::exp(-1.702 * v)); }},
        };
        for (const Case& c : cases) {
            GraphBuilder b;
            ValueId in = b.input("x", DType::Float32, Shape::ofSizes({2, 3, 40}));
            std::vector<ValueId> inputs{in};
            if (c.bias) inputs.push_back(b.initializer(constant("bias", bias)));
            b.output(b.node(c.op, inputs, {"y"}, {}, c.op, kMs)[0]);
            const RtTensor got = runModel(imported(b), {x})[0];
            RtTensor want = allocateTensor(DType::Float32, x.dims);
            for (int64_t i = 0; i < x.numel(); ++i)
                want.as<float>()[i] = float(c.f(double(x.as<float>()[i]) + (c.bias ? bias.as<float>()[i % 40] : 0.0)));
            expectClose(got, want, 2e-6);
        }
    }

    void skipLayerNormalizationIsAddsThenLayerNorm() {
        const RtTensor x = randomTensor({2, 5, 48}, 3), skip = randomTensor({2, 5, 48}, 4);
        const RtTensor gamma = randomTensor({48}, 5), beta = randomTensor({48}, 6), bias = randomTensor({48}, 7);
        GraphBuilder b;
        ValueId in = b.input("x", DType::Float32, Shape::ofSizes({2, 5, 48}));
        ValueId sk = b.input("skip", DType::Float32, Shape::ofSizes({2, 5, 48}));
        auto outs = b.node("SkipLayerNormalization",
                           {in, sk, b.initializer(constant("gamma", gamma)), b.initializer(constant("beta", beta)),
                            b.initializer(constant("bias", bias))},
                           {"y", "", "", "sum"}, {floatAttr("epsilon", 1e-5f)}, "sln", kMs);
        b.output(outs[0]);
        b.output(outs[3]);
        const auto got = runModel(imported(b), {x, skip});

        GraphBuilder r;
        ValueId rin = r.input("x", DType::Float32, Shape::ofSizes({2, 5, 48}));
        ValueId rsk = r.input("skip", DType::Float32, Shape::ofSizes({2, 5, 48}));
        ValueId sum = r.op("Add", {r.op("Add", {rin, rsk}, "s0"), r.initializer(constant("bias", bias))}, "sum");
        r.output(r.op("LayerNormalization", {sum, r.initializer(constant("gamma", gamma)), r.initializer(constant("beta", beta))},
                      "y", {floatAttr("epsilon", 1e-5f), intAttr("axis", -1)}));
        r.output(sum);
        const auto want = runModel(imported(r), {x, skip});
        expectClose(got[0], want[0], 1e-5);
        expectClose(got[1], want[1], 0);
    }

    void fusedMatMulTransposesAsOnnxRuntime_data() {
        QTest::addColumn<int>("transA");
        QTest::addColumn<int>("transB");
        QTest::addColumn<int>("transBatchA");
        QTest::addColumn<int>("transBatchB");
        for (int bits = 0; bits < 16; ++bits)
            QTest::newRow(("attributes " + std::to_string(bits)).c_str())
                << (bits & 1) << (bits >> 1 & 1) << (bits >> 2 & 1) << (bits >> 3 & 1);
    }
    void fusedMatMulTransposesAsOnnxRuntime() {
        // Every axis of length 3, so every combination is a valid product; the reference moves
        // the axes with Transpose (transBatch: [1, ..., rank - 2, 0, rank - 1], checked against
        // ONNX Runtime 1.31 by hand) and scales with Mul.
        QFETCH(int, transA);
        QFETCH(int, transB);
        QFETCH(int, transBatchA);
        QFETCH(int, transBatchB);
        const RtTensor a = randomTensor({3, 3, 3, 3}, 8), bValues = randomTensor({3, 3, 3, 3}, 9);
        GraphBuilder b;
        ValueId in = b.input("a", DType::Float32, Shape::ofSizes({3, 3, 3, 3}));
        b.output(b.node("FusedMatMul", {in, b.initializer(constant("b", bValues))}, {"y"},
                        {floatAttr("alpha", 0.5f), intAttr("transA", transA), intAttr("transB", transB),
                         intAttr("transBatchA", transBatchA), intAttr("transBatchB", transBatchB)},
                        "fmm", kMs)[0]);
        GraphBuilder r;
        auto moved = [&](ValueId v, int trans, int transBatch, const char* name) {
            std::vector<int64_t> perm{0, 1, 2, 3};
            if (transBatch) perm = {1, 2, 0, 3};
            if (trans) std::swap(perm[2], perm[3]);
            return r.op("Transpose", {v}, name, {intsAttr("perm", perm)});
        };
        ValueId ra = moved(r.input("a", DType::Float32, Shape::ofSizes({3, 3, 3, 3})), transA, transBatchA, "at");
        ValueId rb = moved(r.initializer(constant("b", bValues)), transB, transBatchB, "bt");
        r.output(r.op("Mul", {r.op("MatMul", {ra, rb}, "p"), r.initializer(floatTensor("half", {}, {0.5f}))}, "y"));
        expectClose(runModel(imported(b), {a})[0], runModel(imported(r), {a})[0], 1e-6);
    }

    void dynamicQuantizeMatMulIsItsChainToTheBit() {
        const int64_t k = 64, n = 40;
        const RtTensor a = randomTensor({2, 7, k}, 10, 3.0f), bias = randomTensor({n}, 11);
        std::mt19937 rng(12);
        std::string bytes(size_t(k * n), '\0');
        for (char& c : bytes) c = char(int(rng() % 255) - 127);
        std::vector<float> scales(static_cast<size_t>(n));
        for (float& s : scales) s = 0.002f + float(rng() % 100) * 1e-4f;
        auto weights = [&](GraphBuilder& g) {
            return g.initializer(Tensor("w", DType::Int8, {k, n}, makeBuffer(bytes), 0, bytes.size()));
        };
        GraphBuilder b;
        ValueId in = b.input("a", DType::Float32, Shape::ofSizes({2, 7, k}));
        b.output(b.node("DynamicQuantizeMatMul",
                        {in, weights(b), b.initializer(floatTensor("ws", {n}, scales)),
                         b.initializer(Tensor("wz", DType::Int8, {}, makeBuffer(std::string(1, '\0')), 0, 1)),
                         b.initializer(constant("bias", bias))},
                        {"y"}, {}, "dqmm", kMs)[0]);
        GraphBuilder r;
        auto q = r.node("DynamicQuantizeLinear", {r.input("a", DType::Float32, Shape::ofSizes({2, 7, k}))},
                        {"aq", "as", "az"});
        ValueId acc = r.op("MatMulInteger", {q[0], weights(r), q[2]}, "acc");
        ValueId wide = r.op("Cast", {acc}, "wide", {intAttr("to", int64_t(DType::Float32))});
        ValueId scale = r.op("Mul", {q[1], r.initializer(floatTensor("ws", {n}, scales))}, "scale");
        r.output(r.op("Add", {r.op("Mul", {wide, scale}, "scaled"), r.initializer(constant("bias", bias))}, "y"));
        const RtTensor got = runModel(imported(b), {a})[0], want = runModel(imported(r), {a})[0];
        QCOMPARE(got.dims, want.dims);
        QVERIFY(std::memcmp(got.data, want.data, got.bytes()) == 0);
    }

    void lowerContribOpsKeepsWhatTheGraphComputes() {
        // A block as ONNX Runtime's optimizer saves it: FusedMatMul (B transposed, scaled),
        // BiasGelu, FastGelu with a bias, SkipLayerNormalization with its bias and its sum read;
        // and one SkipLayerNormalization whose mean is read, which must stay.
        const RtTensor x = randomTensor({2, 4, 16}, 20), skip = randomTensor({2, 4, 16}, 21);
        GraphBuilder b;
        ValueId in = b.input("x", DType::Float32, Shape::ofSizes({2, 4, 16}));
        ValueId sk = b.input("skip", DType::Float32, Shape::ofSizes({2, 4, 16}));
        auto init = [&](const char* name, std::vector<int64_t> dims, uint32_t seed) {
            return b.initializer(constant(name, randomTensor(std::move(dims), seed)));
        };
        ValueId p = b.node("FusedMatMul", {in, init("w", {16, 16}, 22)}, {"p"},
                           {floatAttr("alpha", 0.25f), intAttr("transB", 1)}, "fmm", kMs)[0];
        ValueId g = b.node("BiasGelu", {p, init("b1", {16}, 23)}, {"g"}, {}, "bg", kMs)[0];
        ValueId f = b.node("FastGelu", {g, init("b2", {16}, 24)}, {"f"}, {}, "fg", kMs)[0];
        auto sln = b.node("SkipLayerNormalization", {f, sk, init("gamma", {16}, 25), init("beta", {16}, 26), init("bias", {16}, 27)},
                          {"y", "", "", "sum"}, {floatAttr("epsilon", 1e-5f)}, "sln", kMs);
        auto kept = b.node("SkipLayerNormalization", {sln[0], sk, init("gamma2", {16}, 28)}, {"z", "mean"},
                           {floatAttr("epsilon", 1e-5f)}, "sln2", kMs);
        b.output(kept[0]);
        b.output(kept[1]);
        b.output(sln[3]);
        const Model m = imported(b);
        auto lowered = compileWith(m, {"lower-contrib-ops"});
        int contrib = 0;
        for (NodeId id : lowered.model.graph->order()) contrib += lowered.model.graph->node(id).domain == kMs;
        QCOMPARE(contrib, 1);  // the norm whose mean is read
        QCOMPARE(countOps(*lowered.model.graph, "MatMul"), 1);
        const auto want = runModel(m, {x, skip}), got = runModel(lowered.model, {x, skip});
        QCOMPARE(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) expectClose(got[i], want[i], 1e-5);
        // O2 on the lowered graph: the product carries the bias and GELU in its epilogue.
        auto o2 = compileWith(m, *pipelinePasses("O2"));
        expectClose(runModel(o2.model, {x, skip})[0], want[0], 1e-5);
    }

    void aShapeBehindAnOpWithoutSchemaImports() {
        // FusedMatMul (no libonnx schema: its output untyped), a Gemm, a Shape of the Gemm's
        // output: libonnx 1.12's value propagation dereferenced the missing type and crashed
        // the whole program. Import now runs its inference without value propagation there.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4, 6}));
        ValueId p = b.node("FusedMatMul", {x, b.initializer(constant("w", randomTensor({6, 6}, 13)))}, {"p"}, {}, "fmm",
                           kMs)[0];
        ValueId g = b.op("Gemm", {p, b.initializer(constant("w2", randomTensor({6, 5}, 14)))}, "g");
        b.output(b.op("Shape", {g}, "shape", {intAttr("start", 0)}));
        const Model m = imported(b);
        const auto out = runModel(m, {randomTensor({4, 6}, 15)});
        QCOMPARE(out[0].numel(), int64_t(2));
        QCOMPARE(out[0].as<int64_t>()[0], int64_t(4));
        QCOMPARE(out[0].as<int64_t>()[1], int64_t(5));
    }
};

QTEST_GUILESS_MAIN(TestContribOps)
#include "tst_contrib_ops.moc"
