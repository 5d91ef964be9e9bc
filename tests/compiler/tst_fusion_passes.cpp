// The O2 fusion passes: for each, a positive case (op counts), negative cases per guard,
// a numeric comparison of the fused graph with the original on the CPU runtime (which
// also runs the ai.fusescope kernels), and a golden text dump.
#include <QTest>

#include "compiler/target.h"
#include "compiler/runtime/elementwise_program.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

Shape dims(std::vector<int64_t> d) { return Shape::ofSizes(d); }

// Unique names for the values of written-out patterns.
int g_counter = 0;  // reset before each test, so golden dumps do not depend on test order
std::string fresh() { return "v" + std::to_string(++g_counter); }

int countFused(const Graph& g, const std::string& op) {
    int n = 0;
    for (NodeId id : g.order()) n += g.node(id).domain == kFusescopeDomain && g.node(id).opType == op;
    return n;
}

// Conv -> BatchNormalization -> activation, with weights from a fixed seed.
Model convBnAct(const std::string& act, bool constantWeights = true) {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, dims({1, 3, 8, 8}));
    ValueId w = constantWeights ? b.initializer(randomFloatTensor("w", {4, 3, 3, 3}, 1, 0.5f))
                                : b.input("w", DType::Float32, dims({4, 3, 3, 3}));
    ValueId bias = b.initializer(randomFloatTensor("b", {4}, 2));
    ValueId scale = b.initializer(floatTensor("scale", {4}, {1.5f, 0.5f, 2.0f, 1.0f}));
    ValueId shift = b.initializer(floatTensor("shift", {4}, {0.1f, -0.2f, 0.3f, 0.0f}));
    ValueId mean = b.initializer(floatTensor("mean", {4}, {0.05f, -0.1f, 0.2f, 0.0f}));
    ValueId var = b.initializer(floatTensor("var", {4}, {1.0f, 0.25f, 4.0f, 0.5f}));
    ValueId c = b.op("Conv", {x, w, bias}, "c", {intsAttr("pads", {1, 1, 1, 1})}, "conv");
    ValueId n = b.op("BatchNormalization", {c, scale, shift, mean, var}, "n", {floatAttr("epsilon", 1e-5f)}, "bn");
    ValueId y = act == "Clip" ? b.op("Clip", {n, b.initializer(floatTensor("lo", {}, {0.0f})),
                                              b.initializer(floatTensor("hi", {}, {6.0f}))}, "y", {}, "act")
                              : b.op(act, {n}, "y", {}, "act");
    b.output(y);
    return withInferredTypes(b);
}

// x * 0.5 * (1 + erf(x / sqrt 2)) as torch exports it, or the tanh form.
ValueId writtenOutGelu(GraphBuilder& b, ValueId x, bool tanhForm) {
    ValueId half = b.initializer(floatTensor(fresh(), {}, {0.5f}));
    ValueId one = b.initializer(floatTensor(fresh(), {}, {1.0f}));
    if (!tanhForm) {
        ValueId s = b.op("Div", {x, b.initializer(floatTensor(fresh(), {}, {1.4142135f}))}, fresh());
        ValueId e = b.op("Erf", {s}, fresh());
        ValueId p = b.op("Add", {e, one}, fresh());
        ValueId m = b.op("Mul", {x, p}, fresh());
        return b.op("Mul", {m, half}, fresh());
    }
    ValueId cube = b.op("Pow", {x, b.initializer(floatTensor(fresh(), {}, {3.0f}))}, fresh());
    ValueId k = b.op("Mul", {cube, b.initializer(floatTensor(fresh(), {}, {0.044715f}))}, fresh());
    ValueId inner = b.op("Add", {x, k}, fresh());
    ValueId scaled = b.op("Mul", {inner, b.initializer(floatTensor(fresh(), {}, {0.7978845608f}))}, fresh());
    ValueId t = b.op("Tanh", {scaled}, fresh());
    ValueId p = b.op("Add", {t, one}, fresh());
    ValueId hx = b.op("Mul", {x, half}, fresh());
    return b.op("Mul", {hx, p}, fresh());
}

// (x - mean) / sqrt(var + eps) * gamma + beta over the last axis, as older exporters write it.
ValueId writtenOutLayerNorm(GraphBuilder& b, ValueId x, int64_t len) {
    ValueId mean = b.op("ReduceMean", {x}, fresh(), {intsAttr("axes", {-1})});
    ValueId d = b.op("Sub", {x, mean}, fresh());
    ValueId sq = b.op("Pow", {d, b.initializer(floatTensor(fresh(), {}, {2.0f}))}, fresh());
    ValueId var = b.op("ReduceMean", {sq}, fresh(), {intsAttr("axes", {-1})});
    ValueId ve = b.op("Add", {var, b.initializer(floatTensor(fresh(), {}, {1e-5f}))}, fresh());
    ValueId sd = b.op("Sqrt", {ve}, fresh());
    ValueId n = b.op("Div", {d, sd}, fresh());
    ValueId g = b.op("Mul", {n, b.initializer(randomFloatTensor("gamma", {len}, 3, 1.0f))}, fresh());
    return b.op("Add", {g, b.initializer(randomFloatTensor("beta", {len}, 4))}, fresh());
}

// Multi-head self-attention as torch exports it: projections, head split (Reshape +
// Transpose), Q scaled by a Div, K transposed for Q.K^T, an additive mask, Softmax, .V,
// and the head merge. x is [2, 5, 8] with 2 heads of 4.
struct AttentionOptions {
    int64_t softmaxAxis = -1;
    bool scoresAlsoOutput = false;
};
ValueId writtenOutAttention(GraphBuilder& b, ValueId x, ValueId mask, const AttentionOptions& o = {}) {
    auto heads = [&](const char* w, uint64_t seed, std::vector<int64_t> perm) {
        ValueId p = b.op("MatMul", {x, b.initializer(randomFloatTensor(w, {8, 8}, seed))}, fresh());
        ValueId r = b.op("Reshape", {p, b.initializer(int64Tensor(fresh(), {4}, {2, 5, 2, 4}))}, fresh());
        return b.op("Transpose", {r}, fresh(), {intsAttr("perm", perm)});
    };
    ValueId q = b.op("Div", {heads("wq", 21, {0, 2, 1, 3}), b.initializer(floatTensor(fresh(), {}, {2.0f}))}, fresh());
    ValueId kt = heads("wk", 22, {0, 2, 3, 1});
    ValueId v = heads("wv", 23, {0, 2, 1, 3});
    ValueId scores = b.op("Add", {b.op("MatMul", {q, kt}, fresh()), mask}, "scores");
    if (o.scoresAlsoOutput) b.output(scores);
    ValueId p = b.op("Softmax", {scores}, fresh(), {fsc::intAttr("axis", o.softmaxAxis)});
    ValueId ctx = b.op("Transpose", {b.op("MatMul", {p, v}, fresh())}, fresh(), {intsAttr("perm", {0, 2, 1, 3})});
    return b.op("Reshape", {ctx, b.initializer(int64Tensor(fresh(), {3}, {2, 5, 8}))}, "y");
}

}  // namespace

// nn.MultiheadAttention's packed [E, 3E] input projection and the copies that take it apart,
// as split-packed-projection's tests build it.
// rows-gemm-to-matmul's cases (its test says which is which).
enum RowsCase { Conv1D, TransposedB, MergedHeads, OtherLeadingDims };
enum class PackedSplit { Gathers, Slices, SplitSizes, SplitEqual, SplitOtherAxis, IndexComputed, ProductReadElsewhere, AxesSwapped };
Model packedProjection(PackedSplit how) {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, dims({5, 2, 8}));  // [L, N, E]
    ValueId proj = b.op("Add", {b.op("MatMul", {x, b.initializer(randomFloatTensor("w_in", {8, 24}, 61, 0.4f))}, "in_proj"),
                                b.initializer(randomFloatTensor("b_in", {24}, 62))},
                        "in_proj_bias");
    std::vector<ValueId> parts;
    if (how == PackedSplit::SplitSizes || how == PackedSplit::SplitEqual) {  // torch.chunk (opset 11: sizes as attribute)
        std::vector<Attribute> attributes{intAttr("axis", -1)};
        if (how == PackedSplit::SplitSizes) attributes.push_back(intsAttr("split", {8, 8, 8}));
        parts = b.node("Split", {proj}, {"part0", "part1", "part2"}, attributes, "chunk");
    } else if (how == PackedSplit::SplitOtherAxis) {
        parts = b.node("Split", {proj}, {"part0", "part1", "part2"}, {intAttr("axis", 0), intsAttr("split", {2, 2, 1})}, "chunk");
    } else if (how == PackedSplit::Slices) {
        for (int64_t i = 0; i < 3; ++i)
            parts.push_back(b.op("Slice", {proj, b.initializer(int64Tensor("s" + std::to_string(i), {1}, {8 * i})),
                                           b.initializer(int64Tensor("e" + std::to_string(i), {1}, {8 * i + 8})),
                                           b.initializer(int64Tensor("a" + std::to_string(i), {1}, {-1}))},
                                 "slice" + std::to_string(i)));
    } else {
        ValueId split = b.op("Reshape", {proj, b.initializer(int64Tensor("to", {4}, {5, 2, 3, 8}))}, "unflatten");
        ValueId unit = b.op("Unsqueeze", {split, b.initializer(int64Tensor("u", {1}, {0}))}, "unsqueeze");  // [1, L, N, 3, E]
        const std::vector<int64_t> perm =
            how == PackedSplit::AxesSwapped ? std::vector<int64_t>{3, 2, 1, 0, 4} : std::vector<int64_t>{3, 1, 2, 0, 4};
        ValueId moved = b.op("Transpose", {unit}, "transpose", {intsAttr("perm", perm)});
        ValueId packed = b.op("Squeeze", {moved, b.initializer(int64Tensor("q", {1}, {-2}))}, "squeeze");  // [3, L, N, E]
        for (int64_t i = 0; i < 3; ++i) {
            ValueId index = how == PackedSplit::IndexComputed && i == 2
                                ? b.op("Add", {b.initializer(int64Tensor("one", {}, {1})), b.initializer(int64Tensor("one2", {}, {1}))}, "two")
                                : b.initializer(int64Tensor("i" + std::to_string(i), {}, {i}));
            parts.push_back(b.op("Gather", {packed, index}, "part" + std::to_string(i), {intAttr("axis", 0)}));
        }
    }
    b.output(b.op("Add", {b.op("Mul", {parts[0], parts[1]}, "qk"), parts[2]}, "y"));
    if (how == PackedSplit::ProductReadElsewhere) b.output(b.op("Relu", {proj}, "also"));
    return withInferredTypes(b, how == PackedSplit::SplitSizes || how == PackedSplit::SplitOtherAxis ? 11 : 17);
}
class TestFusionPasses : public QObject {
    Q_OBJECT
private slots:
    void init() { g_counter = 0; }

    void convBatchNormFolds() {
        Model m = convBnAct("Relu");
        auto r = compileWith(m, {"conv-bn-fusion"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "BatchNormalization"), 0);
        QCOMPARE(countOps(g, "Conv"), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
        checkGolden(g, QStringLiteral("conv_bn_fusion"));
    }

    void convBatchNormGuards() {
        Model m = convBnAct("Relu", false);
        auto r = compileWith(m, {"conv-bn-fusion"});
        QCOMPARE(countOps(*r.model.graph, "BatchNormalization"), 1);
        QVERIFY(rejectedFor(r, "weights are not constants"));

        GraphBuilder b;  // the Conv output is read twice
        ValueId x = b.input("x", DType::Float32, dims({1, 2, 4, 4}));
        ValueId w = b.initializer(randomFloatTensor("w", {2, 2, 1, 1}, 5));
        ValueId c = b.op("Conv", {x, w}, "c");
        ValueId p = b.initializer(floatTensor("p", {2}, {1.0f, 1.0f}));
        ValueId n = b.op("BatchNormalization", {c, p, p, p, p}, "n");
        b.output(n);
        b.output(c);
        Model m2 = withInferredTypes(b);
        auto r2 = compileWith(m2, {"conv-bn-fusion"});
        QVERIFY(rejectedFor(r2, "Conv output has other readers"));
    }

    // A Linear and BatchNorm1d (PointNet's head): B either way round, C per column, a
    // scalar or absent, beta not 1; statistics far from 0 and 1 so a slip shows.
    void gemmBatchNormFolds_data() {
        QTest::addColumn<bool>("transB");
        QTest::addColumn<int>("cForm");  // 0 none, 1 per column, 2 scalar, 3 [1, columns]
        for (bool t : {false, true})
            for (int c : {0, 1, 2, 3}) QTest::newRow(qPrintable(QString("transB %1, C form %2").arg(t).arg(c))) << t << c;
    }
    void gemmBatchNormFolds() {
        QFETCH(bool, transB);
        QFETCH(int, cForm);
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({3, 5}));
        std::vector<ValueId> inputs{x, b.initializer(randomFloatTensor("w", transB ? std::vector<int64_t>{4, 5} : std::vector<int64_t>{5, 4}, 3))};
        if (cForm == 1) inputs.push_back(b.initializer(floatTensor("c", {4}, {0.5f, -1.f, 2.f, 0.25f})));
        if (cForm == 2) inputs.push_back(b.initializer(floatTensor("c", {}, {0.75f})));
        if (cForm == 3) inputs.push_back(b.initializer(floatTensor("c", {1, 4}, {-0.5f, 1.f, 0.f, 3.f})));
        ValueId y = b.op("Gemm", inputs, "gemm", {intAttr("transB", transB), floatAttr("beta", 0.5f), floatAttr("alpha", 1.5f)});
        ValueId n = b.op("BatchNormalization",
                         {y, b.initializer(floatTensor("gamma", {4}, {2.f, -0.5f, 1.5f, 0.3f})),
                          b.initializer(floatTensor("beta", {4}, {0.1f, -0.2f, 3.f, 0.f})),
                          b.initializer(floatTensor("mean", {4}, {1.f, -2.f, 0.5f, 4.f})),
                          b.initializer(floatTensor("var", {4}, {0.25f, 4.f, 9.f, 0.5f}))},
                         "bn");
        b.output(b.op("Relu", {n}, "relu"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"conv-bn-fusion"});
        QCOMPARE(countOps(*r.model.graph, "BatchNormalization"), 0);
        QCOMPARE(countOps(*r.model.graph, "Gemm"), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    // A graph network's scatter_add: 1,000 messages of 70 features summed into 6 nodes, each
    // row number repeated many times, as an expanded column and as folded constant indices;
    // ScatterND of rows must sum them as ScatterElements did (70 columns: the threads split
    // them). Rows narrower than the data's stay ScatterElements.
    void scatterOfWholeRowsBecomesScatterNd_data() {
        QTest::addColumn<bool>("constantIndices");
        QTest::addColumn<int64_t>("width");
        QTest::newRow("expanded column") << false << int64_t(70);
        QTest::newRow("constant indices") << true << int64_t(70);
        QTest::newRow("narrower rows") << false << int64_t(30);
    }
    void scatterOfWholeRowsBecomesScatterNd() {
        QFETCH(bool, constantIndices);
        QFETCH(int64_t, width);
        const int64_t nodes = 6, edges = 1000, features = 70;
        std::vector<int64_t> targets;
        for (int64_t e = 0; e < edges; ++e) targets.push_back((e * 7 + e / 3) % nodes);
        GraphBuilder b;
        ValueId messages = b.input("messages", DType::Float32, dims({edges, width}));
        ValueId data = b.initializer(randomFloatTensor("data", {nodes, features}, 4));
        ValueId indices;
        if (constantIndices) {
            std::vector<int64_t> full;
            for (int64_t t : targets) full.insert(full.end(), size_t(width), t);
            indices = b.initializer(int64Tensor("indices", {edges, width}, full));
        } else {
            indices = b.op("Expand", {b.initializer(int64Tensor("targets", {edges, 1}, targets)),
                                      b.initializer(int64Tensor("shape", {2}, {edges, width}))},
                           "expanded");
        }
        b.output(b.op("ScatterElements", {data, indices, messages}, "sum", {intAttr("axis", 0), stringAttr("reduction", "add")}));
        Model m = withInferredTypes(b, 16);
        auto r = compileWith(m, {"scatter-rows", "eliminate-dead-code"});
        const bool wholeRows = width == features;
        QCOMPARE(countOps(*r.model.graph, "ScatterND"), wholeRows ? 1 : 0);
        QCOMPARE(countOps(*r.model.graph, "Expand"), wholeRows || constantIndices ? 0 : 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    void activationsBecomeEpilogues_data() {
        QTest::addColumn<QString>("act");
        for (const char* a : {"Relu", "Clip", "Sigmoid", "HardSwish", "LeakyRelu", "Tanh"}) QTest::newRow(a) << a;
    }
    void activationsBecomeEpilogues() {
        QFETCH(QString, act);
        Model m = convBnAct(act.toStdString());
        auto r = compileWith(m, {"conv-bn-fusion", "activation-fusion"});
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(countFused(g, "FusedConv"), 1);
        const Node& fused = g.node(g.order()[0]);
        QCOMPARE(fused.origins.size(), size_t(3));  // Conv, BatchNormalization, activation
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
        if (act == QLatin1String("Clip")) checkGolden(g, QStringLiteral("activation_fusion"));
    }

    // SiLU as exporters write it, x * Sigmoid(x) (either operand order), becomes a Swish
    // epilogue of the Conv or MatMul; not when the producer's output is read elsewhere.
    void swishBecomesAnEpilogue() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 3, 8, 8}));
        ValueId w = b.initializer(randomFloatTensor("w", {4, 3, 3, 3}, 11, 0.5f));
        ValueId c = b.op("Conv", {x, w}, "c", {intsAttr("pads", {1, 1, 1, 1})}, "conv");
        ValueId silu = b.op("Mul", {c, b.op("Sigmoid", {c}, "cs")}, "silu");
        ValueId t = b.input("t", DType::Float32, dims({2, 4}));
        ValueId mw = b.initializer(randomFloatTensor("mw", {4, 4}, 12));
        ValueId m1 = b.op("MatMul", {t, mw}, "m1");
        ValueId gated = b.op("Mul", {b.op("Sigmoid", {m1}, "ms"), m1}, "gated");
        ValueId m2 = b.op("MatMul", {t, mw}, "m2");
        ValueId kept = b.op("Mul", {m2, b.op("Sigmoid", {m2}, "ks")}, "kept");
        b.output(silu);
        b.output(gated);
        b.output(kept);
        b.output(b.op("Relu", {m2}, "also"));  // m2 has a third reader: no fusion
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"activation-fusion"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countFused(g, "FusedConv"), 1);
        QCOMPARE(countFused(g, "FusedMatMul"), 1);
        int swish = 0;
        for (NodeId id : g.order())
            if (fsc::passes::stringAttr(g.node(id), "activation") == "Swish") {
                ++swish;
                QCOMPARE(g.node(id).origins.size(), size_t(3));  // producer, Sigmoid, Mul
            }
        QCOMPARE(swish, 2);
        QCOMPARE(countOps(g, "Sigmoid"), 1);  // m2's stays
        QVERIFY(rejectedFor(r, "other readers"));
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    // QuickGELU (CLIP, Paddle exports), x * Sigmoid(1.702 * x), is a Swish epilogue with
    // its alpha; a scale of rank 2 (which could broadcast x up) is left alone.
    void quickGeluBecomesAnEpilogue() {
        GraphBuilder b;
        ValueId t = b.input("t", DType::Float32, dims({2, 3, 4}));
        ValueId mw = b.initializer(randomFloatTensor("mw", {4, 4}, 13));
        ValueId m1 = b.op("MatMul", {t, mw}, "m1");
        ValueId scaled = b.op("Mul", {b.initializer(floatTensor("alpha", {1}, {1.702f})), m1}, "scaled");
        ValueId quick = b.op("Mul", {m1, b.op("Sigmoid", {scaled}, "qs")}, "quick");
        ValueId m2 = b.op("MatMul", {t, mw}, "m2");
        ValueId wide = b.op("Mul", {m2, b.initializer(floatTensor("alpha2", {1, 1}, {1.702f}))}, "wide");
        ValueId kept = b.op("Mul", {m2, b.op("Sigmoid", {wide}, "ws")}, "kept");
        b.output(quick);
        b.output(kept);
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"activation-fusion"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countFused(g, "FusedMatMul"), 1);
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (n.opType != "FusedMatMul") continue;
            QCOMPARE(fsc::passes::stringAttr(n, "activation"), std::string("Swish"));
            const Attribute* params = n.attribute("activation_params");
            QVERIFY(params && params->floats.size() == 1);
            QCOMPARE(params->floats[0], 1.702f);
            QCOMPARE(n.origins.size(), size_t(4));  // MatMul, scale, Sigmoid, Mul
        }
        QCOMPARE(countOps(g, "Sigmoid"), 1);  // m2's
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    // Explicit zero Pads (TensorFlow's asymmetric SAME padding) become the Conv's and the
    // pools' own pads; the AveragePool then counts the zeros, the MaxPool takes them only
    // after a Relu. Guards: a non-zero fill before a Conv, a MaxPool of signed values, an
    // AveragePool that leaves its own padding out of the average, a Pad of the channels.
    void padBecomesTheConsumersPadding() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 3, 9, 9}));
        ValueId asym = b.initializer(int64Tensor("asym", {8}, {0, 0, 0, 1, 0, 0, 1, 1}));
        ValueId zero = b.initializer(floatTensor("zero", {}, {0.0f}));
        ValueId w = b.initializer(randomFloatTensor("w", {4, 3, 3, 3}, 21, 0.5f));
        ValueId c = b.op("Conv", {b.op("Pad", {x, asym, zero}, "p1"), w}, "c",
                         {intsAttr("pads", {1, 1, 0, 0}), intsAttr("strides", {2, 2})});
        ValueId r = b.op("Relu", {c}, "r");
        ValueId mp = b.op("MaxPool", {b.op("Pad", {r, asym}, "p2")}, "mp", {intsAttr("kernel_shape", {2, 2})});
        ValueId ap = b.op("AveragePool", {b.op("Pad", {mp, asym, zero}, "p3")}, "ap", {intsAttr("kernel_shape", {3, 3})});
        b.output(ap);
        // Guards.
        ValueId one = b.initializer(floatTensor("one", {}, {1.0f}));
        b.output(b.op("Conv", {b.op("Pad", {x, asym, one}, "g1"), w}, "gc"));
        b.output(b.op("MaxPool", {b.op("Pad", {x, asym}, "g2")}, "gm", {intsAttr("kernel_shape", {2, 2})}));
        b.output(b.op("AveragePool", {b.op("Pad", {x, asym}, "g3")}, "ga",
                      {intsAttr("kernel_shape", {2, 2}), intsAttr("pads", {1, 1, 1, 1})}));
        ValueId channels = b.initializer(int64Tensor("channels", {8}, {0, 1, 0, 0, 0, 0, 0, 0}));
        b.output(b.op("MaxPool", {b.op("Pad", {r, channels}, "g4")}, "gch", {intsAttr("kernel_shape", {2, 2})}));
        Model m = withInferredTypes(b);
        auto res = compileWith(m, {"pad-fusion"});
        const Graph& g = *res.model.graph;
        QCOMPARE(countOps(g, "Pad"), 4);  // the guards'
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            const std::string out = g.value(n.outputs[0]).name;
            if (out == "c") QCOMPARE(fsc::passes::intsAttr(n, "pads"), (std::vector<int64_t>{1, 2, 1, 1}));
            if (out == "mp") QCOMPARE(fsc::passes::intsAttr(n, "pads"), (std::vector<int64_t>{0, 1, 1, 1}));
            if (out == "ap") QCOMPARE(fsc::passes::intAttr(n, "count_include_pad", 0), int64_t(1));
        }
        QVERIFY(rejectedFor(res, "a Conv pads with zeros"));
        QVERIFY(rejectedFor(res, "its input may be negative"));
        QVERIFY(rejectedFor(res, "left out of its averages"));
        QVERIFY(rejectedFor(res, "batch or channel"));
        QVERIFY(maxRelativeError(m, res.model) < 1e-6);
    }

    // channels-last: a MobileNet-style block (a MaxPool in it) with a squeeze-and-excitation
    // branch becomes one NHWC region with one Transpose at its edges; a lone Conv stays.
    void channelsLastConvertsConvolutionChains_data() {
        QTest::addColumn<int>("opset");
        QTest::newRow("opset 17 (ReduceMean's axes an attribute)") << 17;
        QTest::newRow("opset 18 (axes an input)") << 18;
    }
    void channelsLastConvertsConvolutionChains() {
        QFETCH(int, opset);
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 8, 10, 10}));
        ValueId zero = b.initializer(floatTensor("zero", {}, {0.0f}));
        ValueId six = b.initializer(floatTensor("six", {}, {6.0f}));
        ValueId expand = b.op("Conv", {x, b.initializer(randomFloatTensor("w1", {40, 8, 1, 1}, 31, 0.5f)),
                                       b.initializer(randomFloatTensor("b1", {40}, 32))}, "expand");
        ValueId clipped = b.op("Clip", {expand, zero, six}, "clipped");
        ValueId pooled3 = b.op("MaxPool", {clipped}, "pooled3",
                               {intsAttr("kernel_shape", {3, 3}), intsAttr("pads", {1, 1, 1, 1})});
        ValueId dw = b.op("Conv", {pooled3, b.initializer(randomFloatTensor("wdw", {40, 1, 3, 3}, 33, 0.5f))}, "dw",
                          {intAttr("group", 40), intsAttr("pads", {1, 1, 1, 1}), intsAttr("strides", {2, 2})});
        ValueId project = b.op("Conv", {b.op("Relu", {dw}, "dwr"), b.initializer(randomFloatTensor("w3", {8, 40, 1, 1}, 34, 0.5f))},
                               "project");
        ValueId shifted = b.op("Add", {project, b.initializer(randomFloatTensor("shift", {8, 1, 1}, 35))}, "shifted");
        ValueId pooled = b.op("GlobalAveragePool", {shifted}, "pooled");
        ValueId gate = b.op("Sigmoid", {b.op("Conv", {pooled, b.initializer(randomFloatTensor("wse", {8, 8, 1, 1}, 36, 0.5f))}, "se")},
                            "gate");
        b.output(b.op("Mul", {shifted, gate}, "y"));
        b.output(b.op("Flatten", {pooled}, "features"));
        ValueId lone = b.input("lone_in", DType::Float32, dims({1, 3, 6, 6}));
        b.output(b.op("Conv", {lone, b.initializer(randomFloatTensor("wl", {4, 3, 3, 3}, 37, 0.5f))}, "lone"));
        Model m = withInferredTypes(b, opset);
        auto res = compileWith(m, {"channels-last"});
        const Graph& g = *res.model.graph;
        int channelsLast = 0;
        for (NodeId id : g.order()) channelsLast += fsc::passes::intAttr(g.node(id), "channels_last", 0) == 1;
        QCOMPARE(channelsLast, 5);  // four convolutions and the MaxPool
        QCOMPARE(countFused(g, "MaxPool"), 1);
        QCOMPARE(countOps(g, "Conv"), 1);  // the lone one
        // y out only: the first convolution reads x as NCHW itself, and the pooled [1, 1, 1, 8]
        // has the memory order the Flatten expects.
        QCOMPARE(countOps(g, "Transpose"), 1);
        int nchwInputs = 0;
        for (NodeId id : g.order()) nchwInputs += fsc::passes::stringAttr(g.node(id), "input_layout") == "NCHW";
        QCOMPARE(nchwInputs, 1);
        QCOMPARE(countOps(g, "GlobalAveragePool"), 0);
        QCOMPARE(countOps(g, "ReduceMean"), 1);
        QVERIFY(rejectedFor(res, "a lone convolution"));
        for (NodeId id : g.order())
            if (g.node(id).opType == "Add") {  // its [8, 1, 1] constant permuted to [1, 1, 1, 8]
                const Tensor* shift = g.value(g.node(id).inputs[1]).initializer.get();
                QVERIFY(shift);
                QCOMPARE(shift->dims(), (std::vector<int64_t>{1, 1, 1, 8}));
            }
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
        // With the fusions before it, as O2 runs it: the Clip and Relu become epilogues.
        auto o2 = compileWith(m, {"activation-fusion", "elementwise-fusion", "channels-last", "cancel-inverse-pairs"});
        QCOMPARE(countFused(*o2.model.graph, "FusedConv"), 4);
        QCOMPARE(countOps(*o2.model.graph, "Clip"), 0);
        QVERIFY(maxRelativeError(m, o2.model) < 1e-5);
    }

    // split-packed-projection: nn.MultiheadAttention's packed [E, 3E] projection, copied apart
    // as PyTorch 2 exports it (Reshape, Unsqueeze, Transpose, Squeeze, a Gather per part) or as
    // older exporters do (a Slice per part), becomes three MatMuls with their own bias.
    void packedProjectionIsComputedApart_data() {
        QTest::addColumn<int>("how");
        QTest::newRow("PyTorch 2: Reshape, Unsqueeze, Transpose, Squeeze, Gathers") << int(PackedSplit::Gathers);
        QTest::newRow("older exporters: Slices") << int(PackedSplit::Slices);
        QTest::newRow("torch.chunk: one Split, sizes as attribute") << int(PackedSplit::SplitSizes);
        QTest::newRow("one Split into equal parts") << int(PackedSplit::SplitEqual);
    }
    void packedProjectionIsComputedApart() {
        QFETCH(int, how);
        const Model m = packedProjection(PackedSplit(how));
        auto r = compileWith(m, {"split-packed-projection"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "MatMul"), 3);
        for (const char* copy : {"Gather", "Slice", "Split", "Transpose", "Reshape", "Squeeze", "Unsqueeze"})
            QCOMPARE(countOps(g, copy), 0);
        for (NodeId id : g.order())
            if (g.node(id).opType == "MatMul") {
                const Tensor* w = g.value(g.node(id).inputs[1]).initializer.get();
                QVERIFY(w);
                QCOMPARE(w->dims(), (std::vector<int64_t>{8, 8}));
            }
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
        // Then as O2 runs it: each product and its bias slice become one FusedMatMul.
        auto o2 = compileWith(m, {"split-packed-projection", "matmul-add-fusion"});
        QCOMPARE(countFused(*o2.model.graph, "FusedMatMul"), 3);
        QVERIFY(maxRelativeError(m, o2.model) < 1e-6);
    }
    void packedProjectionGuards_data() {
        QTest::addColumn<int>("how");
        QTest::newRow("an index computed at run time") << int(PackedSplit::IndexComputed);
        QTest::newRow("the product also read whole") << int(PackedSplit::ProductReadElsewhere);
        QTest::newRow("leading axes reordered") << int(PackedSplit::AxesSwapped);
        QTest::newRow("a Split of a leading axis") << int(PackedSplit::SplitOtherAxis);
    }
    void packedProjectionGuards() {
        QFETCH(int, how);
        const Model m = packedProjection(PackedSplit(how));
        auto r = compileWith(m, {"split-packed-projection"});
        QCOMPARE(countOps(*r.model.graph, "MatMul"), 1);
        QCOMPARE(printGraph(*r.model.graph), printGraph(*m.graph));
    }

    // rows-gemm-to-matmul: Hugging Face's Conv1D (GPT-2), x.view(-1, K) @ W + b viewed back to
    // x's leading dims, whose target Shape(x) computes at run time (a dynamic batch); with B
    // transposed (nn.Linear's weight); and heads merged into K by the first Reshape, which
    // leaves one Reshape of them. A Reshape back to other leading dims stays a Gemm.
    void rowsGemmBecomesMatMul_data() {
        QTest::addColumn<int>("rowsCase");
        QTest::newRow("GPT-2's Conv1D") << int(Conv1D);
        QTest::newRow("B transposed") << int(TransposedB);
        QTest::newRow("heads merged into K") << int(MergedHeads);
        QTest::newRow("guard: other leading dims") << int(OtherLeadingDims);
    }
    void rowsGemmBecomesMatMul() {
        QFETCH(int, rowsCase);
        GraphBuilder b;
        const bool heads = rowsCase == MergedHeads, transB = rowsCase == TransposedB;
        Shape xShape = heads ? Shape({Dim::symbolic("batch"), Dim::known(5), Dim::known(2), Dim::known(4)})
                             : Shape({Dim::symbolic("batch"), Dim::known(5), Dim::known(8)});
        ValueId x = b.input("x", DType::Float32, xShape);
        ValueId rows = b.op("Reshape", {x, b.initializer(int64Tensor("rows_shape", {2}, {-1, 8}))}, "rows", {}, "flatten");
        ValueId w = b.initializer(randomFloatTensor("w", transB ? std::vector<int64_t>{6, 8} : std::vector<int64_t>{8, 6}, 81, 0.4f));
        ValueId product = b.op("Gemm", {rows, w, b.initializer(randomFloatTensor("bias", {6}, 82, 0.1f))}, "product",
                               {intAttr("transB", transB ? 1 : 0)}, "addmm");
        ValueId shape = b.op("Shape", {x}, "x_shape");
        auto dim = [&](int64_t i) {
            ValueId at = b.op("Gather", {shape, b.initializer(int64Tensor("i" + std::to_string(i), {}, {i}))}, "d" + std::to_string(i));
            return b.op("Unsqueeze", {at, b.initializer(int64Tensor("u" + std::to_string(i), {1}, {0}))}, "u" + std::to_string(i) + "_out");
        };
        ValueId target = rowsCase == OtherLeadingDims
                             ? b.initializer(int64Tensor("other", {3}, {5, -1, 6}))
                             : b.op("Concat", {dim(0), dim(1), b.initializer(int64Tensor("n", {1}, {6}))}, "target", {intAttr("axis", 0)});
        b.output(b.op("Reshape", {product, target}, "y", {}, "unflatten"));
        const Model m = withInferredTypes(b);
        auto r = compileWith(m, {"rows-gemm-to-matmul", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        if (rowsCase == OtherLeadingDims) {
            QCOMPARE(countOps(g, "Gemm"), 1);
            QCOMPARE(countOps(g, "Reshape"), 2);
            QCOMPARE(countOps(g, "MatMul"), 0);
            return;
        }
        QCOMPARE(countOps(g, "Gemm"), 0);
        QCOMPARE(countOps(g, "MatMul"), 1);
        QCOMPARE(countOps(g, "Reshape"), heads ? 1 : 0);
        QCOMPARE(countOps(g, "Shape"), 0);  // the target's arithmetic went with it
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
    }

    // einsum-to-matmul: matrix products written as Einsum become MatMul, with Transposes only
    // where the labels are out of MatMul's order; what is no one product stays an Einsum.
    void einsumProductsBecomeMatMul() {
        struct Case {
            const char* equation;
            std::vector<int64_t> a, b;
            int transposes;  // expected around the MatMul
        };
        const std::vector<Case> cases = {
            {"B G H I D, B G H J D -> B G H I J", {1, 3, 2, 5, 4}, {1, 3, 2, 6, 4}, 1},  // MaxViT: K^T
            {"bhij,bhjd->bhid", {2, 3, 5, 6}, {2, 3, 6, 4}, 0},
            {"bnd,dk->bnk", {2, 5, 4}, {4, 3}, 0},                 // a linear layer
            {"ik,bkj->bji", {3, 4}, {2, 4, 5}, 2},                 // operands swapped, both moved
            {"bhqd,bkhd->bhqk", {2, 3, 5, 4}, {2, 6, 3, 4}, 1},    // batch labels in another order
            {"bij,bjk->bki", {2, 3, 4}, {2, 4, 5}, 1},              // the product transposed after
        };
        for (const Case& c : cases) {
            GraphBuilder b;
            ValueId x = b.input("x", DType::Float32, dims(c.a));
            ValueId y = b.input("y", DType::Float32, dims(c.b));
            b.output(b.op("Einsum", {x, y}, "z", {stringAttr("equation", c.equation)}));
            const Model m = withInferredTypes(b);
            auto r = compileWith(m, {"einsum-to-matmul"});
            const Graph& g = *r.model.graph;
            QVERIFY2(countOps(g, "Einsum") == 0 && countOps(g, "MatMul") == 1, c.equation);
            QVERIFY2(countOps(g, "Transpose") == c.transposes, c.equation);
            const double error = maxRelativeError(m, r.model);
            QVERIFY2(error < 1e-6, qPrintable(QString("%1: %2").arg(c.equation).arg(error)));
        }
        // A dot product (no label of either operand's own), a diagonal and a sum within one
        // operand stay.
        for (const char* equation : {"ij,ij->i", "ii,ij->ij", "ij,jk->k"}) {
            GraphBuilder b;
            ValueId x = b.input("x", DType::Float32, dims({4, 4}));
            ValueId y = b.input("y", DType::Float32, dims({4, 4}));
            b.output(b.op("Einsum", {x, y}, "z", {stringAttr("equation", equation)}));
            auto r = compileWith(withInferredTypes(b), {"einsum-to-matmul"});
            QVERIFY2(countOps(*r.model.graph, "Einsum") == 1, equation);
        }
    }

    // reshape-before-transpose: a split after a Transpose goes first; a merge stays.
    void reshapeBeforeTransposeSplitsFirst() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({5, 6, 4}));
        ValueId t = b.op("Transpose", {x}, "t", {intsAttr("perm", {1, 0, 2})});  // [6, 5, 4]
        b.output(b.op("Reshape", {t, b.initializer(int64Tensor("split", {4}, {2, 3, 5, 4}))}, "y"));
        ValueId t2 = b.op("Transpose", {b.input("x2", DType::Float32, dims({5, 6, 4}))}, "t2", {intsAttr("perm", {1, 0, 2})});
        b.output(b.op("Reshape", {t2, b.initializer(int64Tensor("merge", {2}, {30, 4}))}, "merged"));
        const Model m = withInferredTypes(b);
        auto r = compileWith(m, {"reshape-before-transpose"});
        const Graph& g = *r.model.graph;
        int moved = 0;
        for (NodeId id : g.order())
            if (g.node(id).opType == "Transpose" && passes::intsAttr(g.node(id), "perm") == std::vector<int64_t>{1, 2, 0, 3}) ++moved;
        QCOMPARE(moved, 1);
        int kept = 0;  // the merge's Transpose, as it was
        for (NodeId id : g.order())
            if (g.node(id).opType == "Transpose" && passes::intsAttr(g.node(id), "perm") == std::vector<int64_t>{1, 0, 2}) ++kept;
        QCOMPARE(kept, 1);
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    // PyTorch 2's nn.MultiheadAttention, as exported: per-head views around transposes, then
    // scaled_dot_product_attention written out. With the split first, attention-fusion takes
    // every head transpose (K's composed with K^T) and leaves no Transpose.
    void pytorch2AttentionHeadsFuse() {
        const int64_t L = 5, N = 2, H = 3, D = 4, E = H * D;
        GraphBuilder b;
        auto heads = [&](ValueId x, const std::string& name) {  // x [L, N, E] -> [N, H, L, D]
            ValueId v = b.op("Reshape", {x, b.initializer(int64Tensor(name + "_s1", {3}, {L, N * H, D}))}, name + "_view");
            v = b.op("Transpose", {v}, name + "_t", {intsAttr("perm", {1, 0, 2})});
            return b.op("Reshape", {v, b.initializer(int64Tensor(name + "_s2", {4}, {N, H, L, D}))}, name + "_heads");
        };
        ValueId q = heads(b.input("q", DType::Float32, dims({L, N, E})), "q");
        ValueId k = heads(b.input("k", DType::Float32, dims({L, N, E})), "k");
        ValueId v = heads(b.input("v", DType::Float32, dims({L, N, E})), "v");
        ValueId root = b.initializer(floatTensor("root_scale", {}, {0.70710678f}));  // sqrt(1 / sqrt(D))
        ValueId qs = b.op("Mul", {q, root}, "q_scaled");
        ValueId kt = b.op("Mul", {b.op("Transpose", {k}, "k_transposed", {intsAttr("perm", {0, 1, 3, 2})}), root}, "k_scaled");
        ValueId p = b.op("Softmax", {b.op("MatMul", {qs, kt}, "scores")}, "probs", {fsc::intAttr("axis", -1)});
        ValueId ctx = b.op("Transpose", {b.op("MatMul", {p, v}, "context")}, "ctx_t", {intsAttr("perm", {2, 0, 1, 3})});
        b.output(b.op("Reshape", {ctx, b.initializer(int64Tensor("flat", {2}, {L * N, E}))}, "y"));
        const Model m = withInferredTypes(b);
        auto r = compileWith(m, {"reshape-before-transpose", "attention-fusion", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countFused(g, "Attention"), 1);
        QCOMPARE(countOps(g, "Transpose"), 0);
        QVERIFY2(maxRelativeError(m, r.model) < 1e-5, qPrintable(QString::number(maxRelativeError(m, r.model))));
    }

    // A float16 export's convolution chain (model.half()): left NCHW where the target has no
    // half NHWC kernels (the CPU's float32 default, with the reason), laid out when the target
    // lists float16 (CUDA's cuDNN), with the same outputs.
    void channelsLastLaysOutTheTargetsTypes() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 8, 6, 6}));
        ValueId stem = b.op("Relu", {b.op("Conv", {x, b.initializer(randomFloatTensor("w1", {16, 8, 3, 3}, 51, 0.3f)),
                                                     b.initializer(randomFloatTensor("b1", {16}, 52))},
                                          "conv1", {intsAttr("pads", {1, 1, 1, 1})})},
                            "relu1");
        ValueId pooled = b.op("MaxPool", {stem}, "pool", {intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {2, 2})});
        ValueId body = b.op("Conv", {pooled, b.initializer(randomFloatTensor("w2", {16, 16, 1, 1}, 53, 0.3f))}, "conv2");
        ValueId sum = b.op("Relu", {b.op("Add", {body, pooled}, "residual")}, "relu2");
        b.output(b.op("Flatten", {b.op("GlobalAveragePool", {sum}, "gap")}, "features"));
        const Model wide = withInferredTypes(b);
        std::vector<std::unique_ptr<Pass>> narrowing;
        narrowing.push_back(passes::convertToFloat16({}));
        auto narrowed = compileModel(wide, std::move(narrowing));
        QVERIFY2(narrowed.isOk(), narrowed.status().message().c_str());
        const Model& half = narrowed->model;
        auto laidOut = [](const Graph& g) {
            int n = 0;
            for (NodeId id : g.order()) n += passes::intAttr(g.node(id), "channels_last", 0) == 1;
            return n;
        };
        auto run = [&](std::set<DType> types) {
            std::vector<std::unique_ptr<Pass>> list;
            list.push_back(passes::channelsLast(std::move(types)));
            CompileOptions options;
            options.verifyEachPass = true;
            auto r = compileModel(half, std::move(list), options);
            if (!r) qFatal("%s", r.status().message().c_str());
            return std::move(*r);
        };
        const CompileResult cpu = run({DType::Float32});
        QCOMPARE(laidOut(*cpu.model.graph), 0);
        QVERIFY(rejectedFor(cpu, "no channels-last convolution kernels for float16"));
        const CompileResult cuda = run({DType::Float16, DType::BFloat16});
        QCOMPARE(laidOut(*cuda.model.graph), 3);  // both convolutions and the MaxPool
        QCOMPARE(countOps(*cuda.model.graph, "GlobalAveragePool"), 0);  // a ReduceMean over H and W
        QVERIFY2(maxRelativeError(half, cuda.model) < 2e-3, qPrintable(QString::number(maxRelativeError(half, cuda.model))));
    }

    // A pre-activation block (DenseNet's): Concat, BatchNormalization, Relu, Conv. The Concat
    // joins channels over NHWC's last axis and the BatchNormalization becomes a per-channel Mul
    // and Add, both inside the region instead of breaking it with Transpose pairs; the numbers stay.
    void channelsLastKeepsPreActivationBatchNorms() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 6, 8, 8}));
        ValueId c1 = b.op("Conv", {x, b.initializer(randomFloatTensor("w1", {8, 6, 3, 3}, 51, 0.5f))}, "c1",
                          {intsAttr("pads", {1, 1, 1, 1})});
        ValueId joined = b.op("Concat", {x, c1}, "joined", {intAttr("axis", 1)});
        std::vector<float> gamma(14), beta(14), mean(14), var(14);
        for (int i = 0; i < 14; ++i) {
            gamma[i] = 0.5f + 0.1f * float(i);
            beta[i] = 0.05f * float(i) - 0.3f;
            mean[i] = 0.02f * float(i);
            var[i] = 0.3f + 0.07f * float(i);
        }
        ValueId bn = b.op("BatchNormalization", {joined, b.initializer(floatTensor("gamma", {14}, gamma)),
                                                 b.initializer(floatTensor("beta", {14}, beta)),
                                                 b.initializer(floatTensor("mean", {14}, mean)),
                                                 b.initializer(floatTensor("var", {14}, var))},
                          "bn", {floatAttr("epsilon", 1e-3f)});
        ValueId c2 = b.op("Conv", {b.op("Relu", {bn}, "r"), b.initializer(randomFloatTensor("w2", {4, 14, 1, 1}, 52, 0.5f))}, "c2");
        b.output(b.op("Conv", {c2, b.initializer(randomFloatTensor("w3", {4, 4, 3, 3}, 53, 0.5f))}, "y",
                      {intsAttr("pads", {1, 1, 1, 1})}));
        Model m = withInferredTypes(b);
        auto res = compileWith(m, {"channels-last", "cancel-inverse-pairs"});
        const Graph& g = *res.model.graph;
        QCOMPARE(countOps(g, "BatchNormalization"), 0);
        QCOMPARE(countFused(g, "FusedConv"), 3);
        QCOMPARE(countOps(g, "Conv"), 0);
        // In: x for the Concat (c1 reads it as NCHW itself); out: y. None around the
        // Concat or the BatchNormalization.
        QCOMPARE(countOps(g, "Transpose"), 2);
        for (NodeId id : g.order())
            if (g.node(id).opType == "Concat") QCOMPARE(fsc::passes::intAttr(g.node(id), "axis", 1), int64_t(3));
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
    }

    // ShuffleNet's unit over a dynamic batch: the channels split in two (two Slices, or one
    // Split), one half through convolutions, the halves joined, then the channel shuffle
    // (Reshape to [N, 2, C/2, H, W], Transpose, Reshape back). All of it runs in NHWC: the
    // shuffle swaps the last two axes of [N, H, W, 2, C/2], and no Transpose changes layout
    // except the one out at y.
    void channelsLastKeepsChannelShuffles_data() {
        QTest::addColumn<bool>("split");
        QTest::newRow("two Slices (TorchScript's chunk)") << false;
        QTest::newRow("one Split") << true;
    }
    void channelsLastKeepsChannelShuffles() {
        QFETCH(bool, split);
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(8), Dim::known(6), Dim::known(6)}));
        ValueId c0 = b.op("Conv", {x, b.initializer(randomFloatTensor("w0", {8, 8, 1, 1}, 71, 0.5f))}, "c0");
        ValueId kept, worked;
        if (split) {
            const auto halves = b.node("Split", {c0, b.initializer(int64Tensor("sizes", {2}, {4, 4}))}, {"kept", "worked"},
                                       {intAttr("axis", 1)});
            kept = halves[0];
            worked = halves[1];
        } else {
            ValueId axis = b.initializer(int64Tensor("axis", {1}, {1}));
            auto at = [&](const char* name, int64_t v) { return b.initializer(int64Tensor(name, {1}, {v})); };
            kept = b.op("Slice", {c0, at("s0", 0), at("e0", 4), axis}, "kept");
            worked = b.op("Slice", {c0, at("s1", 4), at("e1", 8), axis}, "worked");
        }
        ValueId pw = b.op("Conv", {worked, b.initializer(randomFloatTensor("w1", {4, 4, 1, 1}, 72, 0.5f))}, "pw");
        ValueId dw = b.op("Conv", {pw, b.initializer(randomFloatTensor("wdw", {4, 1, 3, 3}, 73, 0.5f))}, "dw",
                          {intAttr("group", 4), intsAttr("pads", {1, 1, 1, 1})});
        ValueId joined = b.op("Concat", {kept, b.op("Relu", {dw}, "r")}, "joined", {intAttr("axis", 1)});
        ValueId grouped = b.op("Reshape", {joined, b.initializer(int64Tensor("to5", {5}, {0, 2, 4, 6, 6}))}, "grouped");
        ValueId swapped = b.op("Transpose", {grouped}, "swapped", {intsAttr("perm", {0, 2, 1, 3, 4})});
        ValueId shuffled = b.op("Reshape", {swapped, b.initializer(int64Tensor("to4", {4}, {0, -1, 6, 6}))}, "shuffled");
        b.output(b.op("Conv", {shuffled, b.initializer(randomFloatTensor("w2", {8, 8, 1, 1}, 74, 0.5f))}, "y"));
        Model m = withInferredTypes(b, 13);
        auto res = compileWith(m, {"channels-last", "cancel-inverse-pairs"});
        const Graph& g = *res.model.graph;
        QCOMPARE(countFused(g, "FusedConv"), 4);
        int layoutTransposes = 0, shuffleSwaps = 0;
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (n.opType != "Transpose") continue;
            const std::vector<int64_t> perm = fsc::passes::intsAttr(n, "perm");
            layoutTransposes += perm.size() == 4;
            shuffleSwaps += perm == std::vector<int64_t>{0, 1, 2, 4, 3};
        }
        QCOMPARE(layoutTransposes, 1);  // y out
        QCOMPARE(shuffleSwaps, 1);
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (n.opType == "Split") QCOMPARE(fsc::passes::intAttr(n, "axis", 0), int64_t(3));
            if (n.opType == "Slice") {
                const Tensor* axes = g.value(n.inputs[3]).initializer.get();
                QVERIFY(axes && axes->numElements() == 1);
                QCOMPARE(axes->dataAs<int64_t>()[0], int64_t(3));
            }
        }
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
    }

    // MnasNet's head, x.mean([2, 3]) after its last convolution: the ReduceMean joins the
    // region over NHWC's axes 1 and 2, and its [N, C] (the same in either layout) leaves
    // without a Transpose; kept dims give [N, 1, 1, C], which goes back as any other edge,
    // and that Transpose moves only axes of size 1: a Reshape.
    void channelsLastTakesSpatialMeans_data() {
        QTest::addColumn<int>("opset");
        QTest::addColumn<int>("keepdims");
        QTest::addColumn<int>("transposes");
        QTest::newRow("opset 17, no keepdims") << 17 << 0 << 0;
        QTest::newRow("opset 18 (axes an input), no keepdims") << 18 << 0 << 0;
        QTest::newRow("opset 17, keepdims") << 17 << 1 << 0;
    }
    void channelsLastTakesSpatialMeans() {
        QFETCH(int, opset);
        QFETCH(int, keepdims);
        QFETCH(int, transposes);
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 8, 7, 7}));
        ValueId c1 = b.op("Conv", {x, b.initializer(randomFloatTensor("w1", {8, 8, 3, 3}, 81, 0.5f))}, "c1",
                          {intsAttr("pads", {1, 1, 1, 1})});
        ValueId c2 = b.op("Relu", {b.op("Conv", {c1, b.initializer(randomFloatTensor("w2", {16, 8, 1, 1}, 82, 0.5f))}, "c2")}, "r2");
        std::vector<ValueId> inputs{c2};
        std::vector<Attribute> attrs{intAttr("keepdims", keepdims)};
        if (opset >= 18) inputs.push_back(b.initializer(int64Tensor("axes", {2}, {-1, 2})));
        else attrs.push_back(intsAttr("axes", {2, 3}));
        b.output(b.op("ReduceMean", inputs, "y", attrs));
        Model m = withInferredTypes(b, opset);
        auto res = compileWith(m, {"channels-last", "cancel-inverse-pairs"});
        const Graph& g = *res.model.graph;
        QCOMPARE(countFused(g, "FusedConv"), 2);
        QCOMPARE(countOps(g, "Transpose"), transposes);
        QCOMPARE(countOps(g, "Reshape"), keepdims);
        QCOMPARE(g.value(g.outputs[0]).name, std::string("y"));
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
    }

    // TensorFlow's exports wrap convolutions in NHWC -> NCHW -> NHWC Transposes: the region's
    // own edge Transposes cancel them, so none is left.
    void channelsLastCancelsAnExportersTransposes() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 9, 9, 4}));
        ValueId nchw = b.op("Transpose", {x}, "nchw", {intsAttr("perm", {0, 3, 1, 2})});
        ValueId c1 = b.op("Relu", {b.op("Conv", {nchw, b.initializer(randomFloatTensor("w1", {6, 4, 3, 3}, 41, 0.5f))}, "c1",
                                        {intsAttr("pads", {1, 1, 1, 1})})}, "r1");
        ValueId c2 = b.op("Conv", {c1, b.initializer(randomFloatTensor("w2", {5, 6, 1, 1}, 42, 0.5f))}, "c2");
        b.output(b.op("Transpose", {c2}, "y", {intsAttr("perm", {0, 2, 3, 1})}));
        Model m = withInferredTypes(b);
        auto res = compileWith(m, {"channels-last", "cancel-inverse-pairs"});
        QCOMPARE(countOps(*res.model.graph, "Transpose"), 0);
        QCOMPARE(countFused(*res.model.graph, "FusedConv"), 2);
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
    }

    // A detection head (SSD, RetinaNet): its NCHW output viewed as [N, anchors, classes, H,
    // W], permuted to [N, H, W, anchors, classes]. In channels-last the region's edge
    // Transpose goes past the split (reshape-before-transpose) and meets the head's own.
    void channelsLastHeadOutputNeedsNoTranspose() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 4, 6, 5}));
        ValueId c1 = b.op("Relu", {b.op("Conv", {x, b.initializer(randomFloatTensor("w1", {8, 4, 3, 3}, 51, 0.5f))}, "c1",
                                        {intsAttr("pads", {1, 1, 1, 1})})}, "r1");
        ValueId head = b.op("Conv", {c1, b.initializer(randomFloatTensor("w2", {6, 8, 3, 3}, 52, 0.5f))}, "head",
                            {intsAttr("pads", {1, 1, 1, 1})});
        ValueId split = b.op("Reshape", {head, b.initializer(int64Tensor("anchors_classes", {5}, {1, 3, 2, 6, 5}))}, "split");
        ValueId perm = b.op("Transpose", {split}, "perm", {intsAttr("perm", {0, 3, 4, 1, 2})});
        b.output(b.op("Reshape", {perm, b.initializer(int64Tensor("rows", {3}, {1, -1, 2}))}, "y"));
        Model m = withInferredTypes(b);
        auto res = compileWith(m, {"channels-last", "reshape-before-transpose", "cancel-inverse-pairs"});
        QCOMPARE(countFused(*res.model.graph, "FusedConv"), 2);
        QCOMPARE(countOps(*res.model.graph, "Transpose"), 0);
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
        QCOMPARE(countOps(*compileWith(m, {"channels-last", "cancel-inverse-pairs"}).model.graph, "Transpose"), 2);
        QCOMPARE(countOps(*compileWith(m, pipelinePassesForTest("O2")).model.graph, "Transpose"), 0);
    }

    // DenseNet's transition layer (a convolution, then a 2x2 AveragePool at stride 2) and an
    // Inception pool branch (3x3 at stride 1, count_include_pad 0) stay inside the region as
    // ai.fusescope AveragePools: no Transpose but the one out.
    void channelsLastTakesAveragePools() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 8, 12, 12}));
        ValueId c1 = b.op("Conv", {x, b.initializer(randomFloatTensor("w1", {16, 8, 1, 1}, 81, 0.3f))}, "c1");
        ValueId down = b.op("AveragePool", {c1}, "down", {intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {2, 2})});
        ValueId branch = b.op("AveragePool", {down}, "branch",
                              {intsAttr("kernel_shape", {3, 3}), intsAttr("pads", {1, 1, 1, 1})});
        b.output(b.op("Conv", {branch, b.initializer(randomFloatTensor("w2", {8, 16, 3, 3}, 82, 0.3f))}, "y",
                      {intsAttr("pads", {1, 1, 1, 1})}));
        Model m = withInferredTypes(b);
        auto res = compileWith(m, {"channels-last", "cancel-inverse-pairs"});
        const Graph& g = *res.model.graph;
        QCOMPARE(countFused(g, "AveragePool"), 2);
        QCOMPARE(countOps(g, "Transpose"), 1);
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
    }

    // ConvNeXt as torchvision exports it: each block a depthwise 7x7 convolution, a permute to
    // NHWC for its LayerNorm and Linear layers (a MatMul here), a permute back, the layer
    // scale and the residual Add; the stem a lone strided convolution whose output goes
    // straight into such a permute (the first block's convolution, whose input comes out of
    // one, is a region of its own too). The region's own Transposes cancel the exporter's, so
    // every convolution runs channels-last (the lone stem too, whose edges then cost nothing)
    // and one Transpose is left, back to NCHW for the graph's output. Without the permutes
    // each block's edges would cost two Transposes, and the region was refused.
    void channelsLastTakesConvNextBlocks() {
        GraphBuilder b;
        const int64_t c = 8;
        ValueId x = b.input("x", DType::Float32, dims({1, 3, 16, 16}));
        auto permute = [&](ValueId v, std::vector<int64_t> perm) { return b.op("Transpose", {v}, fresh(), {intsAttr("perm", perm)}); };
        auto linear = [&](ValueId nchw, uint64_t seed) {  // permute, MatMul over the channels, permute back
            const ValueId nhwc = permute(nchw, {0, 2, 3, 1});
            return permute(b.op("MatMul", {nhwc, b.initializer(randomFloatTensor(fresh(), {c, c}, seed, 0.3f))}, fresh()), {0, 3, 1, 2});
        };
        ValueId stem = b.op("Conv", {x, b.initializer(randomFloatTensor("ws", {c, 3, 4, 4}, 71, 0.3f))}, "stem",
                            {intsAttr("strides", {4, 4})});
        ValueId h = linear(stem, 72);
        for (uint64_t k = 0; k < 3; ++k) {
            ValueId dw = b.op("Conv", {h, b.initializer(randomFloatTensor(fresh(), {c, 1, 7, 7}, 73 + 10 * k, 0.3f)),
                                       b.initializer(randomFloatTensor(fresh(), {c}, 74 + 10 * k))},
                              fresh(), {intAttr("group", c), intsAttr("pads", {3, 3, 3, 3})});
            ValueId scaled = b.op("Mul", {linear(dw, 75 + 10 * k), b.initializer(randomFloatTensor(fresh(), {c, 1, 1}, 76 + 10 * k))}, fresh());
            h = b.op("Add", {scaled, h}, fresh());
        }
        b.output(h);
        Model m = withInferredTypes(b);
        auto res = compileWith(m, {"channels-last", "cancel-inverse-pairs"});
        const Graph& g = *res.model.graph;
        int channelsLast = 0;
        for (NodeId id : g.order()) channelsLast += fsc::passes::intAttr(g.node(id), "channels_last", 0) == 1;
        QCOMPARE(channelsLast, 4);  // the first block's convolution is a lone one too
        QCOMPARE(countOps(g, "Conv"), 0);
        QCOMPARE(countOps(g, "Transpose"), 1);
        QVERIFY(maxRelativeError(m, res.model) < 1e-5);
    }

    // A ResNet block's end, Relu(Conv(..) + shortcut), becomes FusedConv(X, W, B, Z) with the
    // Relu; an Add of two convolutions gives Z to the later one; guards: a broadcast Add, a
    // convolution output read twice, an activation before the Add. Numerically checked in
    // NCHW (oneDNN or the paths' own pass adding Z) and after channels-last, where the
    // shortcut from the graph's input enters through a Transpose.
    void residualBecomesAnEpilogue() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 8, 6, 6}));
        auto conv = [&](ValueId in, uint64_t seed, const char* name) {
            return b.op("Conv", {in, b.initializer(randomFloatTensor(fresh(), {8, 8, 3, 3}, seed, 0.3f)),
                                 b.initializer(randomFloatTensor(fresh(), {8}, seed + 1))},
                        name, {intsAttr("pads", {1, 1, 1, 1})});
        };
        ValueId c1 = b.op("Relu", {conv(x, 51, "c1")}, "r1");
        ValueId block = b.op("Relu", {b.op("Add", {conv(c1, 53, "c2"), x}, "sum")}, "block");
        ValueId both = b.op("Add", {conv(block, 55, "c3"), conv(block, 57, "c4")}, "both");
        ValueId bias = b.op("Add", {conv(both, 59, "c5"), b.initializer(randomFloatTensor("row", {8, 1, 1}, 61))}, "broadcast");
        ValueId c6 = conv(bias, 62, "c6");
        ValueId twice = b.op("Add", {c6, bias}, "twice");
        ValueId pre = b.op("Add", {b.op("Relu", {conv(twice, 64, "c7")}, "pre_act"), twice}, "pre");
        b.output(pre);
        b.output(c6);  // c6 read twice
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"activation-fusion", "residual-fusion"});
        const Graph& g = *r.model.graph;
        int withZ = 0;
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (n.opType != "FusedConv" || n.inputs.size() < 4) continue;
            ++withZ;
            QVERIFY(n.inputs[3].valid());
        }
        QCOMPARE(withZ, 2);                 // c2 (with its Relu) and c4 (Z = c3)
        QCOMPARE(countOps(g, "Add"), 3);    // the broadcast, the twice-read and the pre-activation ones
        QVERIFY(rejectedFor(r, "the Add broadcasts"));
        QVERIFY(rejectedFor(r, "other readers"));
        QVERIFY(rejectedFor(r, "activation comes before the Add"));
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
        auto o2 = compileWith(m, {"activation-fusion", "residual-fusion", "elementwise-fusion", "channels-last",
                                  "cancel-inverse-pairs"});
        int channelsLastWithZ = 0;
        for (NodeId id : o2.model.graph->order()) {
            const Node& n = o2.model.graph->node(id);
            channelsLastWithZ += n.opType == "FusedConv" && n.inputs.size() == 4 && fsc::passes::intAttr(n, "channels_last", 0) == 1;
        }
        QCOMPARE(channelsLastWithZ, 2);
        QVERIFY(maxRelativeError(m, o2.model) < 1e-5);
    }

    // A squeeze-and-excitation block as torchvision exports it (depthwise SiLU, pool, two 1x1
    // layers, the gate Mul): after channels-last, the pool becomes the depthwise FusedConv's
    // second output; the classifier's pool of a dense convolution stays a ReduceMean.
    void sePoolBecomesASecondOutput() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({1, 8, 10, 10}));
        ValueId expand = b.op("Conv", {x, b.initializer(randomFloatTensor("we", {16, 8, 1, 1}, 71, 0.5f))}, "expand");
        ValueId dw = b.op("Conv", {expand, b.initializer(randomFloatTensor("wd", {16, 1, 3, 3}, 72, 0.5f)),
                                   b.initializer(randomFloatTensor("bd", {16}, 73))},
                          "dw", {intAttr("group", 16), intsAttr("pads", {1, 1, 1, 1})});
        ValueId silu = b.op("Mul", {dw, b.op("Sigmoid", {dw}, "dws")}, "silu");
        ValueId pooled = b.op("GlobalAveragePool", {silu}, "pooled");
        ValueId squeeze = b.op("Relu", {b.op("Conv", {pooled, b.initializer(randomFloatTensor("ws", {4, 16, 1, 1}, 74, 0.5f))}, "sq")}, "sqr");
        ValueId gate = b.op("Sigmoid", {b.op("Conv", {squeeze, b.initializer(randomFloatTensor("wx", {16, 4, 1, 1}, 75, 0.5f))}, "ex")}, "gate");
        ValueId scaled = b.op("Mul", {silu, gate}, "scaled");
        ValueId project = b.op("Conv", {scaled, b.initializer(randomFloatTensor("wp", {8, 16, 1, 1}, 76, 0.5f))}, "project");
        b.output(b.op("Flatten", {b.op("GlobalAveragePool", {project}, "head")}, "features"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"activation-fusion", "residual-fusion", "elementwise-fusion", "channels-last",
                                 "cancel-inverse-pairs", "se-pool-fusion"});
        const Graph& g = *r.model.graph;
        int withMeans = 0;
        for (NodeId id : g.order()) withMeans += g.node(id).opType == "FusedConv" && g.node(id).outputs.size() == 2;
        QCOMPARE(withMeans, 1);
        QCOMPARE(countOps(g, "ReduceMean"), 1);  // the head's
        QVERIFY(rejectedFor(r, "not a depthwise convolution"));
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    void activationGuards() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 4}));
        ValueId lo = b.input("lo", DType::Float32, Shape::scalar());
        ValueId w = b.initializer(randomFloatTensor("w", {4, 4}, 6));
        ValueId a = b.op("MatMul", {x, w}, "a");
        ValueId clipped = b.op("Clip", {a, lo}, "clipped");  // bound is not a constant
        ValueId c = b.op("MatMul", {x, w}, "c");
        ValueId r = b.op("Relu", {c}, "r");  // c is also a graph output
        b.output(clipped);
        b.output(r);
        b.output(c);
        Model m = withInferredTypes(b);
        auto res = compileWith(m, {"activation-fusion"});
        QCOMPARE(countOps(*res.model.graph, "MatMul"), 2);
        QVERIFY(rejectedFor(res, "Clip bounds are not constants"));
        QVERIFY(rejectedFor(res, "other readers"));
    }

    // Activations whose rank the shapes do not tell (Swin's window reshapes): a 1-D bias still
    // fuses (MatMul's output ends in the weight's columns); a [1, N] bias could add a dim.
    void matmulAddFusesWithUnknownActivationRank() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape());  // rank unknown
        ValueId w = b.initializer(randomFloatTensor("w", {4, 5}, 21));
        b.output(b.op("Add", {b.op("MatMul", {x, w}, "m1"), b.initializer(randomFloatTensor("b1", {5}, 22))}, "y1"));
        b.output(b.op("Add", {b.op("MatMul", {x, w}, "m2"), b.initializer(randomFloatTensor("b2", {1, 5}, 23))}, "y2"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"matmul-add-fusion"});
        QCOMPARE(countFused(*r.model.graph, "FusedMatMul"), 1);
        QCOMPARE(countOps(*r.model.graph, "MatMul"), 1);
        QVERIFY(rejectedFor(r, "rank is unknown and the bias is not 1-D"));
    }

    void matmulAddBecomesGemmOrFusedMatMul() {
        GraphBuilder b;
        ValueId x2 = b.input("x2", DType::Float32, dims({3, 4}));
        ValueId x3 = b.input("x3", DType::Float32, dims({2, 3, 4}));
        ValueId w = b.initializer(randomFloatTensor("w", {4, 5}, 7));
        ValueId bias = b.initializer(randomFloatTensor("bias", {5}, 8));
        ValueId bias3 = b.initializer(randomFloatTensor("bias3", {1, 1, 5}, 9));
        b.output(b.op("Add", {b.op("MatMul", {x2, w}, "m2"), bias}, "y2"));
        b.output(b.op("Add", {bias3, b.op("MatMul", {x3, w}, "m3")}, "y3"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"matmul-add-fusion", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countOps(g, "Gemm"), 1);
        QCOMPARE(countFused(g, "FusedMatMul"), 1);
        QCOMPARE(countOps(g, "Add"), 0);
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
        checkGolden(g, QStringLiteral("matmul_add_fusion"));
    }

    void matmulAddGuards() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({3, 4}));
        ValueId w = b.initializer(randomFloatTensor("w", {4, 5}, 7));
        ValueId full = b.initializer(randomFloatTensor("full", {3, 5}, 8));  // varies per row
        ValueId other = b.input("other", DType::Float32, dims({5}));
        b.output(b.op("Add", {b.op("MatMul", {x, w}, "m1"), full}, "y1"));
        b.output(b.op("Add", {b.op("MatMul", {x, w}, "m2"), other}, "y2"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"matmul-add-fusion"});
        QCOMPARE(countOps(*r.model.graph, "MatMul"), 2);
        QVERIFY(rejectedFor(r, "bias varies along more than the last axis"));
        QVERIFY(rejectedFor(r, "bias is not a constant"));
    }

    void geluForms_data() {
        QTest::addColumn<bool>("tanhForm");
        QTest::newRow("erf") << false;
        QTest::newRow("tanh") << true;
    }
    void geluForms() {
        QFETCH(bool, tanhForm);
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 16}));
        b.output(writtenOutGelu(b, x, tanhForm));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"gelu-fusion", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(countFused(g, "Gelu"), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
        checkGolden(g, tanhForm ? QStringLiteral("gelu_fusion_tanh") : QStringLiteral("gelu_fusion_erf"));
    }

    void geluGuards() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 16}));
        ValueId s = b.op("Div", {x, b.initializer(floatTensor(fresh(), {}, {1.4142135f}))}, "s");
        ValueId e = b.op("Erf", {s}, "e");
        ValueId p = b.op("Add", {e, b.initializer(floatTensor(fresh(), {}, {1.0f}))}, "p");
        ValueId m1 = b.op("Mul", {x, p}, "m1");
        ValueId y = b.op("Mul", {m1, b.initializer(floatTensor(fresh(), {}, {0.25f}))}, "y");  // not 0.5
        b.output(y);
        b.output(e);  // and an intermediate is read
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"gelu-fusion"});
        QCOMPARE(countOps(*r.model.graph, "Erf"), 1);
        QVERIFY(rejectedFor(r, "not 0.5"));
    }

    void layerNormAndSkip() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3, 8}));
        ValueId res = b.input("res", DType::Float32, dims({2, 3, 8}));
        ValueId sum = b.op("Add", {x, res}, "sum");
        ValueId n = writtenOutLayerNorm(b, sum, 8);
        b.output(n);
        b.output(sum);  // the residual stream reads the sum too
        Model m = withInferredTypes(b, 13);  // before opset 17: the ai.fusescope LayerNormalization
        auto ln = compileWith(m, {"layer-norm-fusion", "eliminate-dead-code"});
        QCOMPARE(countFused(*ln.model.graph, "LayerNormalization"), 1);
        QCOMPARE(int(ln.model.graph->nodeCount()), 2);
        QVERIFY(maxRelativeError(m, ln.model) < 1e-5);
        auto skip = compileWith(m, {"layer-norm-fusion", "skip-layer-norm-fusion", "eliminate-dead-code"});
        const Graph& g = *skip.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(countFused(g, "SkipLayerNorm"), 1);
        QCOMPARE(g.node(g.order()[0]).origins.size(), size_t(10));
        QVERIFY(maxRelativeError(m, skip.model) < 1e-5);
        checkGolden(g, QStringLiteral("skip_layer_norm_fusion"));

        Model m17 = withInferredTypes(b, 17);
        auto onnxLn = compileWith(m17, {"layer-norm-fusion"});
        QCOMPARE(countOps(*onnxLn.model.graph, "LayerNormalization"), 1);
        QCOMPARE(countFused(*onnxLn.model.graph, "LayerNormalization"), 0);
    }

    void layerNormGuards() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 8}));
        ValueId mean = b.op("ReduceMean", {x}, "mean", {intsAttr("axes", {-1})});
        ValueId d = b.op("Sub", {x, mean}, "d");
        ValueId sq = b.op("Pow", {d, b.initializer(floatTensor(fresh(), {}, {2.0f}))}, "sq");
        ValueId var = b.op("ReduceMean", {sq}, "var", {intsAttr("axes", {-1})});
        ValueId sd = b.op("Sqrt", {b.op("Add", {var, b.initializer(floatTensor(fresh(), {}, {1e-5f}))}, "ve")}, "sd");
        b.output(b.op("Div", {d, sd}, "y"));
        b.output(var);  // the variance is read elsewhere
        Model m = withInferredTypes(b, 13);
        auto r = compileWith(m, {"layer-norm-fusion", "rms-norm-fusion"});
        QCOMPARE(countOps(*r.model.graph, "ReduceMean"), 2);
        QVERIFY(rejectedFor(r, "intermediate value has other readers"));
        QVERIFY(rejectedFor(r, "this is a layer norm"));
    }

    void rmsNorm() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3, 8}));
        ValueId sq = b.op("Pow", {x, b.initializer(floatTensor(fresh(), {}, {2.0f}))}, fresh());
        ValueId ms = b.op("ReduceMean", {sq}, fresh(), {intsAttr("axes", {-1})});
        ValueId e = b.op("Add", {ms, b.initializer(floatTensor(fresh(), {}, {1e-6f}))}, fresh());
        ValueId r = b.op("Reciprocal", {b.op("Sqrt", {e}, fresh())}, fresh());
        ValueId n = b.op("Mul", {x, r}, fresh());
        b.output(b.op("Mul", {n, b.initializer(randomFloatTensor("gamma", {8}, 11, 1.0f))}, "y"));
        Model m = withInferredTypes(b);
        auto c = compileWith(m, {"rms-norm-fusion", "eliminate-dead-code"});
        const Graph& g = *c.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(countFused(g, "RmsNorm"), 1);
        QVERIFY(maxRelativeError(m, c.model) < 1e-5);
        checkGolden(g, QStringLiteral("rms_norm_fusion"));
    }

    // torch.rsqrt exports as Div(1, Sqrt(...)), and LLaMA-style models scale on the left. 40
    // values a row: the kernel's vector loop and its tail.
    void rmsNormWithRsqrtAsDivision() {
        for (float numerator : {1.0f, 2.0f}) {
            GraphBuilder b;
            ValueId x = b.input("x", DType::Float32, dims({2, 3, 40}));
            ValueId sq = b.op("Pow", {x, b.initializer(floatTensor(fresh(), {}, {2.0f}))}, fresh());
            ValueId ms = b.op("ReduceMean", {sq}, fresh(), {intsAttr("axes", {-1})});
            ValueId e = b.op("Add", {ms, b.initializer(floatTensor(fresh(), {}, {1e-6f}))}, fresh());
            ValueId one = b.initializer(floatTensor(fresh(), {}, {numerator}));
            ValueId r = b.op("Div", {one, b.op("Sqrt", {e}, fresh())}, fresh());
            ValueId n = b.op("Mul", {x, r}, fresh());
            b.output(b.op("Mul", {b.initializer(randomFloatTensor("gamma", {40}, 11, 1.0f)), n}, "y"));
            Model m = withInferredTypes(b);
            auto c = compileWith(m, {"rms-norm-fusion", "eliminate-dead-code"});
            const Graph& g = *c.model.graph;
            QCOMPARE(countFused(g, "RmsNorm"), numerator == 1.0f ? 1 : 0);  // 2/sqrt is not a norm
            if (numerator == 1.0f) QCOMPARE(int(g.nodeCount()), 1);
            QVERIFY(maxRelativeError(m, c.model) < 1e-5);
        }
    }

    void attention() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 5, 8}));
        ValueId mask = b.input("mask", DType::Float32, dims({2, 1, 1, 5}));
        b.output(writtenOutAttention(b, x, mask));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"attention-fusion", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countFused(g, "Attention"), 1);
        QCOMPARE(countOps(g, "Transpose"), 0);  // all four head transposes absorbed
        QCOMPARE(countOps(g, "Softmax"), 0);
        QCOMPARE(countOps(g, "MatMul"), 3);  // the projections stay
        for (NodeId id : g.order())
            if (g.node(id).opType == "Attention") QCOMPARE(g.node(id).origins.size(), size_t(9));
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
        checkGolden(g, QStringLiteral("attention_fusion"));
    }

    // A transformer block exported in float16 or bfloat16 (PyTorch's model.half()) fuses as
    // its float32 export does: attention, bias epilogues, GELU written out with its constants
    // rounded to the narrow type (float16's sqrt(2) is 1.4140625) and the residual norm.
    void narrowFloatBlocksFuse_data() {
        QTest::addColumn<bool>("bfloat16");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("float16") << false << 1e-2;
        QTest::newRow("bfloat16") << true << 5e-2;
    }
    void narrowFloatBlocksFuse() {
        QFETCH(bool, bfloat16);
        QFETCH(double, tolerance);
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 5, 8}));
        ValueId mask = b.input("mask", DType::Float32, dims({2, 1, 1, 5}));
        ValueId y = writtenOutAttention(b, x, mask);
        ValueId h = b.op("Add", {b.op("MatMul", {y, b.initializer(randomFloatTensor("w1", {8, 16}, 31))}, fresh()),
                                 b.initializer(randomFloatTensor("b1", {16}, 32))},
                         fresh());
        ValueId z = b.op("Add", {b.op("MatMul", {writtenOutGelu(b, h, false), b.initializer(randomFloatTensor("w2", {16, 8}, 33))}, fresh()),
                                 b.initializer(randomFloatTensor("b2", {8}, 34))},
                         fresh());
        ValueId sum = b.op("Add", {z, x}, "sum");
        b.output(b.op("LayerNormalization", {sum, b.initializer(randomFloatTensor("gamma", {8}, 35, 1.f)),
                                             b.initializer(randomFloatTensor("beta", {8}, 36))},
                      "out"));
        const Model wide = withInferredTypes(b);
        // Everything narrowed, the norm and the softmax too, as the exporter writes them.
        std::vector<std::unique_ptr<Pass>> narrowing;
        narrowing.push_back(bfloat16 ? passes::convertToBFloat16({}) : passes::convertToFloat16({}));
        auto narrowed = compileModel(wide, std::move(narrowing));
        QVERIFY2(narrowed.isOk(), narrowed.status().message().c_str());
        const Model& narrow = narrowed->model;
        QCOMPARE(countOps(*narrow.graph, "Erf"), 1);

        auto r = compileWith(narrow, {"gelu-fusion", "skip-layer-norm-fusion", "attention-fusion", "matmul-add-fusion",
                                      "activation-fusion", "elementwise-fusion", "eliminate-dead-code"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countFused(g, "Attention"), 1);
        QCOMPARE(countFused(g, "SkipLayerNorm"), 1);
        QCOMPARE(countFused(g, "FusedMatMul"), 2);
        int geluEpilogues = 0;  // the GELU in the first one's epilogue
        for (NodeId id : g.order()) geluEpilogues += passes::stringAttr(g.node(id), "activation", "") == "Gelu";
        QCOMPARE(geluEpilogues, 1);
        for (const char* op : {"Erf", "Softmax", "Add", "Div", "LayerNormalization"}) QCOMPARE(countOps(g, op), 0);
        QVERIFY2(maxRelativeError(narrow, r.model) < tolerance, qPrintable(QString::number(maxRelativeError(narrow, r.model))));
    }

    void attentionKernelLayouts_data() {
        QTest::addColumn<std::vector<int64_t>>("q");  // stored dims and the perm to logical
        QTest::addColumn<std::vector<int64_t>>("qPerm");
        QTest::addColumn<std::vector<int64_t>>("k");
        QTest::addColumn<std::vector<int64_t>>("kPerm");  // to K^T [.., d, Lk]
        QTest::addColumn<std::vector<int64_t>>("v");
        QTest::addColumn<std::vector<int64_t>>("outPerm");
        QTest::addColumn<bool>("mask");
        using V = std::vector<int64_t>;
        // bert-style heads: [L, H, d] with every operand read through strides
        QTest::newRow("heads") << V{7, 3, 5} << V{1, 0, 2} << V{9, 3, 5} << V{1, 2, 0} << V{3, 9, 6} << V{1, 0, 2} << true;
        // neither of Q's last two logical dims is contiguous: packed
        QTest::newRow("packed") << V{5, 2, 7, 3} << V{1, 3, 2, 0} << V{2, 3, 5, 4} << V{0, 1, 2, 3} << V{2, 3, 4, 6}
                                << V{0, 2, 1, 3} << false;
        // K shared across the batch (broadcast), one key, odd sizes
        QTest::newRow("broadcast") << V{3, 70, 5} << V{0, 1, 2} << V{1, 5, 1} << V{0, 1, 2} << V{3, 1, 2} << V{} << true;
        // one head of 203 queries over 400 keys: blocks of query rows of unequal count
        QTest::newRow("tall") << V{1, 203, 8} << V{0, 1, 2} << V{1, 8, 400} << V{0, 1, 2} << V{1, 400, 6} << V{} << false;
    }

    void attentionKernelLayouts() {
        QFETCH(std::vector<int64_t>, q);
        QFETCH(std::vector<int64_t>, qPerm);
        QFETCH(std::vector<int64_t>, k);
        QFETCH(std::vector<int64_t>, kPerm);
        QFETCH(std::vector<int64_t>, v);
        QFETCH(std::vector<int64_t>, outPerm);
        QFETCH(bool, mask);
        GraphBuilder b;
        auto operand = [&](const char* name, const std::vector<int64_t>& stored, const std::vector<int64_t>& perm) {
            ValueId x = b.input(name, DType::Float32, dims(stored));
            return perm.empty() ? x : b.op("Transpose", {x}, fresh(), {intsAttr("perm", perm)});
        };
        ValueId s = b.op("Mul", {b.op("MatMul", {operand("q", q, qPerm), operand("k", k, kPerm)}, fresh()),
                                 b.initializer(floatTensor(fresh(), {}, {0.3f}))}, fresh());
        if (mask) s = b.op("Add", {s, b.input("mask", DType::Float32, dims({1, 1}))}, fresh());
        ValueId o = b.op("MatMul", {b.op("Softmax", {s}, fresh()), b.input("v", DType::Float32, dims(v))}, fresh());
        b.output(outPerm.empty() ? o : b.op("Transpose", {o}, "y", {intsAttr("perm", outPerm)}));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"attention-fusion"});
        QCOMPARE(countFused(*r.model.graph, "Attention"), 1);
        QCOMPARE(int(r.model.graph->nodeCount()), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    void attentionWithoutTransposesOrMask() {
        // Plain 3-D SDPA; K^T is an input and the scale multiplies the scores.
        GraphBuilder b;
        ValueId q = b.input("q", DType::Float32, dims({3, 4, 6}));
        ValueId kt = b.input("kt", DType::Float32, dims({3, 6, 7}));
        ValueId v = b.input("v", DType::Float32, dims({3, 7, 5}));
        ValueId s = b.op("Mul", {b.initializer(floatTensor(fresh(), {}, {0.25f})), b.op("MatMul", {q, kt}, fresh())}, fresh());
        b.output(b.op("MatMul", {b.op("Softmax", {s}, fresh(), {fsc::intAttr("axis", 2)}), v}, "y"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"attention-fusion"});
        QCOMPARE(int(r.model.graph->nodeCount()), 1);
        QCOMPARE(countFused(*r.model.graph, "Attention"), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
    }

    void attentionGuards() {
        {
            GraphBuilder b;
            ValueId x = b.input("x", DType::Float32, dims({2, 5, 8}));
            ValueId mask = b.input("mask", DType::Float32, dims({2, 1, 1, 5}));
            b.output(writtenOutAttention(b, x, mask, {.softmaxAxis = 2}));
            auto r = compileWith(withInferredTypes(b), {"attention-fusion"});
            QCOMPARE(countFused(*r.model.graph, "Attention"), 0);
            QVERIFY(rejectedFor(r, "Softmax is not over the last axis"));
        }
        {
            GraphBuilder b;
            ValueId x = b.input("x", DType::Float32, dims({2, 5, 8}));
            ValueId mask = b.input("mask", DType::Float32, dims({2, 1, 1, 5}));
            b.output(writtenOutAttention(b, x, mask, {.scoresAlsoOutput = true}));
            Model m = withInferredTypes(b);
            auto r = compileWith(m, {"attention-fusion"});
            QCOMPARE(countFused(*r.model.graph, "Attention"), 0);
            QVERIFY(rejectedFor(r, "intermediate value has other readers"));
            QVERIFY(maxRelativeError(m, r.model) < 1e-6);
        }
        {
            // Before opset 13 Softmax's default axis is 1: not attention over keys.
            GraphBuilder b;
            ValueId q = b.input("q", DType::Float32, dims({3, 4, 6}));
            ValueId kt = b.input("kt", DType::Float32, dims({3, 6, 7}));
            ValueId v = b.input("v", DType::Float32, dims({3, 7, 5}));
            b.output(b.op("MatMul", {b.op("Softmax", {b.op("MatMul", {q, kt}, fresh())}, fresh()), v}, "y"));
            auto r = compileWith(withInferredTypes(b, 11), {"attention-fusion"});
            QCOMPARE(countFused(*r.model.graph, "Attention"), 0);
            QVERIFY(rejectedFor(r, "Softmax is not over the last axis"));
        }
        {
            // V broadcast from a lower rank: MatMul broadcasting the kernel does not take.
            GraphBuilder b;
            ValueId q = b.input("q", DType::Float32, dims({3, 4, 6}));
            ValueId kt = b.input("kt", DType::Float32, dims({3, 6, 7}));
            ValueId v = b.input("v", DType::Float32, dims({7, 5}));
            b.output(b.op("MatMul", {b.op("Softmax", {b.op("MatMul", {q, kt}, fresh())}, fresh()), v}, "y"));
            auto r = compileWith(withInferredTypes(b), {"attention-fusion"});
            QVERIFY(rejectedFor(r, "rank differs"));
        }
    }

    void elementwiseGroups() {
        // x * sigmoid(x) + bias, then a diamond through Exp: one program of 7 ops.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3, 8}));
        ValueId swish = b.op("Mul", {x, b.op("Sigmoid", {x}, fresh())}, fresh());
        ValueId biased = b.op("Add", {swish, b.initializer(randomFloatTensor("bias", {8}, 31))}, fresh());
        ValueId e = b.op("Exp", {b.op("Neg", {biased}, fresh())}, fresh());
        ValueId twice = b.op("Mul", {e, b.initializer(floatTensor(fresh(), {}, {2.0f}))}, fresh());
        b.output(b.op("Add", {e, twice}, "y"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"elementwise-fusion"});
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 1);
        const Node& n = g.node(g.order()[0]);
        QCOMPARE(n.opType, std::string("FusedElementwise"));
        QCOMPARE(n.origins.size(), size_t(7));
        QCOMPARE(n.inputs.size(), size_t(3));  // x, bias, 2.0
        const std::string source = n.attribute("source")->s;
        QVERIFY(source.find("std::exp(") != std::string::npos);
        QVERIFY(source.find("out[i] = ") != std::string::npos);
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
        checkGolden(g, QStringLiteral("elementwise_fusion"));
    }

    void elementwiseLongAndBroadcastRows() {
        // Rows longer than a chunk (split over the pool) and a middle-dim broadcast.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({3, 5, 7001}));
        ValueId row = b.input("row", DType::Float32, dims({3, 1, 7001}));
        ValueId t = b.op("Tanh", {b.op("Mul", {b.op("Sub", {x, row}, fresh()), x}, fresh())}, fresh());
        b.output(b.op("Max", {t, b.initializer(floatTensor(fresh(), {}, {-0.5f}))}, "y"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"elementwise-fusion"});
        QCOMPARE(countFused(*r.model.graph, "FusedElementwise"), 1);
        QCOMPARE(int(r.model.graph->nodeCount()), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
    }

    void elementwiseScalarOperands() {
        // Inputs broadcast along the row (per-channel s and t, a scalar one) are used by the
        // kernel as one value per row: on either side of Sub and Div, and expanded for Pow,
        // which has no scalar form.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 3, 37}));
        ValueId s = b.input("s", DType::Float32, dims({2, 3, 1}));
        ValueId t = b.initializer(randomFloatTensor("t", {1, 3, 1}, 17));
        ValueId one = b.initializer(floatTensor(fresh(), {}, {1.0f}));
        ValueId a1 = b.op("Add", {b.op("Abs", {x}, fresh()), one}, fresh());
        ValueId d = b.op("Sub", {s, x}, fresh());
        ValueId q = b.op("Div", {t, a1}, fresh());
        ValueId p = b.op("Pow", {a1, s}, fresh());
        ValueId sum = b.op("Add", {b.op("Mul", {d, q}, fresh()), p}, fresh());
        ValueId bounded = b.op("Add", {b.op("Max", {x, s}, fresh()), b.op("Min", {t, x}, fresh())}, fresh());
        ValueId all = b.op("Add", {sum, b.op("Mul", {bounded, t}, fresh())}, fresh());
        b.output(b.op("Sub", {b.op("Div", {all, s}, fresh()), t}, "y"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"elementwise-fusion"});
        QCOMPARE(countFused(*r.model.graph, "FusedElementwise"), 1);
        QCOMPARE(int(r.model.graph->nodeCount()), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
    }

    void elementwiseGuards() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 1, 8}));
        ValueId w = b.input("w", DType::Float32, dims({2, 3, 8}));
        ValueId small = b.op("Exp", {b.op("Abs", {x}, fresh())}, "small");  // [2,1,8]: joins only its own shape
        ValueId wide = b.op("Mul", {small, w}, "wide");                     // broadcasts to [2,3,8]
        ValueId y = b.op("Relu", {wide}, "y");
        b.output(y);
        ValueId shared = b.op("Abs", {w}, "shared");  // read by Sqrt and as a graph output
        b.output(shared);
        b.output(b.op("Sqrt", {shared}, "s"));
        ValueId c = b.op("Cos", {w}, "cos");
        b.output(c);
        b.output(b.op("Add", {b.op("Sin", {w}, "sin"), c}, "t"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"elementwise-fusion"});
        const Graph& g = *r.model.graph;
        // {Abs, Exp} and {Mul, Relu} are separate groups (their shapes differ); {Sin, Add}.
        QCOMPARE(countFused(g, "FusedElementwise"), 3);
        QCOMPARE(countOps(g, "Sqrt"), 1);
        QCOMPARE(countOps(g, "Cos"), 1);  // a graph output keeps its producer
        QVERIFY(rejectedFor(r, "has other readers"));
        QVERIFY(maxRelativeError(m, r.model) < 1e-6);
    }

    void elementwiseTakesInCastsFromInt32() {
        // An INT8 graph's dequantization: ConvInteger's int32 sums -> Cast -> * scale + a Cast
        // int32 bias (broadcast) + a float residual -> Relu. Both Casts are taken in; the kernel
        // converts as it loads, to the same floats (sums past 2^24 round as Cast rounds). A
        // Cast whose float output is also a graph output stays.
        GraphBuilder b;
        ValueId acc = b.input("acc", DType::Int32, dims({1, 4, 5, 7}));
        ValueId row = b.input("row", DType::Int32, dims({1, 4, 1, 1}));
        ValueId res = b.input("res", DType::Float32, dims({1, 4, 5, 7}));
        const std::vector<Attribute> toFloat{intAttr("to", 1)};
        ValueId scaled = b.op("Mul", {b.op("Cast", {acc}, fresh(), toFloat), b.initializer(randomFloatTensor("scale", {4, 1, 1}, 3))},
                              fresh());
        ValueId biased = b.op("Add", {scaled, b.op("Cast", {row}, fresh(), toFloat)}, fresh());
        b.output(b.op("Relu", {b.op("Add", {biased, res}, fresh())}, "y"));
        ValueId other = b.input("other", DType::Int32, dims({6}));
        ValueId shown = b.op("Cast", {other}, "shown", toFloat);
        b.output(shown);
        b.output(b.op("Neg", {b.op("Abs", {shown}, fresh())}, "z"));
        Model m = withInferredTypes(b);
        auto r = compileWith(m, {"elementwise-fusion"});
        const Graph& g = *r.model.graph;
        QCOMPARE(countFused(g, "FusedElementwise"), 2);
        QCOMPARE(countOps(g, "Cast"), 1);
        int int32Inputs = 0;
        for (NodeId id : g.order())
            for (ValueId in : g.node(id).inputs)
                int32Inputs += g.node(id).opType == "FusedElementwise" && passes::dtypeOf(g, in) == DType::Int32;
        QCOMPARE(int32Inputs, 2);  // acc and row, read as they are

        std::mt19937 rng(5);
        auto int32s = [&](std::vector<int64_t> d) {
            RtTensor t = allocateTensor(DType::Int32, d);
            for (int64_t i = 0; i < t.numel(); ++i)
                t.as<int32_t>()[i] = i % 5 == 0 ? int32_t(16777217 + int32_t(rng() % 1000)) * (i % 2 ? 1 : -1)
                                                : int32_t(rng() % 200001) - 100000;
            return t;
        };
        RtTensor resid = allocateTensor(DType::Float32, {1, 4, 5, 7});
        for (int64_t i = 0; i < resid.numel(); ++i) resid.as<float>()[i] = float(int(rng() % 2001) - 1000);
        const std::vector<RtTensor> feeds{int32s({1, 4, 5, 7}), int32s({1, 4, 1, 1}), resid, int32s({6})};
        auto before = Executor::create(m, cpuExecutorOptions());
        auto after = Executor::create(r.model, cpuExecutorOptions());
        QVERIFY(before && after);
        auto want = (*before)->run(feeds);
        auto got = (*after)->run(feeds);
        QVERIFY2(got, got ? "" : got.status().message().c_str());
        QVERIFY(want);
        QCOMPARE(got->size(), want->size());
        for (size_t o = 0; o < want->size(); ++o) {
            QCOMPARE((*got)[o].dtype, DType::Float32);
            QCOMPARE((*got)[o].dims, (*want)[o].dims);
            QVERIFY(std::memcmp((*got)[o].data, (*want)[o].data, (*want)[o].bytes()) == 0);
        }
        float largest = 0;
        for (int64_t i = 0; i < (*want)[0].numel(); ++i) largest = std::max(largest, (*want)[0].as<float>()[i]);
        QVERIFY(largest > 1e5f);  // the large sums reach the output
    }

    void elementwiseProgramChecks() {
        QVERIFY(ElementwiseProgram::fromAttributes({"Add"}, {0, 1}, 2).isOk());
        auto unknown = ElementwiseProgram::fromAttributes({"Frobnicate"}, {0, -1}, 1);
        QVERIFY(!unknown.isOk());
        QVERIFY(unknown.status().message().find("unknown op 'Frobnicate'") != std::string::npos);
        auto early = ElementwiseProgram::fromAttributes({"Exp", "Add"}, {2, -1, 0, 1}, 1);
        QVERIFY(!early.isOk());
        QVERIFY(early.status().message().find("not yet written") != std::string::npos);
        QVERIFY(!ElementwiseProgram::fromAttributes({"Add"}, {0}, 2).isOk());
        auto p = ElementwiseProgram::fromAttributes({"Sigmoid", "Mul"}, {0, -1, 0, 1}, 1);
        QVERIFY(p.isOk());
        QCOMPARE(p->cppLoopBody(), std::string("const float x0 = in0[o0];\n"
                                               "const float t1 = 1.0f / (1.0f + std::exp(-x0));\n"
                                               "const float t2 = x0 * t1;\n"
                                               "out[i] = t2;\n"));
    }

    void transformerBlockAtO2() {
        // MatMul + bias + GELU + MatMul + bias + residual + LayerNorm: the whole O2 pipeline.
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, dims({2, 4, 8}));
        ValueId h = b.op("Add", {b.op("MatMul", {x, b.initializer(randomFloatTensor("w1", {8, 16}, 12))}, fresh()),
                                 b.initializer(randomFloatTensor("b1", {16}, 13))}, fresh());
        ValueId act = writtenOutGelu(b, h, false);
        ValueId o = b.op("Add", {b.op("MatMul", {act, b.initializer(randomFloatTensor("w2", {16, 8}, 14))}, fresh()),
                                 b.initializer(randomFloatTensor("b2", {8}, 15))}, fresh());
        ValueId sum = b.op("Add", {x, o}, fresh());
        b.output(writtenOutLayerNorm(b, sum, 8));
        Model m = withInferredTypes(b, 13);
        auto passes = pipelinePassesForTest("O2");
        auto r = compileWith(m, passes);
        const Graph& g = *r.model.graph;
        QCOMPARE(int(g.nodeCount()), 3);  // FusedMatMul(+Gelu), FusedMatMul, SkipLayerNorm
        QCOMPARE(countFused(g, "FusedMatMul"), 2);
        QCOMPARE(countFused(g, "SkipLayerNorm"), 1);
        QVERIFY(maxRelativeError(m, r.model) < 1e-5);
        checkGolden(g, QStringLiteral("o2_transformer_block"));
    }

private:
    static std::vector<std::string> pipelinePassesForTest(const char* level);
};

#include "compiler/pipelines.h"
std::vector<std::string> TestFusionPasses::pipelinePassesForTest(const char* level) {
    return *pipelinePasses(level);
}

QTEST_APPLESS_MAIN(TestFusionPasses)
#include "tst_fusion_passes.moc"
