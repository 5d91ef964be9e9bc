// INT8 post-training quantization: the calibrators (min-max, percentile, entropy) on known
// data, calibration inputs read from folders (and each bad folder's error), generated
// inputs, int8-quantization's QDQ form (counts, per-channel axis, guards and exclusions
// with reasons, numbers near float32), qdq-folding into QLinearConv / ConvInteger /
// MatMulInteger (counts, numbers equal to the QDQ form within one quantization step), the
// oneDNN int8 products against an exact product, accuracy and sensitivity, and a golden dump.
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <tuple>

#include "compiler/target.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/int8_conv_onednn.h"
#include "compiler/backends/cpu/int8_conv_winograd.h"
#include "compiler/backends/cpu/int8_gemv.h"
#include "compiler/backends/cpu/int8_products.h"
#include "compiler/backends/cpu/packed_rows_cache.h"
#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "compiler/passes/passes.h"
#include "compiler/quantization/accuracy.h"
#include "compiler/quantization/calibration_data.h"
#include "compiler/quantization/range_calibrator.h"
#include "compiler/runtime/thread_pool.h"
#include "core/tensor_io.h"
#include "pass_test_support.h"

using namespace fsc;
using namespace fsc::test;

namespace {

// x[1,3,8,8] -> conv1 -> relu1 -> conv2 -> relu2 -> (a) conv3 ; relu2 also -> Add(conv3, relu2)
// -> GlobalAveragePool -> Flatten -> fc (Gemm, transB) -> y; plus a MatMul of two
// activations (stays float).
Model smallCnn() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 3, 8, 8}));
    ValueId w1 = b.initializer(randomFloatTensor("w1", {8, 3, 3, 3}, 1, 0.4f));
    ValueId b1 = b.initializer(randomFloatTensor("b1", {8}, 2, 0.1f));
    ValueId w2 = b.initializer(randomFloatTensor("w2", {8, 8, 3, 3}, 3, 0.2f));
    ValueId w3 = b.initializer(randomFloatTensor("w3", {8, 8, 1, 1}, 4, 0.3f));
    ValueId wf = b.initializer(randomFloatTensor("wf", {5, 8}, 5, 0.5f));
    ValueId bf = b.initializer(randomFloatTensor("bf", {5}, 6, 0.1f));
    const std::vector<Attribute> pad1{intsAttr("pads", {1, 1, 1, 1})};
    ValueId c1 = b.op("Conv", {x, w1, b1}, "c1", pad1, "conv1");
    ValueId r1 = b.op("Relu", {c1}, "r1", {}, "relu1");
    ValueId c2 = b.op("Conv", {r1, w2}, "c2", pad1, "conv2");
    ValueId r2 = b.op("Relu", {c2}, "r2", {}, "relu2");
    ValueId c3 = b.op("Conv", {r2, w3}, "c3", {}, "conv3");
    ValueId s = b.op("Add", {c3, r2}, "s", {}, "residual");
    ValueId p = b.op("GlobalAveragePool", {s}, "p", {}, "pool");
    ValueId f = b.op("Flatten", {p}, "f", {intAttr("axis", 1)}, "flatten");
    ValueId y = b.op("Gemm", {f, wf, bf}, "y", {intAttr("transB", 1)}, "fc");
    ValueId t = b.op("Transpose", {f}, "t", {intsAttr("perm", {1, 0})}, "transpose");
    ValueId g = b.op("MatMul", {t, f}, "g", {}, "gram");
    b.output(y);
    b.output(g);
    return withInferredTypes(b);
}

// A QDQ graph as exporters write one: scalar parameters, a QuantizeLinear and a
// DequantizeLinear (each with its own initializers) around float steps, int8 weights behind a
// DequantizeLinear. Activations are `type` (uint8 unless set).
struct QdqGraph {
    GraphBuilder b;
    DType type = DType::UInt8;

    ValueId scalar(const std::string& name, DType t, double v) {
        if (t == DType::Float32) return b.initializer(floatTensor(name, {}, {float(v)}));
        return b.initializer(Tensor(name, t, {}, makeBuffer(std::string(1, char(int(v)))), 0, 1));
    }
    ValueId quantize(ValueId v, const std::string& at, double scale, int zero) {
        return b.op("QuantizeLinear", {v, scalar(at + "_s", DType::Float32, scale), scalar(at + "_z", type, zero)}, at + "_q");
    }
    ValueId dequantize(ValueId q, const std::string& at, double scale, int zero) {
        return b.op("DequantizeLinear", {q, scalar(at + "_ds", DType::Float32, scale), scalar(at + "_dz", type, zero)},
                    at + "_dq");
    }
    ValueId qdq(ValueId v, const std::string& at, double scale, int zero) {
        return dequantize(quantize(v, at, scale, zero), at, scale, zero);
    }
    // Random int8 values of `dims` with one scale, dequantized.
    ValueId int8Weight(const std::string& name, std::vector<int64_t> dims, uint32_t seed, double scale) {
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        std::string bytes(size_t(n), '\0');
        std::mt19937 rng(seed);
        for (char& c : bytes) c = char(int(rng() % 255) - 127);
        ValueId q = b.initializer(Tensor(name + "_wq", DType::Int8, std::move(dims), makeBuffer(bytes), 0, bytes.size()));
        return b.op("DequantizeLinear", {q, scalar(name + "_ws", DType::Float32, scale)}, name);
    }
};

// A quantized export's QDQ form, as PyTorch writes it: x -> Q -> DQ -> Conv (weight: DQ of
// int8 with per-channel scales, float bias) -> Relu -> Q -> DQ -> depthwise Conv (its own
// DQ'd weight) -> Q -> DQ -> y.
Model importedQdqCnn() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 4, 9, 9}));
    auto scalar = [&](const char* name, DType t, double v) {
        std::string bytes(t == DType::Float32 ? 4 : 1, '\0');
        if (t == DType::Float32) {
            const float f = float(v);
            std::memcpy(bytes.data(), &f, 4);
        } else bytes[0] = char(int(v));
        return b.initializer(Tensor(name, t, {}, makeBuffer(bytes), 0, bytes.size()));
    };
    auto int8Weight = [&](const char* name, std::vector<int64_t> dims, uint32_t seed) {
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        std::string bytes(size_t(n), '\0');
        std::mt19937 rng(seed);
        for (char& c : bytes) c = char(int(rng() % 255) - 127);
        return b.initializer(Tensor(name, DType::Int8, std::move(dims), makeBuffer(bytes), 0, bytes.size()));
    };
    auto quantDequant = [&](ValueId v, const std::string& at, double scale, int zero) {
        ValueId s = scalar((at + "_s").c_str(), DType::Float32, scale), z = scalar((at + "_z").c_str(), DType::UInt8, zero);
        ValueId q = b.op("QuantizeLinear", {v, s, z}, at + "_q");
        return b.op("DequantizeLinear", {q, s, z}, at + "_dq");
    };
    ValueId x0 = quantDequant(x, "in", 0.02, 128);
    std::vector<float> channelScales{0.004f, 0.003f, 0.005f, 0.002f, 0.004f, 0.006f};
    ValueId w1s = b.initializer(floatTensor("w1_s", {6}, channelScales));
    ValueId w1z = b.initializer(Tensor("w1_z", DType::Int8, {6}, makeBuffer(std::string(6, '\0')), 0, 6));
    ValueId w1 = b.op("DequantizeLinear", {int8Weight("w1_q", {6, 4, 3, 3}, 3), w1s, w1z}, "w1", {intAttr("axis", 0)});
    ValueId c1 = b.op("Conv", {x0, w1, b.initializer(randomFloatTensor("b1", {6}, 4, 0.1f))}, "c1",
                      {intsAttr("pads", {1, 1, 1, 1})}, "conv");
    ValueId r1 = b.op("Relu", {c1}, "r1", {}, "relu");
    ValueId x1 = quantDequant(r1, "mid", 0.01, 0);
    ValueId w2 = b.op("DequantizeLinear", {int8Weight("w2_q", {6, 1, 3, 3}, 5), scalar("w2_s", DType::Float32, 0.005)}, "w2");
    ValueId c2 = b.op("Conv", {x1, w2}, "c2", {intsAttr("pads", {1, 1, 1, 1}), intAttr("group", 6), intsAttr("strides", {2, 2})},
                      "depthwise");
    b.output(quantDequant(c2, "out", 0.01, 100));
    return withInferredTypes(b);
}

// The named pipeline, less the pass `without` (if any).
CompileResult compileAt(const Model& m, const char* level, const std::string& without = {}) {
    PipelineSpec spec;
    spec.passes = *resolvePipeline(level, "", without.empty() ? std::vector<std::string>{} : std::vector<std::string>{without});
    auto passes = buildPipeline(spec);
    if (!passes) qFatal("%s", passes.status().message().c_str());
    CompileOptions options;
    options.verifyEachPass = true;
    auto r = compileModel(m, std::move(*passes), options);
    if (!r) qFatal("compile failed: %s", r.status().message().c_str());
    return std::move(*r);
}

// DequantizeLinear nodes left whose quantized input is a constant (a weight dequantized each run).
int weightDequantizations(const Graph& g) {
    int n = 0;
    for (NodeId id : g.order()) {
        const Node& node = g.node(id);
        if (node.opType == "DequantizeLinear" && g.value(node.inputs[0]).kind == Value::Kind::Initializer) ++n;
    }
    return n;
}

int count(const Graph& g, const std::string& op) {
    return countOps(g, op);
}

std::shared_ptr<CalibrationData> generated(const Model& m, int n) {
    return std::make_shared<CalibrationData>(generateCalibrationData(*m.graph, n, 3));
}

CompileResult quantize(const Model& m, Int8Options o, bool fold) {
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(passes::quantizeInt8(std::move(o)));
    if (fold) passes.push_back(passes::foldQdq());
    passes.push_back(passes::eliminateDeadCode());
    CompileOptions options;
    options.verifyEachPass = true;
    auto r = compileModel(m, std::move(passes), options);
    if (!r) qFatal("compile failed: %s", r.status().message().c_str());
    return std::move(*r);
}

const Attribute* attr(const Node& n, const char* name) {
    for (const Attribute& a : n.attributes)
        if (a.name == name) return &a;
    return nullptr;
}

}  // namespace

class TestQuantization : public QObject {
    Q_OBJECT
private slots:
    void minMaxKeepsEverything() {
        RangeCalibrator c;
        const std::vector<float> v{-2.0f, 0.5f, 3.0f, 1.0f};
        c.observeExtent(v.data(), int64_t(v.size()));
        const ValueRange r = c.range(CalibrationMethod::MinMax);
        QCOMPARE(r.min, -2.0f);
        QCOMPARE(r.max, 3.0f);
    }

    void percentileAndEntropyClipARareOutlier() {
        std::vector<float> v;
        std::mt19937 rng(1);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (int i = 0; i < 200000; ++i) v.push_back(normal(rng));
        v.push_back(60.0f);  // one outlier
        RangeCalibrator c;
        c.observeExtent(v.data(), int64_t(v.size()));
        c.observeHistogram(v.data(), int64_t(v.size()));
        QCOMPARE(c.range(CalibrationMethod::MinMax).max, 60.0f);
        const ValueRange p = c.range(CalibrationMethod::Percentile, 99.99);
        QVERIFY2(p.max > 3.0f && p.max < 6.0f, std::to_string(p.max).c_str());
        QVERIFY(p.min < -3.0f && p.min > -6.0f);
        const ValueRange e = c.range(CalibrationMethod::Entropy);
        QVERIFY2(e.max > 2.0f && e.max < 20.0f, std::to_string(e.max).c_str());
        QVERIFY(e.min >= c.observedMin() && e.min < -2.0f);
    }

    void entropyIsNotDraggedDownByReluZeros() {
        // After a ReLU most values are exactly 0: the threshold must still cover the spread.
        std::vector<float> v;
        std::mt19937 rng(2);
        std::uniform_real_distribution<float> u(0.0f, 6.0f);
        for (int i = 0; i < 100000; ++i) v.push_back(i % 10 ? 0.0f : u(rng));
        RangeCalibrator c;
        c.observeExtent(v.data(), int64_t(v.size()));
        c.observeHistogram(v.data(), int64_t(v.size()));
        const ValueRange e = c.range(CalibrationMethod::Entropy);
        QCOMPARE(e.min, 0.0f);
        QVERIFY2(e.max > 4.5f, std::to_string(e.max).c_str());
        QVERIFY(c.range(CalibrationMethod::Percentile, 99.99).max > 5.5f);
    }

    void quantParamsHoldZeroExactly() {
        const QuantParams a = activationParams({-1.0f, 3.0f}, false);
        QCOMPARE(a.isSigned, false);
        QVERIFY(std::abs(a.scale - 4.0f / 255) < 1e-7f);
        QCOMPARE(a.zeroPoint, 64);  // round(1 / (4/255)) = 63.75
        const QuantParams relu = activationParams({0.0f, 6.0f}, false);
        QCOMPARE(relu.zeroPoint, 0);
        const QuantParams s = activationParams({-1.0f, 3.0f}, true);
        QCOMPARE(s.isSigned, true);
        QCOMPARE(s.zeroPoint, 0);
        QVERIFY(std::abs(s.scale - 3.0f / 127) < 1e-7f);
        QCOMPARE(activationParams({0, 0}, false).scale, 1.0f);  // never a zero scale
    }

    void calibrationFoldersAreReadAndCheckedByFile() {
        Model m = smallCnn();
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        Tensor t = randomFloatTensor("x", {1, 3, 8, 8}, 9, 1.0f);
        for (const char* set : {"test_data_set_0", "test_data_set_1", "test_data_set_2"}) {
            std::filesystem::create_directories(root / set);
            QVERIFY(writeTensorProtoFile(root / set / "input_0.pb", t).isOk());
        }
        auto data = loadCalibrationData(*m.graph, root);
        QVERIFY2(data, data.status().message().c_str());
        QCOMPARE(data->samples.size(), size_t(3));
        QVERIFY(!data->generated);
        QVERIFY(data->source.find("3 sets") != std::string::npos);

        // A set missing its file, wrong shapes and an empty folder: errors naming the file.
        std::filesystem::create_directories(root / "test_data_set_3");
        std::filesystem::create_directories(root / "zz" );
        QVERIFY(writeTensorProtoFile(root / "zz" / "input_0.pb", randomFloatTensor("x", {1, 3, 4, 4}, 9)).isOk());
        auto bad = loadCalibrationData(*m.graph, root);
        QVERIFY(!bad);
        QVERIFY2(bad.status().message().find("zz/input_0.pb") != std::string::npos, bad.status().message().c_str());
        QVERIFY(bad.status().message().find("does not fit input 'x'") != std::string::npos);
        QTemporaryDir empty;
        auto none = loadCalibrationData(*m.graph, empty.path().toStdString());
        QVERIFY(!none);
        QVERIFY(none.status().message().find("no calibration inputs") != std::string::npos);
        auto missing = loadCalibrationData(*m.graph, root / "nope");
        QVERIFY(!missing);
        QVERIFY(missing.status().message().find("nope") != std::string::npos);
    }

    void generatedDataIsSaidToBeGeneratedAndHeldBack() {
        Model m = smallCnn();
        CalibrationData d = generateCalibrationData(*m.graph, 8, 1);
        QCOMPARE(d.samples.size(), size_t(8));
        QVERIFY(d.generated);
        QVERIFY(d.source.find("generated") != std::string::npos);
        QVERIFY(d.source.find("synthetic images") != std::string::npos);
        // Normalised images: within ImageNet's normalised extent, not constant.
        const RtTensor& img = d.samples[0][0];
        float lo = 1e9f, hi = -1e9f;
        for (int64_t i = 0; i < img.numel(); ++i) {
            lo = std::min(lo, img.as<float>()[i]);
            hi = std::max(hi, img.as<float>()[i]);
        }
        QVERIFY(lo >= -2.2f && hi <= 2.7f && hi - lo > 0.5f);
        CalibrationSplit split = holdBack(std::move(d));
        QCOMPARE(split.calibration.samples.size(), size_t(6));
        QCOMPARE(split.heldBack.samples.size(), size_t(2));
        QVERIFY(split.heldBack.source.find("held back 2") != std::string::npos);
    }

    void qdqFormQuantizesConvAndGemmWithReasons() {
        Model m = smallCnn();
        Int8Options o;
        o.calibration = generated(m, 4);
        auto r = quantize(m, o, false);
        const Graph& g = *r.model.graph;
        // conv1, conv2, conv3, fc; the gram MatMul multiplies two activations.
        QCOMPARE(r.trace.passes[0].counters.applied, 4);
        QVERIFY(rejectedFor(r, "activation x activation stays float"));
        QCOMPARE(count(g, "QuantizeLinear"), 4);    // x, r1, r2, f: one per tensor
        QCOMPARE(count(g, "DequantizeLinear"), 8);  // those, and four weights
        QCOMPARE(count(g, "Conv"), 3);
        int int8Weights = 0;
        for (ValueId w : g.initializers) int8Weights += g.value(w).initializer->dtype() == DType::Int8 && g.value(w).initializer->numElements() > 1;
        QCOMPARE(int8Weights, 4);
        // Per tensor by default: no axis attribute.
        for (NodeId id : g.order())
            if (g.node(id).opType == "DequantizeLinear") QVERIFY(!attr(g.node(id), "axis"));
        // Fake-quantized numbers stay close to float32.
        QVERIFY(maxRelativeError(m, r.model) < 0.05);
        QVERIFY(r.trace.passes[0].changes[0].reason.find("activation range") != std::string::npos);
    }

    void perChannelWeightsCarryTheirAxis() {
        Model m = smallCnn();
        Int8Options o;
        o.calibration = generated(m, 2);
        o.perChannel = true;
        auto r = quantize(m, o, false);
        const Graph& g = *r.model.graph;
        std::map<std::string, int64_t> axes;
        for (NodeId id : g.order()) {
            const Node& n = g.node(id);
            if (const Attribute* a = attr(n, "axis"); n.opType == "DequantizeLinear" && a) axes[n.name] = a->i;
        }
        QCOMPARE(axes.size(), size_t(4));
        QCOMPARE(axes.at("wf/DequantizeLinear"), int64_t(0));  // Gemm with transB: [N, K]
        QCOMPARE(axes.at("w2/DequantizeLinear"), int64_t(0));
        QVERIFY(maxRelativeError(m, r.model) < 0.05);
    }

    void reducedRangeWeightsFillSevenBits() {
        // Each channel's largest weight lands on +-64 and none beyond, so that the GEMM without
        // VNNI can multiply them as bytes; the numbers stay close to float32.
        Model m = smallCnn();
        Int8Options o;
        o.calibration = generated(m, 2);
        o.perChannel = true;
        o.reduceRange = true;
        auto r = quantize(m, o, false);
        const Graph& g = *r.model.graph;
        int weights = 0;
        for (ValueId id : g.initializers) {
            const Tensor& w = *g.value(id).initializer;
            if (w.dtype() != DType::Int8 || !g.value(id).name.ends_with("_quantized")) continue;  // not a zero point
            ++weights;
            int reach = 0;
            for (int64_t i = 0; i < w.numElements(); ++i) reach = std::max(reach, std::abs(int(w.dataAs<int8_t>()[i])));
            QCOMPARE(reach, 64);
        }
        QCOMPARE(weights, 4);
        QVERIFY(r.trace.passes[0].changes[0].reason.find("7-bit") != std::string::npos);
        QVERIFY(maxRelativeError(m, r.model) < 0.05);
    }

    void exclusionsByNameTypeAndScopeStayFloat() {
        Model m = smallCnn();
        Int8Options o;
        o.calibration = generated(m, 2);
        o.exclude = {"conv2", "Gemm"};
        auto r = quantize(m, o, false);
        QCOMPARE(r.trace.passes[0].counters.applied, 2);
        QVERIFY(rejectedFor(r, "excluded by 'conv2'"));
        QVERIFY(rejectedFor(r, "excluded by 'Gemm'"));
        o.exclude = {"conv*"};
        auto globbed = quantize(m, o, false);
        QCOMPARE(globbed.trace.passes[0].counters.applied, 1);  // fc alone
        o.exclude.clear();
        o.only = std::set<std::string>{"conv3"};
        auto alone = quantize(m, o, false);
        QCOMPARE(alone.trace.passes[0].counters.applied, 1);
    }

    void foldingMakesIntegerOpsThatMatchTheQdqForm() {
        Model m = smallCnn();
        for (bool perChannel : {false, true})
            for (bool symmetric : {false, true}) {
                Int8Options o;
                o.calibration = generated(m, 4);
                o.perChannel = perChannel;
                o.symmetricActivations = symmetric;
                o.ranges = std::make_shared<ActivationRanges>();
                auto qdq = quantize(m, o, false);
                auto folded = quantize(m, o, true);
                const Graph& g = *folded.model.graph;
                // conv1 -> relu1 -> Q(r1): QLinearConv (the Relu is the output zero point, when
                // asymmetric); conv2's Relu output is read twice, conv3's by the Add, fc is a Gemm.
                QCOMPARE(count(g, "QLinearConv"), symmetric ? 0 : 1);
                QCOMPARE(count(g, "ConvInteger"), symmetric ? 3 : 2);
                QCOMPARE(count(g, "MatMulInteger"), 1);
                QCOMPARE(count(g, "Conv") + count(g, "Gemm") + count(g, "DequantizeLinear"), 0);
                QCOMPARE(count(g, "Relu"), symmetric ? 2 : 1);
                // Integer ops give what the QDQ form computes, up to a rounding step.
                const double diff = maxRelativeError(qdq.model, folded.model);
                QVERIFY2(diff < 0.02, (std::to_string(diff) + (perChannel ? " per-channel" : " per-tensor")).c_str());
                QVERIFY(maxRelativeError(m, folded.model) < 0.06);
            }
    }

    void maxPoolRunsOnQuantizedValues() {
        // ResNet's stem: conv -> relu -> MaxPool -> conv. The QuantizeLinear of the pool's
        // output goes in front of the pool, which then pools bytes; the stem conv ends in a
        // QuantizeLinear and folds into a QLinearConv. `shown` also makes the pool's float
        // output a graph output, which keeps the pool in float.
        auto stem = [](bool shown, int64_t opset) {
            GraphBuilder b;
            ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 3, 13, 11}));
            ValueId w1 = b.initializer(randomFloatTensor("w1", {8, 3, 3, 3}, 1, 0.4f));
            ValueId w2 = b.initializer(randomFloatTensor("w2", {4, 8, 1, 1}, 3, 0.3f));
            const std::vector<Attribute> pad1{intsAttr("pads", {1, 1, 1, 1})};
            ValueId r = b.op("Relu", {b.op("Conv", {x, w1}, "c1", pad1, "conv1")}, "r", {}, "relu");
            ValueId p = b.op("MaxPool", {r}, "p",
                             {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}), intsAttr("pads", {1, 1, 1, 1})},
                             "maxpool");
            b.output(b.op("Conv", {p, w2}, "y", {}, "conv2"));
            if (shown) b.output(p);
            return withInferredTypes(b, opset);
        };
        Int8Options o;
        const Model moved = stem(false, 17), kept = stem(true, 17);
        o.calibration = generated(moved, 4);
        o.ranges = std::make_shared<ActivationRanges>();  // shared: the same scales for all
        auto pooled = quantize(moved, o, false);
        auto floatPool = quantize(kept, o, false);
        auto poolInput = [](const Graph& g) {
            for (NodeId id : g.order())
                if (g.node(id).opType == "MaxPool") return g.value(g.node(id).inputs[0]).type.elemType;
            return DType::Undefined;
        };
        QCOMPARE(poolInput(*pooled.model.graph), DType::UInt8);
        QCOMPARE(poolInput(*floatPool.model.graph), DType::Float32);
        QCOMPARE(poolInput(*quantize(stem(false, 11), o, false).model.graph), DType::Float32);  // no 8-bit MaxPool
        // Rounding keeps the order of values, so the max of bytes is the byte of the max.
        // floatPool also outputs the pool: compare y, the first output of both.
        auto a = Executor::create(pooled.model, cpuExecutorOptions());
        auto b = Executor::create(floatPool.model, cpuExecutorOptions());
        QVERIFY(a && b);
        const auto feeds = randomFeeds(**a, 7);
        auto ya = (*a)->run(feeds);
        auto yb = (*b)->run(feeds);
        QVERIFY(ya && yb);
        QCOMPARE(ya->size(), size_t(1));
        QCOMPARE(yb->size(), size_t(2));
        QCOMPARE(relativeError((*ya)[0], (*yb)[0]), 0.0);
        auto folded = quantize(moved, o, true);
        QCOMPARE(count(*folded.model.graph, "QLinearConv"), 1);
        QCOMPARE(count(*folded.model.graph, "ConvInteger"), 1);
        QVERIFY(maxRelativeError(pooled.model, folded.model) < 0.02);  // as any folding: a rounding step
    }

    void byteMaxPoolMatchesFloat_data() {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("pad");
        QTest::addColumn<int>("ceil");
        QTest::newRow("3x3 s2 p1") << 3 << 2 << 1 << 0;
        QTest::newRow("2x2 s2") << 2 << 2 << 0 << 0;
        QTest::newRow("3x3 s1 p1") << 3 << 1 << 1 << 0;
        QTest::newRow("3x3 s3 ceil") << 3 << 3 << 0 << 1;
        QTest::newRow("5x5 s2 p2") << 5 << 2 << 2 << 0;
    }

    void byteMaxPoolMatchesFloat() {
        // uint8 and int8 MaxPool against the float pool of the same values: padding is
        // never a value, whatever the type's lowest is.
        QFETCH(int, kernel);
        QFETCH(int, stride);
        QFETCH(int, pad);
        QFETCH(int, ceil);
        const std::vector<Attribute> attrs{intsAttr("kernel_shape", {kernel, kernel}), intsAttr("strides", {stride, stride}),
                                           intsAttr("pads", {pad, pad, pad, pad}), intAttr("ceil_mode", ceil)};
        auto pooling = [&](DType type) {
            GraphBuilder b;
            b.output(b.op("MaxPool", {b.input("x", type, Shape::ofSizes({2, 3, 19, 13}))}, "y", attrs));
            auto e = Executor::create(withInferredTypes(b), cpuExecutorOptions());
            if (!e) qFatal("%s", e.status().message().c_str());
            return std::move(*e);
        };
        std::mt19937 rng(9);
        for (DType type : {DType::UInt8, DType::Int8}) {
            RtTensor bytes = allocateTensor(type, {2, 3, 19, 13}), floats = allocateTensor(DType::Float32, {2, 3, 19, 13});
            for (int64_t i = 0; i < bytes.numel(); ++i) {
                const int v = int(rng() % 256);
                static_cast<uint8_t*>(bytes.data)[i] = uint8_t(v);
                floats.as<float>()[i] = type == DType::UInt8 ? float(v) : float(int8_t(uint8_t(v)));
            }
            auto got = pooling(type)->run({bytes});
            auto want = pooling(DType::Float32)->run({floats});
            QVERIFY(got && want);
            QCOMPARE((*got)[0].dims, (*want)[0].dims);
            for (int64_t i = 0; i < (*want)[0].numel(); ++i)
                QCOMPARE(elementAsDouble((*got)[0], i), double((*want)[0].as<float>()[i]));
        }
    }

    void dynamicQuantizedMatMulFusesToTheBit_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("n");
        QTest::addColumn<bool>("uint8B");     // quantize_dynamic's older default: uint8 with zero points
        QTest::addColumn<bool>("perColumn");  // b_scale (and B's zero point) per column
        QTest::addColumn<bool>("bias");
        QTest::addColumn<bool>("constantScale");  // one constant product, as qdq-folding writes it
        // 38 rows: tiles of 5 and pieces of 40 rows with remainders; 83 columns: a partial block.
        QTest::newRow("int8 B, per tensor, bias (the VNNI route)") << 38 << 300 << 83 << false << false << true << false;
        QTest::newRow("int8 B, per column, no bias") << 38 << 300 << 83 << false << true << false << false;
        QTest::newRow("one row (a decoder's token)") << 1 << 768 << 130 << false << false << true << false;
        QTest::newRow("K not a multiple of 4 (the GEMM route)") << 38 << 301 << 83 << false << false << true << false;
        QTest::newRow("uint8 B, zero point per column (the GEMM route)") << 38 << 300 << 83 << true << true << true << false;
        QTest::newRow("constant scale product") << 38 << 300 << 83 << false << true << true << true;
    }
    void dynamicQuantizedMatMulFusesToTheBit() {
        // quantize_dynamic's chain (DynamicQuantizeLinear, MatMulInteger, Cast, Mul of the
        // scales' product, Add of the bias) becomes one MatMulIntegerToFloat whose outputs equal
        // the unfused nodes' bit for bit: the same int32 sums, one float multiply, one add.
        // Where the DynamicQuantizeLinear then feeds it alone (its scale read by the product,
        // not folded into a constant), both become one DynamicQuantizeMatMul, still to the bit.
        QFETCH(int, rows);
        QFETCH(int, k);
        QFETCH(int, n);
        QFETCH(bool, uint8B);
        QFETCH(bool, perColumn);
        QFETCH(bool, bias);
        QFETCH(bool, constantScale);
        std::mt19937 rng(uint32_t(rows * 131 + k + n));
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, rows, k}));
        const auto quantized = b.node("DynamicQuantizeLinear", {x}, {"xq", "xs", "xz"}, {}, "dql");
        const ValueId xq = quantized[0], xs = quantized[1], xz = quantized[2];
        const DType bType = uint8B ? DType::UInt8 : DType::Int8;
        std::string bytes(size_t(k * n), '\0'), zeros(size_t(perColumn ? n : 1), '\0');
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i % 11 == 0 ? (uint8B ? 255 : -127) : int(rng() % 256));
        for (size_t j = 0; uint8B && j < zeros.size(); ++j) zeros[j] = char(100 + rng() % 50);
        const std::vector<int64_t> columnDims = perColumn ? std::vector<int64_t>{n} : std::vector<int64_t>{};
        ValueId w = b.initializer(Tensor("w", bType, {k, n}, makeBuffer(bytes), 0, bytes.size()));
        ValueId wz = b.initializer(Tensor("wz", bType, columnDims, makeBuffer(zeros), 0, zeros.size()));
        std::vector<float> scales(perColumn ? size_t(n) : 1), biases(static_cast<size_t>(n));
        for (float& s : scales) s = 0.001f + float(rng() % 1000) * 1e-5f;
        for (float& v : biases) v = float(int(rng() % 2001) - 1000) * 1e-3f;
        ValueId scale;
        if (constantScale) {  // the activation's scale folded in already: a constant
            scale = b.initializer(floatTensor("scale", columnDims, scales));
        } else {
            ValueId ws = b.initializer(floatTensor("ws", columnDims, scales));
            scale = b.op("Mul", {xs, ws}, "scales", {}, "scales_mul");
        }
        ValueId acc = b.op("MatMulInteger", {xq, w, xz, wz}, "acc", {}, "mm");
        ValueId wide = b.op("Cast", {acc}, "wide", {intAttr("to", int64_t(DType::Float32))}, "cast");
        ValueId y = b.op("Mul", {wide, scale}, bias ? "scaled" : "y", {}, "scale");
        if (bias) y = b.op("Add", {y, b.initializer(floatTensor("bias", {n}, biases))}, "y", {}, "bias");
        b.output(y);
        Model m = withInferredTypes(b);
        auto plain = compileWith(m, {});
        auto fused = compileWith(m, {"integer-matmul-fusion"});
        const Graph& g = *fused.model.graph;
        QCOMPARE(countOps(g, "MatMulIntegerToFloat"), constantScale ? 1 : 0);
        QCOMPARE(countOps(g, "DynamicQuantizeMatMul"), constantScale ? 0 : 1);
        QCOMPARE(countOps(g, "DynamicQuantizeLinear"), constantScale ? 1 : 0);
        QCOMPARE(countOps(g, "MatMulInteger") + countOps(g, "Cast") + countOps(g, "Mul") + countOps(g, "Add"), 0);
        RtTensor in = allocateTensor(DType::Float32, {1, rows, k});
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (int64_t i = 0; i < in.numel(); ++i) in.as<float>()[i] = i % 97 == 0 ? 30.0f : normal(rng);
        auto run = [&](const Model& model) {
            auto exec = Executor::create(model, cpuExecutorOptions());
            if (!exec) qFatal("%s", exec.status().message().c_str());
            auto out = (*exec)->run({in});
            if (!out) qFatal("%s", out.status().message().c_str());
            return std::move((*out)[0]);
        };
        const RtTensor want = run(plain.model), got = run(fused.model);
        QCOMPARE(got.dims, want.dims);
        for (int64_t i = 0; i < want.numel(); ++i)
            if (std::memcmp(got.as<float>() + i, want.as<float>() + i, 4) != 0)
                QFAIL(("element " + std::to_string(i) + ": " + std::to_string(got.as<float>()[i]) + " against " +
                       std::to_string(want.as<float>()[i]))
                          .c_str());
    }

    void oneDnnInt8ProductsAreExact() {
        // Extreme values (255 x -128 at every position) where int16 pair sums would saturate.
        GraphBuilder b;
        ValueId a = b.input("a", DType::UInt8, Shape::ofSizes({3, 37, 300}));
        Tensor wt = randomFloatTensor("unused", {1}, 1);
        std::string bytes(300 * 17, '\0');
        std::mt19937 rng(4);
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i % 5 == 0 ? -128 : int(rng() % 256) - 128);
        ValueId w = b.initializer(Tensor("w", DType::Int8, {300, 17}, makeBuffer(bytes), 0, bytes.size()));
        std::string zero(1, char(7));
        ValueId az = b.initializer(Tensor("az", DType::UInt8, {}, makeBuffer(zero), 0, 1));
        ValueId y = b.op("MatMulInteger", {a, w, az}, "y", {}, "mm");
        b.output(y);
        Model m = withInferredTypes(b);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec);
        RtTensor in = allocateTensor(DType::UInt8, {3, 37, 300});
        for (int64_t i = 0; i < in.numel(); ++i) in.as<uint8_t>()[i] = i % 3 ? 255 : uint8_t(rng());
        auto out = (*exec)->run({in});
        QVERIFY(out);
        const auto* wp = reinterpret_cast<const int8_t*>(bytes.data());
        for (int64_t r = 0; r < 3 * 37; ++r)
            for (int64_t j = 0; j < 17; ++j) {
                int64_t exact = 0;
                for (int64_t k = 0; k < 300; ++k) exact += (int64_t(in.as<uint8_t>()[r * 300 + k]) - 7) * wp[k * 17 + j];
                QCOMPARE(int64_t((*out)[0].as<int32_t>()[r * 17 + j]), exact);
            }
    }

    void matMulIntegerTakesPerColumnZeroPoints_data() {
        QTest::addColumn<bool>("unsignedB");
        QTest::newRow("uint8 B (quantize_dynamic per_channel)") << true;
        QTest::newRow("int8 B") << false;
    }
    void matMulIntegerTakesPerColumnZeroPoints() {
        // B with one zero point per column goes through the int8 GEMM, its zero points taken
        // off afterwards with A's row sums: int64 sums from the definition, extremes included.
        QFETCH(bool, unsignedB);
        const int64_t rows = 2 * 19, k = 300, n = 23;
        GraphBuilder b;
        ValueId a = b.input("a", DType::UInt8, Shape::ofSizes({2, 19, k}));
        const DType bType = unsignedB ? DType::UInt8 : DType::Int8;
        std::mt19937 rng(8);
        std::string bytes(size_t(k * n), '\0'), zeros(size_t(n), '\0');
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i % 7 == 0 ? (unsignedB ? 255 : -128) : int(rng() % 256));
        for (int64_t j = 0; j < n; ++j) zeros[size_t(j)] = char(unsignedB ? 90 + 7 * j : -40 + 5 * j);
        ValueId w = b.initializer(Tensor("w", bType, {k, n}, makeBuffer(bytes), 0, bytes.size()));
        ValueId az = b.initializer(Tensor("az", DType::UInt8, {}, makeBuffer(std::string(1, char(131))), 0, 1));
        ValueId wz = b.initializer(Tensor("wz", bType, {n}, makeBuffer(zeros), 0, zeros.size()));
        b.output(b.op("MatMulInteger", {a, w, az, wz}, "y", {}, "mm"));
        Model m = withInferredTypes(b);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec);
        RtTensor in = allocateTensor(DType::UInt8, {2, 19, k});
        for (int64_t i = 0; i < in.numel(); ++i) in.as<uint8_t>()[i] = i % 3 ? 255 : uint8_t(rng());
        auto out = (*exec)->run({in});
        QVERIFY2(out, out.status().message().c_str());
        auto value = [&](const std::string& s, int64_t i) {
            return unsignedB ? int64_t(uint8_t(s[size_t(i)])) : int64_t(int8_t(s[size_t(i)]));
        };
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < n; ++j) {
                int64_t exact = 0;
                for (int64_t p = 0; p < k; ++p)
                    exact += (int64_t(in.as<uint8_t>()[r * k + p]) - 131) * (value(bytes, p * n + j) - value(zeros, j));
                const int64_t got = (*out)[0].as<int32_t>()[r * n + j];
                if (got != exact) QCOMPARE(got, exact);
            }
    }

    // The integer Winograd route of int8 3x3 convolutions (CPUs without VNNI; called here
    // whatever this CPU has) against int64 sums straight from the definition: uint8 and int8
    // images and weights with and without zero points, the extremes that reach the int32
    // bound, partial tiles, every padding from 0 to 2, a batch; it must decline weights within
    // 7 bits and channel counts past the bound, and keep constant weights between calls only.
    void int8WinogradIsExact_data() {
        QTest::addColumn<bool>("xUint8");
        QTest::addColumn<bool>("wUint8");
        QTest::addColumn<int>("xZero");
        QTest::addColumn<int>("wZero");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("w");
        QTest::addColumn<int>("c");
        QTest::addColumn<int>("k");
        QTest::addColumn<QList<int>>("pads");
        QTest::addColumn<bool>("extremes");  // x and w at the ends of their range
        QTest::newRow("uint8 x, int8 w, pads 1") << true << false << 131 << 0 << 1 << 16 << 15 << 32 << 16 << QList<int>{1, 1, 1, 1} << false;
        QTest::newRow("int8 x and w, zero points") << false << false << -5 << 3 << 2 << 13 << 18 << 16 << 32 << QList<int>{0, 2, 1, 0} << false;
        QTest::newRow("uint8 both, no pads") << true << true << 0 << 128 << 1 << 19 << 20 << 48 << 16 << QList<int>{0, 0, 0, 0} << false;
        QTest::newRow("extremes at 896 channels") << true << true << 255 << 0 << 1 << 6 << 7 << 896 << 16 << QList<int>{2, 1, 0, 2} << true;
        QTest::newRow("extremes int8, 64 channels") << false << false << 127 << -128 << 1 << 9 << 9 << 64 << 16 << QList<int>{1, 1, 1, 1} << true;
        // 441 tiles in 4 chunks of 111 (2 per thread), the last one short.
        QTest::newRow("chunks of tiles per thread") << true << false << 100 << 0 << 1 << 41 << 41 << 64 << 64 << QList<int>{1, 1, 1, 1} << false;
    }
    void int8WinogradIsExact() {
        QFETCH(bool, xUint8);
        QFETCH(bool, wUint8);
        QFETCH(int, xZero);
        QFETCH(int, wZero);
        QFETCH(int, n);
        QFETCH(int, h);
        QFETCH(int, w);
        QFETCH(int, c);
        QFETCH(int, k);
        QFETCH(QList<int>, pads);
        QFETCH(bool, extremes);
        if (!__builtin_cpu_supports("avx2")) QSKIP("the route needs AVX2");
        std::mt19937 rng(uint32_t(c * 131 + h));
        const DType xType = xUint8 ? DType::UInt8 : DType::Int8, wType = wUint8 ? DType::UInt8 : DType::Int8;
        RtTensor x = allocateTensor(xType, {n, c, h, w}), wt = allocateTensor(wType, {k, c, 3, 3});
        // Extremes: x at the far end from its zero point, w at both ends (so that the
        // transformed weights reach 9 x 255 and the sums their bound).
        auto fill = [&](RtTensor& t, bool isUint8, int zero, bool far, bool alternate) {
            std::uniform_int_distribution<int> u(isUint8 ? 0 : -128, isUint8 ? 255 : 127);
            for (int64_t i = 0; i < t.numel(); ++i) {
                int v = u(rng);
                if (far) v = zero > (isUint8 ? 127 : 0) ? (isUint8 ? 0 : -128) : (isUint8 ? 255 : 127);
                if (alternate) v = ((i / 9) % 2) ? (isUint8 ? 255 : 127) : (isUint8 ? 0 : -128);
                if (isUint8) t.as<uint8_t>()[i] = uint8_t(v);
                else t.as<int8_t>()[i] = int8_t(v);
            }
        };
        fill(x, xUint8, xZero, extremes, false);
        fill(wt, wUint8, wZero, false, extremes);
        RtTensor xz = allocateTensor(xType, {}), wz = allocateTensor(wType, {});
        if (xUint8) xz.as<uint8_t>()[0] = uint8_t(xZero);
        else xz.as<int8_t>()[0] = int8_t(xZero);
        if (wUint8) wz.as<uint8_t>()[0] = uint8_t(wZero);
        else wz.as<int8_t>()[0] = int8_t(wZero);
        auto value = [](const RtTensor& t, int64_t i) {
            return t.dtype == DType::UInt8 ? int64_t(t.as<uint8_t>()[i]) : int64_t(t.as<int8_t>()[i]);
        };
        cpu::ConvGeometry g;
        g.in = {h, w};
        g.kernel = {3, 3};
        g.strides = {1, 1};
        g.dilations = {1, 1};
        g.padBegin = {pads[0], pads[1]};
        g.out = {h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2};
        g.channels = c;
        const int64_t oh = g.out[0], ow = g.out[1];
        std::vector<int32_t> want(size_t(n * k * oh * ow));
        for (int64_t img = 0; img < n; ++img)
            for (int64_t o = 0; o < k; ++o)
                for (int64_t oy = 0; oy < oh; ++oy)
                    for (int64_t ox = 0; ox < ow; ++ox) {
                        int64_t acc = 0;
                        for (int64_t ic = 0; ic < c; ++ic)
                            for (int64_t ky = 0; ky < 3; ++ky)
                                for (int64_t kx = 0; kx < 3; ++kx) {
                                    const int64_t iy = oy + ky - pads[0], ix = ox + kx - pads[1];
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                    acc += (value(x, ((img * c + ic) * h + iy) * w + ix) - xZero) *
                                           (value(wt, ((o * c + ic) * 3 + ky) * 3 + kx) - wZero);
                                }
                        QVERIFY(acc >= INT32_MIN && acc <= INT32_MAX);
                        want[size_t(((img * k + o) * oh + oy) * ow + ox)] = int32_t(acc);
                    }
        ThreadPool pool(2);
        cpu::Int8Winograd route;
        for (int call = 0; call < 2; ++call) {  // the second with the kept weights
            std::vector<int32_t> got(want.size(), 12345);
            QVERIFY(route.runAnywhere(pool, g, 1, x, &xz, wt, &wz, true, got.data()));
            for (size_t i = 0; i < want.size(); ++i)
                if (got[i] != want[i]) QFAIL(qPrintable(QString("call %1, element %2: %3, expected %4").arg(call).arg(i).arg(got[i]).arg(want[i])));
        }
        // New values at the same address, not constant: transformed again.
        for (int64_t i = 0; i < wt.numel(); ++i)
            if (wUint8) wt.as<uint8_t>()[i] = uint8_t(wt.as<uint8_t>()[i] ^ 0x5a);
            else wt.as<int8_t>()[i] = int8_t(wt.as<int8_t>()[i] ^ 0x5a);
        std::vector<int32_t> got(want.size());
        QVERIFY(route.runAnywhere(pool, g, 1, x, &xz, wt, &wz, false, got.data()));
        int64_t acc = 0;  // output (0, 0, oy0, ox0) of the first image and channel, by the definition
        for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t ky = 0; ky < 3; ++ky)
                for (int64_t kx = 0; kx < 3; ++kx) {
                    const int64_t iy = ky - pads[0], ix = kx - pads[1];
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                    acc += (value(x, (ic * h + iy) * w + ix) - xZero) * (value(wt, (ic * 3 + ky) * 3 + kx) - wZero);
                }
        QCOMPARE(int64_t(got[0]), acc);
    }

    void int8WinogradDeclines() {
        if (!__builtin_cpu_supports("avx2")) QSKIP("the route needs AVX2");
        ThreadPool pool(2);
        cpu::ConvGeometry g;
        g.in = {16, 16};
        g.kernel = {3, 3};
        g.strides = {1, 1};
        g.dilations = {1, 1};
        g.padBegin = {1, 1};
        g.out = {16, 16};
        auto attempt = [&](int64_t c, int lo, int hi) {
            RtTensor x = allocateTensor(DType::UInt8, {1, c, 16, 16}), wt = allocateTensor(DType::Int8, {16, c, 3, 3});
            std::fill_n(x.as<uint8_t>(), x.numel(), uint8_t(255));
            for (int64_t i = 0; i < wt.numel(); ++i) wt.as<int8_t>()[i] = int8_t(i % 2 ? hi : lo);
            std::vector<int32_t> y(size_t(16 * 16 * 16), 7);
            cpu::Int8Winograd route;
            const bool ran = route.runAnywhere(pool, g, 1, x, nullptr, wt, nullptr, true, y.data());
            if (!ran && std::any_of(y.begin(), y.end(), [](int32_t v) { return v != 7; })) return -1;  // touched
            return ran ? 1 : 0;
        };
        QCOMPARE(attempt(64, -64, 64), 0);      // 7-bit weights ([-64, 64]): the byte kernel's
        QCOMPARE(attempt(64, -65, 63), 1);      // one past
        QCOMPARE(attempt(2048, -128, -128), 0);  // transformed weights up to 9 x 128: 2048 x 1020 x 1152 is past int32
    }

    void ownInt8GemmRoutesAreExact_data() {
        QTest::addColumn<int>("route");
        QTest::newRow("A split into 7-bit halves") << 0;
        QTest::newRow("both widened to int16") << 1;
        QTest::newRow("A within 7 bits, as bytes") << 2;
        QTest::newRow("AVX-VNNI, as bytes") << 3;
    }

    void ownInt8GemmRoutesAreExact() {
        // The routes taken without AVX-512 VNNI: exact for any values (the narrow route: A
        // within 64 of its zero point; AVX-VNNI's with A's zero point 0, where only A's row sums
        // correct, and -128, where B's column sums do too), zero points and transposes, with the operands mostly at the extremes
        // (pairs of 255 * 255 products would saturate an int16 sum; of 255 * 64 would not), K
        // long (3000: several of the kernels' blocks) and odd, and rows and columns off their
        // 6 x 16 tiles (40 x 5: a panel's rows split between threads; 100 x 40: three panels,
        // each run's rows in parts of several tiles; 9 x 70 x 299: a last quad of K
        // with a row missing, in whole panels). The widened kernel takes most of these few-
        // column products with all of B packed at once; 20 x 40 x 12001 (B past 1 MiB packed)
        // and 5 x 1500 go through its work items, the first with its rows split; one row of A
        // (1 x 1000 x 301: blocks of 64 columns, then 40 in panels, an odd K; 1 x 128 x 2:
        // blocks only) is a row of dot products on B's bytes. Each product runs with both operands stored
        // as int8, then as uint8 (the same values, read in place less 128), then with A's own
        // bytes taken as uint8 (other values). The AVX2 routes also run each from a cache of
        // A's packed rows: filling it, reading it, and with another zero point for A or the same
        // bytes as uint8, which must not read the same rows.
        QFETCH(int, route);
        enum { Splitting, Widening, Narrow, AvxVnni };
        std::mt19937 rng(9);
        cpu::PackedRowsCache kept;
        std::set<std::tuple<const void*, int, int, int, bool>> packings;  // A's bytes, shape, zero point, storage
        for (const auto& [m, n, k, transA, transB] :
             {std::tuple{5, 1500, 3000, false, false}, std::tuple{7, 9, 40, true, true}, std::tuple{3, 33, 700, false, true},
              std::tuple{40, 5, 301, false, false}, std::tuple{13, 50, 1, true, false},
              std::tuple{100, 40, 600, false, false}, std::tuple{9, 70, 299, false, false},
              std::tuple{20, 40, 12001, false, true}, std::tuple{1, 1000, 301, false, false},
              std::tuple{1, 128, 2, true, false}, std::tuple{1, 20, 7, false, true}}) {
            std::vector<int8_t> a(size_t(m * k)), b(size_t(k * n));
            const int aCentre = route == Narrow ? 0 : -1, aReach = route == Narrow ? 64 : 128;
            for (auto& v : a)
                v = int8_t(std::clamp(aCentre + (rng() % 4 ? (rng() % 2 ? aReach : -aReach) : int(rng() % (2 * aReach + 1)) - aReach), -128, 127));
            for (auto& v : b) v = int8_t(rng() % 4 ? (rng() % 2 ? -128 : 127) : int(rng() % 256) - 128);
            auto flipped = [](std::vector<int8_t> v) {
                for (auto& x : v) x = int8_t(x ^ 0x80);
                return v;
            };
            const std::vector<int8_t> aAsUint8 = flipped(a), bAsUint8 = flipped(b);
            const int8_t bZero = 127;
            const int64_t lda = transA ? m : k, ldb = transB ? k : n;
            // The narrow route's A is within 64 of 0 and of 1 (an element at -64 is not):
            // with 1, A must not fit, and nothing may be written to C.
            const std::vector<int8_t> aZeros = route == Splitting ? std::vector<int8_t>{-128}
                                               : route == Widening ? std::vector<int8_t>{-128, -128, 5}
                                               : route == AvxVnni  ? std::vector<int8_t>{0, 0, -128}
                                                                   : std::vector<int8_t>{0, 0, 1};
            struct Storage {
                const std::vector<int8_t>& aBytes;
                const std::vector<int8_t>& bBytes;
                cpu::Uint8Operands stored;
                const std::vector<int8_t>& aValues;  // what the GEMM must multiply
            };
            for (int8_t aZero : aZeros)
                for (const Storage& s : {Storage{a, b, {}, a}, Storage{aAsUint8, bAsUint8, {true, true}, a},
                                         Storage{a, b, {true, false}, aAsUint8}}) {
                    std::vector<int32_t> c(size_t(m * n), 12345);
                    const int8_t *pa = s.aBytes.data(), *pb = s.bBytes.data();
                    if (route != Splitting) packings.insert({pa, m, k, aZero, s.stored.a});
                    if (route == Widening) {
                        if (!cpu::gemmS8S8ByWidening(transA, transB, m, n, k, pa, lda, aZero, pb, ldb, bZero, c.data(), n,
                                                     &kept, s.stored))
                            QSKIP("the widened kernel needs x86 with AVX2");
                    } else if (route == AvxVnni) {
                        if (!cpu::gemmS8S8WithAvxVnni(transA, transB, m, n, k, pa, lda, aZero, pb, ldb, bZero, c.data(),
                                                      n, &kept, s.stored))
                            QSKIP("the AVX-VNNI kernel needs x86 with AVX-VNNI");
                    } else if (route == Narrow) {
                        const bool fits =
                            std::ranges::all_of(s.aValues, [&](int8_t v) { return std::abs(v - aZero) <= 64; });
                        const bool ran = cpu::gemmS8S8WithNarrowA(transA, transB, m, n, k, pa, lda, aZero, pb, ldb, bZero,
                                                                  c.data(), n, &kept, s.stored);
                        if (!ran && fits) QSKIP("the narrow kernel needs x86 with AVX2");
                        QCOMPARE(ran, fits);
                        if (!ran) {
                            QVERIFY(std::ranges::all_of(c, [](int32_t v) { return v == 12345; }));
                            continue;
                        }
                    } else if (s.stored.a || s.stored.b) {
                        // The splitting route and oneDNN's GEMM take int8 alone: gemmS8S8 as
                        // dispatched here, which gives them a flipped copy.
                        cpu::gemmS8S8(transA, transB, m, n, k, pa, lda, aZero, pb, ldb, bZero, c.data(), n, nullptr,
                                      s.stored);
                    } else
                        cpu::gemmS8S8BySplitting(transA, transB, m, n, k, pa, lda, aZero, pb, ldb, bZero, c.data(), n);
                    for (int i = 0; i < m; ++i)
                        for (int j = 0; j < n; ++j) {
                            int64_t exact = 0;
                            for (int p = 0; p < k; ++p)
                                exact += (int64_t(transA ? s.aValues[size_t(p * m + i)] : s.aValues[size_t(i * k + p)]) - aZero) *
                                         (int64_t(transB ? b[size_t(j * k + p)] : b[size_t(p * n + j)]) - bZero);
                            QCOMPARE(int64_t(c[size_t(i * n + j)]), exact);
                        }
                }
        }
        // One entry per A's bytes, shape, zero point and storage (on the narrow route, an
        // empty one where A does not fit).
        if (route != Splitting) QCOMPARE(kept.entries(), packings.size());
    }

    void int8GemmTakesTheUsualQuantizations() {
        auto tensor = [](DType t, std::vector<int64_t> dims, int fill) {
            RtTensor r = allocateTensor(t, dims);
            std::memset(r.data, fill, size_t(r.bytes()));
            return r;
        };
        auto ptr = [](const RtTensor& t) { return &t; };  // a temporary lives to the end of the check
        const RtTensor x = tensor(DType::UInt8, {1, 4, 5, 5}, 3), xz = tensor(DType::UInt8, {}, 128);
        const RtTensor w8 = tensor(DType::Int8, {6, 4, 3, 3}, 1), wu8 = tensor(DType::UInt8, {6, 4, 3, 3}, 1);
        QVERIFY(cpu::fitsInt8Gemm(x, &xz, w8, nullptr));
        QVERIFY(cpu::fitsInt8Gemm(x, &xz, wu8, ptr(tensor(DType::UInt8, {}, 131))));
        QVERIFY(cpu::fitsInt8Gemm(x, &xz, w8, ptr(tensor(DType::Int8, {6}, 0))));
        // Per output channel, not 0 (quantize_dynamic's per_channel): taken off after the GEMM.
        QVERIFY(cpu::fitsInt8Gemm(x, &xz, w8, ptr(tensor(DType::Int8, {6}, 2))));
        QVERIFY(!cpu::fitsInt8Gemm(x, &xz, w8, ptr(tensor(DType::Int8, {4}, 2))));     // fits no channel count
        QVERIFY(!cpu::fitsInt8Gemm(x, &xz, w8, ptr(tensor(DType::Int8, {6}, 2)), 1));  // W's axis 1 has 4
        QVERIFY(!cpu::fitsInt8Gemm(x, ptr(tensor(DType::UInt8, {4}, 2)), w8, nullptr));  // X's per channel
        QVERIFY(!cpu::fitsInt8Gemm(x, &xz, wu8, ptr(tensor(DType::Int8, {}, 0))));     // zero point of another type
        QVERIFY(!cpu::fitsInt8Gemm(tensor(DType::Int32, {1, 4, 5, 5}, 0), nullptr, w8, nullptr));
    }

    // A model exported in the QDQ form: O2 makes its Conv integer from the int8 weight
    // (fold-constants leaves that weight's DequantizeLinear for qdq-folding), leaves the
    // depthwise one in float between its DequantizeLinear and QuantizeLinear, and folds that
    // one's weight after all; O1 folds every weight to float. Both compute what O0 does.
    void importedQdqModelsRunIntegerOpsAtO2() {
        const Model m = importedQdqCnn();
        const CompileResult o1 = compileAt(m, "O1"), o2 = compileAt(m, "O2");
        QCOMPARE(count(*o1.model.graph, "QLinearConv"), 0);
        QCOMPARE(weightDequantizations(*o1.model.graph), 0);
        QCOMPARE(count(*o2.model.graph, "QLinearConv"), 2);  // the depthwise one too
        QCOMPARE(weightDequantizations(*o2.model.graph), 0);
        QCOMPARE(count(*o2.model.graph, "Conv") + count(*o2.model.graph, "FusedConv"), 0);
        QVERIFY2(maxRelativeError(m, o1.model) == 0.0, "O1 is the same arithmetic");
        // On the CPU both run channels-last, as ONNX Runtime's com.microsoft.QLinearConv: the
        // image read as it is, one Transpose back before the output's DequantizeLinear, and
        // the same bytes as in NCHW.
        for (NodeId id : o2.model.graph->order()) {
            const Node& node = o2.model.graph->node(id);
            if (node.opType != "QLinearConv") continue;
            QCOMPARE(node.domain, std::string("com.microsoft"));
            QVERIFY(attr(node, "channels_last") && attr(node, "channels_last")->i == 1);
        }
        QCOMPARE(count(*o2.model.graph, "Transpose"), 1);
        const CompileResult nchw = compileAt(m, "O2", "channels-last");
        QCOMPARE(count(*nchw.model.graph, "Transpose"), 0);
        QCOMPARE(maxRelativeError(nchw.model, o2.model), 0.0);
        // CUDA has no integer convolutions: there O2 leaves the QDQ form in float, weights folded.
        PipelineSpec cuda;
        cuda.passes = *pipelinePasses("O2");
        cuda.target.backend = Backend::Cuda;
        auto cudaPasses = buildPipeline(cuda);
        QVERIFY(cudaPasses);
        QCOMPARE(cudaPasses->size(), cuda.passes.size());  // the same list; qdq-folding declines there
        CompileOptions options;
        auto onCuda = compileModel(m, std::move(*cudaPasses), options);
        QVERIFY(onCuda);
        QCOMPARE(count(*onCuda->model.graph, "QLinearConv"), 0);
        QCOMPARE(weightDequantizations(*onCuda->model.graph), 0);
        // Integer accumulation and requantization agree with the float form up to a rounding step.
        const double diff = maxRelativeError(m, o2.model);
        QVERIFY2(diff < 0.03, std::to_string(diff).c_str());
    }

    // Depthwise ConvInteger (the integer depthwise loop) and QLinearConv (float loops on
    // exact integers, then requantized) against the definition: uint8 and int8 images and
    // weights, zero points, strides, dilation, asymmetric pads, one and two threads; and
    // per-channel weight zero points that differ (taken off after the integer loop).
    void int8DepthwiseMatchesTheDefinition() {
        struct Case {
            DType xType, wType;
            int xZero, wZero;  // wZero -1000: per-channel zero points 3, -2, ...
            int stride, dilation;
            std::vector<int64_t> pads;
            int threads;
        };
        const std::vector<Case> cases{
            {DType::UInt8, DType::Int8, 131, 0, 1, 1, {1, 1, 1, 1}, 1},
            {DType::UInt8, DType::Int8, 0, 0, 2, 1, {1, 1, 1, 1}, 2},
            {DType::Int8, DType::Int8, -5, 3, 1, 2, {2, 0, 1, 2}, 2},
            {DType::UInt8, DType::UInt8, 200, 128, 2, 1, {0, 1, 1, 0}, 1},
            {DType::Int8, DType::UInt8, 7, -1000, 1, 1, {1, 1, 1, 1}, 2},
        };
        std::mt19937 rng(17);
        const int64_t c = 5, h = 11, w = 13;
        for (const Case& k : cases) {
            GraphBuilder b;
            ValueId x = b.input("x", k.xType, Shape::ofSizes({2, c, h, w}));
            std::string wb(size_t(c * 9), '\0');
            for (char& v : wb) v = char(rng());
            ValueId wt = b.initializer(Tensor("w", k.wType, {c, 1, 3, 3}, makeBuffer(wb), 0, wb.size()));
            ValueId xz = b.initializer(Tensor("xz", k.xType, {}, makeBuffer(std::string(1, char(k.xZero))), 0, 1));
            auto channelZero = [&](int64_t ch) { return k.wZero == -1000 ? int(3 - 5 * ch) + (k.wType == DType::UInt8 ? 100 : 0) : k.wZero; };
            std::string zeros;
            for (int64_t ch = 0; ch < c; ++ch) zeros += char(channelZero(ch));
            ValueId wz = k.wZero == -1000 ? b.initializer(Tensor("wz", k.wType, {c}, makeBuffer(zeros), 0, size_t(c)))
                                          : b.initializer(Tensor("wz", k.wType, {}, makeBuffer(zeros.substr(0, 1)), 0, 1));
            b.output(b.op("ConvInteger", {x, wt, xz, wz}, "y",
                          {intsAttr("pads", k.pads), intAttr("group", int(c)), intsAttr("strides", {k.stride, k.stride}),
                           intsAttr("dilations", {k.dilation, k.dilation})}));
            Model m = withInferredTypes(b);
            auto exec = Executor::create(m, cpuExecutorOptions(k.threads));
            QVERIFY(exec);
            RtTensor in = allocateTensor(k.xType, {2, c, h, w});
            for (int64_t i = 0; i < in.numel(); ++i) in.as<uint8_t>()[i] = uint8_t(rng());
            auto out = (*exec)->run({in});
            QVERIFY2(out, out.status().message().c_str());
            const RtTensor& y = (*out)[0];
            const int64_t oh = y.dims[2], ow = y.dims[3];
            QCOMPARE(oh, (h + k.pads[0] + k.pads[2] - (2 * k.dilation + 1)) / k.stride + 1);
            QCOMPARE(ow, (w + k.pads[1] + k.pads[3] - (2 * k.dilation + 1)) / k.stride + 1);
            auto xAt = [&](int64_t i) { return k.xType == DType::UInt8 ? int(in.as<uint8_t>()[i]) : int(in.as<int8_t>()[i]); };
            auto wAt = [&](int64_t i) { return k.wType == DType::UInt8 ? int(uint8_t(wb[size_t(i)])) : int(int8_t(wb[size_t(i)])); };
            for (int64_t n = 0; n < 2; ++n)
                for (int64_t ch = 0; ch < c; ++ch)
                    for (int64_t oy = 0; oy < oh; ++oy)
                        for (int64_t ox = 0; ox < ow; ++ox) {
                            int64_t exact = 0;
                            for (int64_t ky = 0; ky < 3; ++ky)
                                for (int64_t kx = 0; kx < 3; ++kx) {
                                    const int64_t iy = oy * k.stride + ky * k.dilation - k.pads[0];
                                    const int64_t ix = ox * k.stride + kx * k.dilation - k.pads[1];
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                    exact += int64_t(xAt(((n * c + ch) * h + iy) * w + ix) - k.xZero) *
                                             (wAt(ch * 9 + ky * 3 + kx) - channelZero(ch));
                                }
                            const int64_t got = y.as<int32_t>()[((n * c + ch) * oh + oy) * ow + ox];
                            if (got != exact) QCOMPARE(got, exact);
                        }

            // The same layer as QLinearConv with a bias, requantized to x's type: the int32
            // results above, plus the bias, times x_scale x w_scale / y_scale in float32.
            GraphBuilder q;
            ValueId qx = q.input("x", k.xType, Shape::ofSizes({2, c, h, w}));
            const float xs = 0.02f, ws = 0.01f, ys = 0.05f;
            const int yZero = k.xType == DType::UInt8 ? 120 : -3;
            std::vector<int32_t> bias(static_cast<size_t>(c));
            for (int64_t ch = 0; ch < c; ++ch) bias[size_t(ch)] = int32_t(rng() % 2001) - 1000;
            std::string biasBytes(size_t(c) * 4, '\0');
            std::memcpy(biasBytes.data(), bias.data(), biasBytes.size());
            auto param = [&](const char* name, float v) { return q.initializer(floatTensor(name, {}, {v})); };
            ValueId qwt = q.initializer(Tensor("w", k.wType, {c, 1, 3, 3}, makeBuffer(wb), 0, wb.size()));
            ValueId qxz = q.initializer(Tensor("xz", k.xType, {}, makeBuffer(std::string(1, char(k.xZero))), 0, 1));
            ValueId qwz = k.wZero == -1000 ? q.initializer(Tensor("wz", k.wType, {c}, makeBuffer(zeros), 0, size_t(c)))
                                           : q.initializer(Tensor("wz", k.wType, {}, makeBuffer(zeros.substr(0, 1)), 0, 1));
            ValueId qyz = q.initializer(Tensor("yz", k.xType, {}, makeBuffer(std::string(1, char(yZero))), 0, 1));
            ValueId qb = q.initializer(Tensor("b", DType::Int32, {c}, makeBuffer(biasBytes), 0, biasBytes.size()));
            q.output(q.op("QLinearConv", {qx, param("xs", xs), qxz, qwt, param("ws", ws), qwz, param("ys", ys), qyz, qb}, "y",
                          {intsAttr("pads", k.pads), intAttr("group", int(c)), intsAttr("strides", {k.stride, k.stride}),
                           intsAttr("dilations", {k.dilation, k.dilation})}));
            auto qexec = Executor::create(withInferredTypes(q), cpuExecutorOptions(k.threads));
            QVERIFY(qexec);
            auto qout = (*qexec)->run({in});
            QVERIFY2(qout, qout.status().message().c_str());
            const RtTensor& qy = (*qout)[0];
            QCOMPARE(qy.dtype, k.xType);
            QCOMPARE(qy.dims, y.dims);
            const float scale = xs * ws / ys;
            const float lo = k.xType == DType::UInt8 ? 0.0f : -128.0f, hi = k.xType == DType::UInt8 ? 255.0f : 127.0f;
            for (int64_t i = 0; i < qy.numel(); ++i) {
                const int64_t ch = (i / (oh * ow)) % c;
                const float v = float(y.as<int32_t>()[i] + bias[size_t(ch)]) * scale;
                const int want = int(std::nearbyint(std::clamp(v, lo - float(yZero), hi - float(yZero))) + float(yZero));
                const int got = k.xType == DType::UInt8 ? int(qy.as<uint8_t>()[i]) : int(qy.as<int8_t>()[i]);
                if (got != want) QCOMPARE(got, want);
            }
        }
    }

    // The QDQ form's residual Add, global pooling, Flatten and Gemm (what follows the
    // convolutions of a quantized MobileNet) become QLinearAdd, QLinearGlobalAveragePool, a
    // Flatten of the bytes and QGemm at O2: one QuantizeLinear and one DequantizeLinear left,
    // at the ends, and the outputs within a quantization step of the QDQ form's.
    void qdqResidualPoolAndClassifierFold() {
        QdqGraph q;
        GraphBuilder& b = q.b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 8, 6, 6}));
        auto qdq = [&](ValueId v, const std::string& at, double scale, int zero) { return q.qdq(v, at, scale, zero); };
        auto int8Weight = [&](const std::string& name, std::vector<int64_t> dims, uint32_t seed, double scale) {
            return q.int8Weight(name, std::move(dims), seed, scale);
        };
        ValueId x0 = qdq(x, "in", 0.03, 128);
        ValueId c1 = b.op("Conv", {x0, int8Weight("w1", {8, 8, 1, 1}, 3, 0.01)}, "c1", {}, "pointwise");
        ValueId sum = b.op("Add", {qdq(c1, "c1", 0.02, 130), x0}, "sum", {}, "residual");
        ValueId pooled = b.op("GlobalAveragePool", {qdq(sum, "sum", 0.04, 125)}, "pooled", {}, "pool");
        ValueId flat = b.op("Flatten", {qdq(pooled, "pool", 0.04, 125)}, "flat", {intAttr("axis", 1)}, "flatten");
        ValueId y = b.op("Gemm", {qdq(flat, "pool2", 0.04, 125), int8Weight("wf", {5, 8}, 4, 0.02),
                                  b.initializer(randomFloatTensor("bf", {5}, 6, 0.1f))},
                         "y", {intAttr("transB", 1)}, "fc");
        b.output(qdq(y, "out", 0.01, 128));
        const Model m = withInferredTypes(b);
        const CompileResult o2 = compileAt(m, "O2");
        const Graph& g = *o2.model.graph;
        QCOMPARE(count(g, "QLinearAdd"), 1);
        QCOMPARE(count(g, "QLinearGlobalAveragePool"), 1);
        QCOMPARE(count(g, "QGemm"), 1);
        QCOMPARE(count(g, "QuantizeLinear"), 1);
        QCOMPARE(count(g, "DequantizeLinear"), 1);
        QCOMPARE(o2.model.opsetVersion("com.microsoft"), int64_t(1));
        for (NodeId id : g.order())
            if (g.node(id).opType == "Flatten") QCOMPARE(g.value(g.node(id).inputs[0]).type.elemType, DType::UInt8);
        const double diff = maxRelativeError(m, o2.model);  // a step or two of the output's scale
        QVERIFY2(diff < 0.03, std::to_string(diff).c_str());
    }

    // PyTorch's quantized ResNets: a MaxPool between a DequantizeLinear and a QuantizeLinear of
    // the same parameters runs on the bytes, and add_relu (Add, Relu, QuantizeLinear with zero
    // point 0) becomes one QLinearAdd; a Relu before a zero point above the lowest stays. The
    // outputs are the QDQ form's within a step, with 70 channels (a 64-byte block and an
    // overlapping one in the channels-last MaxPool).
    void qdqMaxPoolAndAddReluRunOnBytes() {
        QdqGraph q;
        GraphBuilder& b = q.b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 70, 9, 11}));
        auto qdq = [&](ValueId v, const std::string& at, double scale, int zero) { return q.qdq(v, at, scale, zero); };
        auto int8Weight = [&](const std::string& name, std::vector<int64_t> dims, uint32_t seed, double scale) {
            return q.int8Weight(name, std::move(dims), seed, scale);
        };
        ValueId x0 = qdq(x, "in", 0.03, 128);
        ValueId c1 = b.op("Conv", {x0, int8Weight("w1", {70, 70, 1, 1}, 3, 0.01)}, "c1", {}, "conv1");
        ValueId pooled = qdq(b.op("MaxPool", {qdq(c1, "c1", 0.02, 130)}, "pool",
                                  {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}), intsAttr("pads", {1, 1, 1, 1})},
                                  "maxpool"),
                             "pool", 0.02, 130);
        ValueId c2 = qdq(b.op("Conv", {pooled, int8Weight("w2", {70, 70, 1, 1}, 4, 0.01)}, "c2", {}, "conv2"), "c2", 0.02, 125);
        ValueId sum = b.op("Add", {c2, pooled}, "sum", {}, "residual");
        ValueId relu = b.op("Relu", {sum}, "relu", {}, "residual_relu");
        b.output(q.qdq(relu, "out", 0.04, 0));
        // Another such sum through a Relu before a zero point of 5: the Relu is not the clamp's.
        ValueId c3 = qdq(b.op("Conv", {pooled, int8Weight("w3", {70, 70, 1, 1}, 5, 0.01)}, "c3", {}, "conv3"), "c3", 0.02, 125);
        ValueId relu2 = b.op("Relu", {b.op("Add", {c3, pooled}, "sum2", {}, "residual2")}, "relu2", {}, "residual2_relu");
        b.output(q.qdq(relu2, "out2", 0.04, 5));
        const Model m = withInferredTypes(b);
        const CompileResult o2 = compileAt(m, "O2");
        const Graph& g = *o2.model.graph;
        QCOMPARE(count(g, "QLinearAdd"), 1);
        QCOMPARE(count(g, "Relu") + count(g, "FusedElementwise"), 1);
        QVERIFY(rejectedFor(o2, "zero point is not its lowest value"));
        for (NodeId id : g.order())
            if (g.node(id).opType == "MaxPool") QCOMPARE(g.value(g.node(id).inputs[0]).type.elemType, DType::UInt8);
        const double diff = maxRelativeError(m, o2.model);  // the convolutions' integer rounding: a step at most
        QVERIFY2(diff < 0.01, std::to_string(diff).c_str());
    }

    // Inception's pool branches: DequantizeLinear, AveragePool, QuantizeLinear becomes
    // QLinearAveragePool, channels-last between convolutions (with the branch's own padding
    // and divisor) and NCHW elsewhere (ceil_mode, count_include_pad), within a step of the
    // QDQ form's output.
    void qdqAveragePoolsRunOnBytes() {
        QdqGraph q;
        GraphBuilder& b = q.b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 20, 9, 11}));
        ValueId x0 = q.qdq(x, "in", 0.03, 128);
        ValueId c1 = q.qdq(b.op("Conv", {x0, q.int8Weight("w1", {20, 20, 1, 1}, 3, 0.01)}, "c1"), "c1", 0.02, 120);
        ValueId pooled = q.qdq(b.op("AveragePool", {c1}, "pool",
                                    {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {1, 1}), intsAttr("pads", {1, 1, 1, 1})}),
                               "pool", 0.02, 120);
        b.output(q.qdq(b.op("Conv", {pooled, q.int8Weight("w2", {20, 20, 1, 1}, 4, 0.01)}, "c2"), "out", 0.02, 128));
        ValueId coarse = b.op("AveragePool", {x0}, "coarse",
                              {intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {2, 2}), intAttr("ceil_mode", 1),
                               intAttr("count_include_pad", 1), intsAttr("pads", {0, 0, 1, 1})});
        b.output(q.qdq(coarse, "coarse", 0.03, 128));
        const Model m = withInferredTypes(b);
        const CompileResult o2 = compileAt(m, "O2");
        const Graph& g = *o2.model.graph;
        QCOMPARE(count(g, "QLinearAveragePool"), 2);
        QCOMPARE(count(g, "AveragePool"), 0);
        int channelsLast = 0;
        for (NodeId id : g.order()) {
            const Node& node = g.node(id);
            if (node.opType == "QLinearAveragePool") channelsLast += attr(node, "channels_last") && attr(node, "channels_last")->i == 1;
        }
        QCOMPARE(channelsLast, 1);
        // A step (0.03 on values under 1) where the exact integer mean lies on a rounding tie
        // that the QDQ form's rounded float sum misses: ONNX Runtime's QLinearAveragePool
        // gives the integer mean's bytes too.
        const double diff = maxRelativeError(m, o2.model);
        QVERIFY2(diff < 0.05, std::to_string(diff).c_str());
    }

    // PyTorch's quantized MobileNetV3: a squeeze-and-excitation block pools the dequantized
    // values it also scales (one DequantizeLinear, two readers), so the pool still becomes
    // QLinearGlobalAveragePool and the scaling QLinearMul; the hardswish's DequantizeLinear,
    // HardSigmoid, Mul, QuantizeLinear stay float but inside the channels-last region: no
    // Transpose between the convolutions.
    void qdqSqueezeExcitationRunsOnBytes() {
        QdqGraph q;
        GraphBuilder& b = q.b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 8, 7, 9}));
        auto qdq = [&](ValueId v, const std::string& at, double scale, int zero) { return q.qdq(v, at, scale, zero); };
        auto conv = [&](ValueId in, const std::string& name, int64_t m, int64_t c, uint32_t seed) {
            return b.op("Conv", {in, q.int8Weight(name + "_w", {m, c, 1, 1}, seed, 0.01)}, name);
        };
        ValueId x0 = qdq(x, "in", 0.03, 128);
        ValueId c1 = qdq(conv(x0, "c1", 8, 8, 3), "c1", 0.02, 130);
        ValueId hardswish = qdq(b.op("Mul", {c1, b.op("HardSigmoid", {c1}, "hs", {floatAttr("alpha", 1.0f / 6)})}, "hswish"),
                                "hswish", 0.02, 120);
        ValueId pooled = qdq(b.op("GlobalAveragePool", {hardswish}, "pool"), "pool", 0.02, 120);
        ValueId scale = qdq(b.op("HardSigmoid", {qdq(conv(pooled, "fc", 8, 8, 4), "fc", 0.02, 128)}, "gate",
                                 {floatAttr("alpha", 1.0f / 6)}),
                            "gate", 1.0 / 256, 0);
        ValueId scaled = qdq(b.op("Mul", {hardswish, scale}, "se"), "se", 0.02, 120);
        b.output(qdq(conv(scaled, "c2", 8, 8, 5), "out", 0.02, 128));
        const Model m = withInferredTypes(b);
        const CompileResult o2 = compileAt(m, "O2");
        const Graph& g = *o2.model.graph;
        QCOMPARE(count(g, "QLinearGlobalAveragePool"), 1);
        QCOMPARE(count(g, "QLinearMul"), 1);
        QCOMPARE(count(g, "GlobalAveragePool") + count(g, "ReduceMean"), 0);
        QCOMPARE(count(g, "QLinearConv"), 3);
        int transposes = 0;  // at most the region's exit to the graph's NCHW output
        for (NodeId id : g.order()) {
            const Node& node = g.node(id);
            transposes += node.opType == "Transpose";
            if (node.opType == "QLinearConv" || node.opType == "QLinearMul")
                QVERIFY2(node.opType == "QLinearMul" || (attr(node, "channels_last") && attr(node, "channels_last")->i == 1),
                         node.name.c_str());
        }
        QVERIFY2(transposes <= 1, std::to_string(transposes).c_str());
        const double diff = maxRelativeError(m, o2.model);  // the convolutions' integer rounding
        QVERIFY2(diff < 0.02, std::to_string(diff).c_str());
    }

    // Float steps between a DequantizeLinear and a QuantizeLinear that depend on one byte alone
    // (a hardswish: HardSigmoid and Mul of the same value; a SiLU scaled by a scalar) become one
    // QuantizedLookup through a table the CPU kernels computed, uint8 and int8 alike, and give
    // the QDQ form's bytes. A step that reads a per-channel constant, or whose output is read
    // elsewhere, keeps the float steps.
    void qdqByteFunctionsBecomeLookups() {
        for (DType type : {DType::UInt8, DType::Int8}) {
            QdqGraph q;
            q.type = type;
            GraphBuilder& b = q.b;
            ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 6, 5, 7}));
            const int zero = type == DType::UInt8 ? 128 : 0;
            auto quantize = [&](ValueId v, const std::string& at, double scale) { return q.quantize(v, at, scale, zero); };
            auto dequantize = [&](ValueId v, const std::string& at, double scale) { return q.dequantize(v, at, scale, zero); };
            ValueId d = dequantize(quantize(x, "in", 0.05), "in", 0.05);
            ValueId hardswish = b.op("Mul", {d, b.op("HardSigmoid", {d}, "hs", {floatAttr("alpha", 1.0f / 6)})}, "hswish");
            b.output(dequantize(quantize(hardswish, "a", 0.03), "a", 0.03));
            ValueId silu = b.op("Mul", {b.op("Mul", {d, b.op("Sigmoid", {d}, "sig")}, "silu"), q.scalar("half", DType::Float32, 0.5)},
                                "half_silu");
            b.output(dequantize(quantize(silu, "b", 0.02), "b", 0.02));
            // Not a function of one byte: a per-channel scale.
            ValueId perChannel = b.initializer(floatTensor("pc", {6, 1, 1}, {0.5f, 1, 1.5f, 2, 2.5f, 3}));
            b.output(dequantize(quantize(b.op("Mul", {b.op("Relu", {d}, "r"), perChannel}, "scaled"), "c", 0.04), "c", 0.04));
            // A step read elsewhere too.
            ValueId shared = b.op("Tanh", {d}, "tanh");
            b.output(dequantize(quantize(b.op("Abs", {shared}, "abs"), "e", 0.01), "e", 0.01));
            b.output(shared);
            const Model m = withInferredTypes(b);
            const CompileResult o2 = compileAt(m, "O2");
            const Graph& g = *o2.model.graph;
            QCOMPARE(count(g, "QuantizedLookup"), 2);
            for (NodeId id : g.order()) {
                const Node& node = g.node(id);
                if (node.opType != "QuantizedLookup") continue;
                QCOMPARE(g.value(node.inputs[0]).type.elemType, type);
                QCOMPARE(g.value(node.outputs[0]).type.elemType, type);
            }
            const double diff = maxRelativeError(m, o2.model);
            QVERIFY2(diff == 0.0, std::to_string(diff).c_str());
        }
    }

    // QLinearAdd and QLinearMul compute the QDQ form's float steps, so they equal
    // DequantizeLinear x 2, Add or Mul, QuantizeLinear to the bit, broadcasting (a row against a
    // matrix) and saturating.
    void qlinearAddEqualsItsQdqForm() {
        std::mt19937 rng(5);
        for (const char* op : {"Add", "Mul"})
        for (DType type : {DType::UInt8, DType::Int8}) {
            GraphBuilder b;
            ValueId a = b.input("a", type, Shape::ofSizes({3, 37}));
            ValueId c = b.input("c", type, Shape::ofSizes({1, 37}));
            auto param = [&](const std::string& name, double scale, int zero, ValueId& z) {
                z = b.initializer(Tensor(name + "_z", type, {}, makeBuffer(std::string(1, char(zero))), 0, 1));
                return b.initializer(floatTensor(name + "_s", {}, {float(scale)}));
            };
            ValueId az, cz, yz;
            ValueId as = param("a", 0.031, type == DType::UInt8 ? 128 : 3, az);
            ValueId cs = param("c", 0.017, type == DType::UInt8 ? 90 : -20, cz);
            ValueId ys = param("y", 0.023, type == DType::UInt8 ? 110 : 0, yz);
            ValueId fused = b.node(std::string("QLinear") + op, {a, as, az, c, cs, cz, ys, yz}, {"fused"}, {}, "fused", "com.microsoft")[0];
            ValueId sum = b.op(op, {b.op("DequantizeLinear", {a, as, az}, "da"), b.op("DequantizeLinear", {c, cs, cz}, "dc")}, "sum");
            b.output(fused);
            b.output(b.op("QuantizeLinear", {sum, ys, yz}, "unfused"));
            Model m = withInferredTypes(b);
            m.opsetImports.push_back({"com.microsoft", 1});
            auto exec = Executor::create(m, cpuExecutorOptions(2));
            QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
            RtTensor ta = allocateTensor(type, {3, 37}), tc = allocateTensor(type, {1, 37});
            for (int64_t i = 0; i < ta.numel(); ++i) ta.as<uint8_t>()[i] = uint8_t(rng());
            for (int64_t i = 0; i < tc.numel(); ++i) tc.as<uint8_t>()[i] = uint8_t(rng());
            auto out = (*exec)->run({ta, tc});
            QVERIFY2(out, out.status().message().c_str());
            QCOMPARE((*out)[0].dims, (std::vector<int64_t>{3, 37}));
            QCOMPARE(std::memcmp((*out)[0].data, (*out)[1].data, size_t((*out)[0].bytes())), 0);
        }
    }

    // ONNX Runtime's QLinearSigmoid and QLinearLeakyRelu (its quantizer's operator form) on
    // every byte value, as uint8 and int8: quantize(f(dequantize(x))), rounded half to even and
    // saturated, as QuantizeLinear does. (On ONNX Runtime 1.31's CPU the same, bit for bit, on
    // 12,000 values: docs/benchmarks.md.)
    void qlinearSigmoidAndLeakyReluByTheirFormula() {
        for (DType type : {DType::UInt8, DType::Int8}) {
            const bool int8 = type == DType::Int8;
            GraphBuilder b;
            ValueId x = b.input("x", type, Shape::ofSizes({256}));
            auto scalar = [&](const std::string& name, int value) {
                return b.initializer(Tensor(name, type, {}, makeBuffer(std::string(1, char(value))), 0, 1));
            };
            const float xs = 0.043f, ss = 1 / 255.f, ls = 0.021f;
            const int xz = int8 ? -5 : 131, sz = int8 ? -100 : 3, lz = int8 ? 7 : 120;
            ValueId xScale = b.initializer(floatTensor("xs", {}, {xs})), xZero = scalar("xz", xz);
            ValueId sig = b.node("QLinearSigmoid", {x, xScale, xZero, b.initializer(floatTensor("ss", {}, {ss})), scalar("sz", sz)},
                                 {"sig"}, {}, "sigmoid", "com.microsoft")[0];
            ValueId leaky = b.node("QLinearLeakyRelu", {x, xScale, xZero, b.initializer(floatTensor("ls", {}, {ls})), scalar("lz", lz)},
                                   {"leaky"}, {floatAttr("alpha", 0.1f)}, "leaky", "com.microsoft")[0];
            b.output(sig);
            b.output(leaky);
            Model m = withInferredTypes(b);
            m.opsetImports.push_back({"com.microsoft", 1});
            QCOMPARE(m.graph->value(m.graph->findValue("sig")).type.toString(), std::string(int8 ? "int8[256]" : "uint8[256]"));
            auto exec = Executor::create(m, cpuExecutorOptions(2));
            QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
            RtTensor tx = allocateTensor(type, {256});
            for (int i = 0; i < 256; ++i) tx.as<uint8_t>()[i] = uint8_t(i);
            auto out = (*exec)->run({tx});
            QVERIFY2(out, out.status().message().c_str());
            auto quantized = [&](double v, double scale, int zero) {
                return std::clamp(std::nearbyint(v / scale) + zero, int8 ? -128.0 : 0.0, int8 ? 127.0 : 255.0);
            };
            for (int i = 0; i < 256; ++i) {
                const double q = int8 ? double(int8_t(uint8_t(i))) : double(i), v = (q - xz) * xs;
                auto stored = [&](const RtTensor& t) { return int8 ? double(t.as<int8_t>()[i]) : double(t.as<uint8_t>()[i]); };
                QCOMPARE(stored((*out)[0]), quantized(1 / (1 + std::exp(-v)), ss, sz));
                QCOMPARE(stored((*out)[1]), quantized(v < 0 ? 0.1 * v : v, ls, lz));
            }
        }
    }

    // com.microsoft.QLinearSoftmax against ONNX Runtime 1.31's outputs for the same bytes
    // (x[i] = (37 i + 11) mod 256, moved into int8's range for int8): a middle axis at
    // opset 13, the flattened dims from the axis on at opset 12, the default axis, a y_scale
    // whose reciprocal is not a whole number, and an int8 row that one value wins outright
    // (1.0, which saturates to 127).
    void qlinearSoftmaxGivesOnnxRuntimesBytes_data() {
        QTest::addColumn<bool>("int8");
        QTest::addColumn<std::vector<int64_t>>("dims");
        QTest::addColumn<int>("opset");
        QTest::addColumn<int>("axis");  // 99: no axis attribute
        QTest::addColumn<float>("xScale");
        QTest::addColumn<float>("yScale");
        QTest::addColumn<int>("yZero");
        QTest::addColumn<std::vector<int>>("expected");
        QTest::newRow("uint8, middle axis, opset 13")
            << false << std::vector<int64_t>{2, 3, 5} << 13 << 1 << 0.02f << 1 / 256.f << 0
            << std::vector<int>{5, 5, 23, 23, 197, 202, 202, 6, 6, 48, 49, 49, 227, 227, 12,
                                5, 23, 23, 197, 197, 202, 6, 6, 48, 48, 49, 227, 227, 12, 12};
        QTest::newRow("int8, flattened from axis 1, opset 12")
            << true << std::vector<int64_t>{2, 3, 5} << 12 << 1 << 0.01f << 0.003f << -128
            << std::vector<int>{-122, -120, -116, -110, -102, -91, -74, -122, -119, -115, -110, -102, -90, -73, -122,
                                -120, -116, -110, -103, -91, -75, -122, -119, -115, -110, -102, -90, -73, -122, -119};
        QTest::newRow("uint8, default axis, y_scale 1/200") << false << std::vector<int64_t>{2, 7} << 13 << 99 << 0.015f
                                                             << 1 / 200.f << 5
                                                             << std::vector<int>{8, 10, 14, 21, 34, 55, 92, 8, 10, 14, 21, 34, 55, 92};
        QTest::newRow("int8, one value wins") << true << std::vector<int64_t>{3, 4} << 13 << -1 << 0.5f << 1 / 256.f << -128
                                              << std::vector<int>{-128, -128, -128, 127, -128, -128, 127, -128, -128, -128, -128, 127};
    }

    void qlinearSoftmaxGivesOnnxRuntimesBytes() {
        QFETCH(bool, int8);
        QFETCH(std::vector<int64_t>, dims);
        QFETCH(int, opset);
        QFETCH(int, axis);
        QFETCH(float, xScale);
        QFETCH(float, yScale);
        QFETCH(int, yZero);
        QFETCH(std::vector<int>, expected);
        const DType type = int8 ? DType::Int8 : DType::UInt8;
        GraphBuilder b;
        ValueId x = b.input("x", type, Shape::ofSizes(dims));
        auto scalar = [&](const std::string& name, int value) {
            return b.initializer(Tensor(name, type, {}, makeBuffer(std::string(1, char(value))), 0, 1));
        };
        std::vector<Attribute> attrs = {intAttr("opset", opset)};
        if (axis != 99) attrs.push_back(intAttr("axis", axis));
        // X's zero point (here 17) cancels out of a softmax.
        ValueId y = b.node("QLinearSoftmax",
                           {x, b.initializer(floatTensor("xs", {}, {xScale})), scalar("xz", 17),
                            b.initializer(floatTensor("ys", {}, {yScale})), scalar("yz", yZero)},
                           {"y"}, attrs, "softmax", "com.microsoft")[0];
        b.output(y);
        Model m = withInferredTypes(b);
        m.opsetImports.push_back({"com.microsoft", 1});
        auto exec = Executor::create(m, cpuExecutorOptions(2));
        QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
        RtTensor tx = allocateTensor(type, dims);
        for (int64_t i = 0; i < tx.numel(); ++i) {
            const int byte = int((37 * i + 11) % 256);
            tx.as<uint8_t>()[i] = uint8_t(int8 ? byte - 128 : byte);
        }
        auto out = (*exec)->run({tx});
        QVERIFY2(out, out.status().message().c_str());
        QCOMPARE(int64_t(expected.size()), (*out)[0].numel());
        for (size_t i = 0; i < expected.size(); ++i) {
            const int got = int8 ? int((*out)[0].as<int8_t>()[i]) : int((*out)[0].as<uint8_t>()[i]);
            QVERIFY2(got == expected[i], qPrintable(QString("y[%1] = %2, ONNX Runtime %3").arg(i).arg(got).arg(expected[i])));
        }
    }

    // com.microsoft.DynamicQuantizeLSTM (quantize_dynamic's LSTM): 3 steps of a forward layer
    // of 2 with int8 W and R, against ONNX Runtime 1.31's Y, Y_h and Y_c for the same inputs.
    void dynamicQuantizeLstmGivesOnnxRuntimesOutputs() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({3, 1, 2}));
        auto bytes = [&](const std::string& name, std::vector<int64_t> dims, std::vector<int> values) {
            std::string data;
            for (int v : values) data.push_back(char(v));
            const size_t size = data.size();
            return b.initializer(Tensor(name, DType::Int8, std::move(dims), makeBuffer(std::move(data)), 0, size));
        };
        ValueId w = bytes("W", {1, 2, 8}, {12, -40, 77, 3, -127, 55, 9, -21, -64, 101, -5, 33, 18, -90, 120, 7});
        ValueId r = bytes("R", {1, 2, 8}, {25, -8, -99, 60, 14, 127, -33, 41, -70, 36, 5, -118, 88, -2, 47, 19});
        ValueId bias = b.initializer(floatTensor("B", {1, 16}, {0.1f, -0.2f, 0.05f, 0.3f, -0.15f, 0.0f, 0.25f, -0.05f, 0.02f, 0.04f,
                                                               -0.1f, 0.12f, 0.0f, -0.07f, 0.09f, 0.01f}));
        const ValueId none;
        auto outs = b.node("DynamicQuantizeLSTM",
                           {x, w, r, bias, none, none, none, none, b.initializer(floatTensor("Ws", {1}, {0.02f})),
                            bytes("Wz", {1}, {0}), b.initializer(floatTensor("Rs", {1}, {0.015f})), bytes("Rz", {1}, {0})},
                           {"y", "y_h", "y_c"}, {intAttr("hidden_size", 2)}, "lstm", "com.microsoft");
        for (ValueId o : outs) b.output(o);
        Model m = withInferredTypes(b);
        m.opsetImports.push_back({"com.microsoft", 1});
        QCOMPARE(m.graph->value(outs[0]).type.toString(), std::string("float32[3,1,1,2]"));
        QCOMPARE(m.graph->value(outs[2]).type.toString(), std::string("float32[1,1,2]"));
        auto exec = Executor::create(m, cpuExecutorOptions(2));
        QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
        RtTensor tx = allocateTensor(DType::Float32, {3, 1, 2});
        const float xs[] = {0.5f, -1.25f, 1.5f, 0.75f, -0.3f, 2.0f};
        std::copy(std::begin(xs), std::end(xs), tx.as<float>());
        auto out = (*exec)->run({tx});
        QVERIFY2(out, out.status().message().c_str());
        const std::vector<std::vector<float>> expected = {
            {-0.48370102f, -0.00715562981f, 0.293501526f, -0.239611343f, 0.078108348f, 0.368761301f},
            {0.078108348f, 0.368761301f},
            {0.343658f, 0.425841212f}};
        for (size_t o = 0; o < 3; ++o) {
            QCOMPARE((*out)[o].numel(), int64_t(expected[o].size()));
            for (size_t i = 0; i < expected[o].size(); ++i)
                QVERIFY2(std::abs((*out)[o].as<float>()[i] - expected[o][i]) < 1e-6f,
                         qPrintable(QString("output %1[%2] = %3, ONNX Runtime %4").arg(o).arg(i).arg((*out)[o].as<float>()[i]).arg(expected[o][i])));
        }
    }

    // The packed vpdpbusd rows (the plain loop where the CPU lacks VNNI) give the exact sums
    // of (a - za)(b - zb): uint8 and int8 B, zero points, up to 4 rows at once, ragged K and N.
    void int8RowsTimesColumnsAreExact() {
        std::mt19937 rng(7);
        for (const bool isSigned : {true, false})
            for (const int64_t rows : {1, 3, 9})
                for (const auto& [K, N] : std::vector<std::pair<int64_t, int64_t>>{{5, 7}, {64, 48}, {130, 100}}) {
                    std::vector<uint8_t> a(size_t(rows * K)), bm(size_t(K * N));
                    for (auto& v : a) v = uint8_t(rng() % 256);
                    for (auto& v : bm) v = uint8_t(rng() % 256);
                    const int32_t aZero = 117, bZero = isSigned ? -3 : 140;
                    const cpu::PackedInt8Columns packed = cpu::packInt8Columns(bm.data(), isSigned, K, N, bZero);
                    std::vector<int32_t> y(size_t(rows * N));
                    ThreadPool pool(2);
                    cpu::int8RowsTimesColumns(pool, a.data(), rows, aZero, packed, y.data());
                    for (int64_t r = 0; r < rows; ++r)
                        for (int64_t n = 0; n < N; ++n) {
                            int64_t want = 0;
                            for (int64_t k = 0; k < K; ++k) {
                                const int64_t bv = isSigned ? int8_t(bm[size_t(k * N + n)]) : bm[size_t(k * N + n)];
                                want += (int64_t(a[size_t(r * K + k)]) - aZero) * (bv - bZero);
                            }
                            QCOMPARE(int64_t(y[size_t(r * N + n)]), want);
                        }
                }
    }

    // Resize's linear and cubic modes on 8-bit tensors: the interpolated value truncates toward
    // zero (ONNX Runtime's outputs for these inputs: 0 0 2 3 and 0 0 -2 -3), and a cubic
    // overshoot past the type's range saturates.
    void interpolatedBytesTruncateTowardZero() {
        auto resized = [](DType type, std::vector<int> values, const std::string& mode) {
            GraphBuilder b;
            const int64_t n = int64_t(values.size());
            ValueId x = b.input("x", type, Shape::ofSizes({1, 1, 1, n}));
            ValueId y = b.node("Resize",
                               {x, b.initializer(floatTensor("roi", {0}, {})), b.initializer(floatTensor("scales", {4}, {1, 1, 1, 2}))},
                               {"y"}, {stringAttr("mode", mode)}, "resize")[0];
            b.output(y);
            Model m = withInferredTypes(b);
            auto exec = Executor::create(m, cpuExecutorOptions(1));
            RtTensor tx = allocateTensor(type, {1, 1, 1, n});
            for (int64_t i = 0; i < n; ++i) tx.as<uint8_t>()[i] = uint8_t(values[size_t(i)]);
            std::vector<int> got;
            if (!exec) return got;
            auto out = (*exec)->run({tx});
            if (!out) return got;
            for (int64_t i = 0; i < (*out)[0].numel(); ++i)
                got.push_back(type == DType::Int8 ? int((*out)[0].as<int8_t>()[i]) : int((*out)[0].as<uint8_t>()[i]));
            return got;
        };
        QCOMPARE(resized(DType::UInt8, {0, 3}, "linear"), (std::vector<int>{0, 0, 2, 3}));
        QCOMPARE(resized(DType::Int8, {0, -3}, "linear"), (std::vector<int>{0, 0, -2, -3}));
        // Cubic between 0 and 255 rings below 0 and above 255 next to each step.
        const std::vector<int> ringing = resized(DType::UInt8, {0, 255, 0, 255}, "cubic");
        QCOMPARE(ringing.size(), size_t(8));
        QVERIFY(std::count(ringing.begin(), ringing.end(), 0) >= 1);
        QVERIFY(std::count(ringing.begin(), ringing.end(), 255) >= 1);
        const std::vector<int> signedRinging = resized(DType::Int8, {-128, 127, -128, 127}, "cubic");
        QVERIFY(std::count(signedRinging.begin(), signedRinging.end(), -128) >= 1);
        QVERIFY(std::count(signedRinging.begin(), signedRinging.end(), 127) >= 1);
    }

    // QGemm against its definition computed here exactly: the VNNI kernel's rows (uint8 A,
    // constant int8 B of zero point 0, split over the threads by blocks of columns) and the
    // GEMM's (a zero point in B, more rows, K not a multiple of 4) alike, B either way round.
    void qgemmEqualsItsArithmetic_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("columns");
        QTest::addColumn<bool>("transB");
        QTest::addColumn<int>("bZero");
        QTest::addColumn<bool>("int8Out");
        QTest::addColumn<bool>("withC");
        QTest::addColumn<int>("threads");
        QTest::newRow("classifier, 2 threads") << 1 << 128 << 1000 << true << 0 << false << true << 2;
        QTest::newRow("classifier, B not transposed") << 1 << 64 << 37 << false << 0 << false << true << 1;
        QTest::newRow("five rows and one, int8 out") << 6 << 32 << 70 << true << 0 << true << true << 2;
        QTest::newRow("no C") << 3 << 16 << 17 << true << 0 << false << false << 1;
        QTest::newRow("K not a multiple of 4") << 2 << 30 << 40 << true << 0 << false << true << 2;
        QTest::newRow("B zero point") << 2 << 32 << 40 << true << 5 << false << true << 2;
        QTest::newRow("many rows") << 40 << 32 << 48 << false << 0 << false << true << 2;
    }

    void qgemmEqualsItsArithmetic() {
        QFETCH(int, rows);
        QFETCH(int, depth);
        QFETCH(int, columns);
        QFETCH(bool, transB);
        QFETCH(int, bZero);
        QFETCH(bool, int8Out);
        QFETCH(bool, withC);
        QFETCH(int, threads);
        const int64_t m = rows, k = depth, n = columns;
        std::mt19937 rng(uint32_t(m * 31 + k * 7 + n));
        std::string bBytes(size_t(k * n), '\0');
        for (char& v : bBytes) v = char(int(rng() % 256) - 128);
        std::vector<int32_t> bias(static_cast<size_t>(n));
        for (int32_t& v : bias) v = int32_t(rng() % 20001) - 10000;
        std::vector<float> bScales(static_cast<size_t>(n));
        for (float& v : bScales) v = 0.001f + 0.0005f * float(rng() % 9);
        const float aScale = 0.02f, yScale = 0.01f * std::sqrt(float(k));  // outputs mostly inside the range
        const uint8_t aZero = 119;
        const DType yType = int8Out ? DType::Int8 : DType::UInt8;
        const char yZero = char(int8Out ? -3 : 128);
        GraphBuilder b;
        ValueId a = b.input("a", DType::UInt8, Shape::ofSizes({m, k}));
        auto bytes = [&](const char* name, DType t, std::vector<int64_t> dims, const void* p, size_t count) {
            return b.initializer(Tensor(name, t, std::move(dims), makeBuffer(std::string(static_cast<const char*>(p), count)), 0, count));
        };
        const char bz = char(bZero);
        std::vector<ValueId> in{a,
                                bytes("as", DType::Float32, {}, &aScale, 4),
                                bytes("az", DType::UInt8, {}, &aZero, 1),
                                bytes("b", DType::Int8, transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
                                      bBytes.data(), bBytes.size()),
                                bytes("bs", DType::Float32, {n}, bScales.data(), size_t(n) * 4),
                                bytes("bz", DType::Int8, {}, &bz, 1),
                                withC ? bytes("c", DType::Int32, {n}, bias.data(), size_t(n) * 4) : ValueId{},
                                bytes("ys", DType::Float32, {}, &yScale, 4),
                                bytes("yz", yType, {}, &yZero, 1)};
        b.output(b.node("QGemm", in, {"y"}, {intAttr("transB", transB)}, "qgemm", "com.microsoft")[0]);
        Model model = withInferredTypes(b);
        model.opsetImports.push_back({"com.microsoft", 1});
        auto exec = Executor::create(model, cpuExecutorOptions(threads));
        QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
        RtTensor ta = allocateTensor(DType::UInt8, {m, k});
        for (int64_t i = 0; i < ta.numel(); ++i) ta.as<uint8_t>()[i] = uint8_t(rng());
        auto out = (*exec)->run({ta});
        QVERIFY2(out, out.status().message().c_str());
        QCOMPARE((*out)[0].dims, (std::vector<int64_t>{m, n}));
        const float lo = int8Out ? -128.0f : 0.0f, hi = int8Out ? 127.0f : 255.0f;
        const float yz = int8Out ? float(int8_t(yZero)) : float(uint8_t(yZero));
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                int64_t acc = withC ? bias[size_t(j)] : 0;
                for (int64_t p = 0; p < k; ++p) {
                    const int64_t w = int8_t(bBytes[size_t(transB ? j * k + p : p * n + j)]) - bZero;
                    acc += (int64_t(ta.as<uint8_t>()[i * k + p]) - aZero) * w;
                }
                const float scale = aScale * bScales[size_t(j)] / yScale;
                const float v = float(int32_t(acc)) * scale;
                const int want = int(std::nearbyint(std::clamp(v, lo - yz, hi - yz)) + yz);
                const int got = int8Out ? int((*out)[0].as<int8_t>()[i * n + j]) : int((*out)[0].as<uint8_t>()[i * n + j]);
                if (got != want) QCOMPARE(got, want);
            }
    }

    void int8ConvPadsWithTheZeroPoint_data() {
        QTest::addColumn<bool>("unsignedWeights");
        QTest::addColumn<int>("weightZero");  // -1000: no zero point input; -2000: six zeros; -3000: six others
        QTest::addColumn<int>("dilation");
        QTest::addColumn<int>("size");  // of the image's height and width
        QTest::newRow("int8 weights") << false << -1000 << 1 << 5;
        // ONNX Runtime's quantize_dynamic: uint8 weights with their own zero point.
        QTest::newRow("uint8 weights, zero point 131") << true << 131 << 1 << 5;
        QTest::newRow("int8 weights, zero point -7, dilated") << false << -7 << 2 << 5;
        // int8-quantization's per-channel weights: one zero point per output channel, all 0.
        QTest::newRow("int8 weights, per-channel zero points of 0") << false << -2000 << 1 << 5;
        // quantize_dynamic's per_channel: uint8 weights, one zero point per output channel.
        QTest::newRow("uint8 weights, per-channel zero points") << true << -3000 << 1 << 5;
        QTest::newRow("int8 weights, per-channel zero points, dilated") << false << -3000 << 2 << 5;
        QTest::newRow("uint8 weights, per-channel zero points, 700 x 700") << true << -3000 << 1 << 700;
        // Columns over 1 MiB: im2col and the GEMM go a slice of output rows at a time.
        QTest::newRow("uint8 weights, 700 x 700, in slices") << true << 131 << 1 << 700;
        QTest::newRow("int8 weights, 700 x 700, dilated, in slices") << false << -7 << 2 << 700;
    }

    void int8ConvPadsWithTheZeroPoint() {
        // ConvInteger through oneDNN against a direct loop: padding must count as x == zero point.
        QFETCH(bool, unsignedWeights);
        QFETCH(int, weightZero);
        QFETCH(int, dilation);
        QFETCH(int, size);
        GraphBuilder b;
        ValueId x = b.input("x", DType::UInt8, Shape::ofSizes({2, 4, size, size}));
        std::string wb(6 * 2 * 3 * 3, '\0');
        std::mt19937 rng(5);
        for (char& c : wb) c = char(int(rng() % 255) - 127);
        const DType wType = unsignedWeights ? DType::UInt8 : DType::Int8;
        ValueId w = b.initializer(Tensor("w", wType, {6, 2, 3, 3}, makeBuffer(wb), 0, wb.size()));
        std::string zero(1, char(200));
        ValueId xz = b.initializer(Tensor("xz", DType::UInt8, {}, makeBuffer(zero), 0, 1));
        std::vector<ValueId> inputs = {x, w, xz};
        // -3000: zero points 100, 117, ... for uint8 weights, -9, 8, ... for int8 ones.
        auto channelZero = [&](int oc) { return unsignedWeights ? 100 + 17 * oc : -9 + 17 * oc; };
        if (weightZero == -2000)
            inputs.push_back(b.initializer(Tensor("wz", wType, {6}, makeBuffer(std::string(6, '\0')), 0, 6)));
        else if (weightZero == -3000) {
            std::string zeros;
            for (int oc = 0; oc < 6; ++oc) zeros += char(channelZero(oc));
            inputs.push_back(b.initializer(Tensor("wz", wType, {6}, makeBuffer(zeros), 0, 6)));
        }
        else if (weightZero != -1000)
            inputs.push_back(b.initializer(Tensor("wz", wType, {}, makeBuffer(std::string(1, char(weightZero))), 0, 1)));
        const int pad = dilation, outSize = (size - 1) / 2 + 1;  // a 5 x 5 image gives 3 x 3
        ValueId y = b.op("ConvInteger", inputs, "y",
                         {intsAttr("pads", {pad, pad, pad, pad}), intAttr("group", 2), intsAttr("strides", {2, 2}),
                          intsAttr("dilations", {dilation, dilation})},
                         "conv");
        b.output(y);
        Model m = withInferredTypes(b);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(exec);
        RtTensor in = allocateTensor(DType::UInt8, {2, 4, size, size});
        for (int64_t i = 0; i < in.numel(); ++i) in.as<uint8_t>()[i] = uint8_t(rng());
        auto out = (*exec)->run({in});
        QVERIFY2(out, out.status().message().c_str());
        QCOMPARE((*out)[0].dims, (std::vector<int64_t>{2, 6, outSize, outSize}));
        auto weightAt = [&](int i) {
            const int v = unsignedWeights ? int(uint8_t(wb[size_t(i)])) : int(int8_t(wb[size_t(i)]));
            if (weightZero == -3000) return v - channelZero(i / (2 * 3 * 3));
            return v - (weightZero <= -1000 ? 0 : weightZero);
        };
        for (int n = 0; n < 2; ++n)
            for (int oc = 0; oc < 6; ++oc)
                for (int oy = 0; oy < outSize; ++oy)
                    for (int ox = 0; ox < outSize; ++ox) {
                        int64_t exact = 0;
                        const int g = oc / 3;
                        for (int ic = 0; ic < 2; ++ic)
                            for (int ky = 0; ky < 3; ++ky)
                                for (int kx = 0; kx < 3; ++kx) {
                                    const int iy = oy * 2 + ky * dilation - pad, ix = ox * 2 + kx * dilation - pad;
                                    if (iy < 0 || iy >= size || ix < 0 || ix >= size) continue;
                                    const int xv = in.as<uint8_t>()[((n * 4 + g * 2 + ic) * size + iy) * size + ix];
                                    exact += int64_t(xv - 200) * weightAt(((oc * 2 + ic) * 3 + ky) * 3 + kx);
                                }
                        const int64_t got = (*out)[0].as<int32_t>()[((n * 6 + oc) * outSize + oy) * outSize + ox];
                        if (got != exact) QCOMPARE(got, exact);  // one QCOMPARE per element is slow at 700 x 700
                    }
    }

    void int8ConvPrimitiveMatchesIm2col_data() {
        QTest::addColumn<bool>("qlinear");
        QTest::addColumn<int>("group");
        QTest::addColumn<int>("stride");
        QTest::newRow("ConvInteger 3x3") << false << 1 << 1;
        QTest::newRow("ConvInteger, two groups, stride 2") << false << 2 << 2;
        QTest::newRow("QLinearConv 3x3, per-channel scales, bias") << true << 1 << 1;
    }

    void int8ConvPrimitiveMatchesIm2col() {
        // oneDNN's int8 convolution primitive (the route on CPUs with AMX), asked for here on
        // any CPU with VNNI: the same int32 sums as im2col + GEMM, padding counted as x == zero
        // point. Without VNNI its kernels saturate pairs of products, which is why it runs
        // only where there is AMX.
        if (!cpu::oneDnnInt8IsExact()) QSKIP("oneDNN's int8 kernels saturate without VNNI");
        QFETCH(bool, qlinear);
        QFETCH(int, group);
        QFETCH(int, stride);
        const int64_t c = 64, m = 64, size = 20;
        std::mt19937 rng(11);
        auto bytes = [&](size_t n, int lo, int span) {
            std::string s(n, '\0');
            for (char& v : s) v = char(lo + int(rng() % unsigned(span)));
            return s;
        };
        auto floats = [](const std::vector<float>& v) {
            return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
        };
        GraphBuilder b;
        ValueId x = b.input("x", DType::UInt8, Shape::ofSizes({1, c, size, size}));
        const std::string wb = bytes(size_t(m * (c / group) * 9), -127, 255);
        ValueId w = b.initializer(Tensor("w", DType::Int8, {m, c / group, 3, 3}, makeBuffer(wb), 0, wb.size()));
        ValueId xz = b.initializer(Tensor("xz", DType::UInt8, {}, makeBuffer(std::string(1, char(117))), 0, 1));
        const std::vector<Attribute> attrs{intsAttr("pads", {1, 1, 1, 1}), intAttr("group", group),
                                           intsAttr("strides", {stride, stride})};
        ValueId y;
        if (!qlinear) {
            y = b.op("ConvInteger", {x, w, xz}, "y", attrs, "conv");
        } else {
            std::vector<float> wScales(static_cast<size_t>(m));
            for (float& s : wScales) s = 0.001f * float(1 + rng() % 50);
            std::vector<int32_t> bias(static_cast<size_t>(m));
            for (int32_t& v : bias) v = int32_t(rng() % 20001) - 10000;
            const std::string biasBytes(reinterpret_cast<const char*>(bias.data()), bias.size() * 4);
            ValueId xs = b.initializer(Tensor("xs", DType::Float32, {}, makeBuffer(floats({0.02f})), 0, 4));
            ValueId ws = b.initializer(Tensor("ws", DType::Float32, {m}, makeBuffer(floats(wScales)), 0, size_t(m) * 4));
            ValueId wz = b.initializer(Tensor("wz", DType::Int8, {m}, makeBuffer(std::string(size_t(m), '\0')), 0, size_t(m)));
            ValueId ys = b.initializer(Tensor("ys", DType::Float32, {}, makeBuffer(floats({0.5f})), 0, 4));
            ValueId yz = b.initializer(Tensor("yz", DType::UInt8, {}, makeBuffer(std::string(1, char(100))), 0, 1));
            ValueId bb = b.initializer(Tensor("b", DType::Int32, {m}, makeBuffer(biasBytes), 0, biasBytes.size()));
            y = b.op("QLinearConv", {x, xs, xz, w, ws, wz, ys, yz, bb}, "y", attrs, "conv");
        }
        b.output(y);
        Model model = withInferredTypes(b);
        RtTensor in = allocateTensor(DType::UInt8, {1, c, size, size});
        for (int64_t i = 0; i < in.numel(); ++i) in.as<uint8_t>()[i] = uint8_t(rng());
        auto runOnce = [&](bool primitive) -> std::vector<RtTensor> {
            cpu::OneDnnInt8Conv::useEverywhere(primitive);
            auto exec = Executor::create(model, cpuExecutorOptions());
            auto out = exec ? (*exec)->run({in}) : Result<std::vector<RtTensor>>(exec.status());
            cpu::OneDnnInt8Conv::useEverywhere(false);
            return out ? std::move(*out) : std::vector<RtTensor>{};
        };
        const std::vector<RtTensor> im2col = runOnce(false);
        const uint64_t before = cpu::OneDnnInt8Conv::timesRun();
        const std::vector<RtTensor> primitive = runOnce(true);
        QVERIFY2(cpu::OneDnnInt8Conv::timesRun() > before, "the primitive did not run");
        QCOMPARE(im2col.size(), size_t(1));
        QCOMPARE(primitive.size(), size_t(1));
        QCOMPARE(primitive[0].dims, im2col[0].dims);
        QCOMPARE(primitive[0].dtype, qlinear ? DType::UInt8 : DType::Int32);
        QVERIFY(std::memcmp(primitive[0].data, im2col[0].data, im2col[0].bytes()) == 0);
    }

    // com.microsoft.QLinearConv with `channels_last` (the channels-last pass's, ONNX Runtime's
    // NHWC form) equals ONNX's QLinearConv on the NCHW image to the bit, on each of its paths:
    // pointwise and other group-1 layers through the GEMM (NHWC window rows, or im2col of an
    // NCHW input), depthwise ones in bands of rows (several bands, fewer than 16 channels,
    // per-channel weight zero points), and the NCHW fallback (groups, weight zero points that
    // differ per channel).
    void channelsLastQLinearConvEqualsNchw_data() {
        QTest::addColumn<int>("xType");  // 0 uint8, 1 int8
        QTest::addColumn<int>("wType");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("outChannels");
        QTest::addColumn<int>("group");
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("dilation");
        QTest::addColumn<std::vector<int64_t>>("pads");
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("weightZeros");  // 0: none, 1: one value, 2: one per channel
        QTest::addColumn<bool>("inputNchw");
        QTest::addColumn<int>("threads");
        QTest::addColumn<bool>("ties");  // scales of powers of two: halves that round to even, and saturation
        QTest::addColumn<bool>("int8Out");  // an int8 y_zero_point whatever X's type
        using P = std::vector<int64_t>;
        QTest::newRow("pointwise u8") << 0 << 1 << 24 << 40 << 1 << 1 << 1 << 1 << P{0, 0, 0, 0} << 9 << 0 << false << 1 << false << false;
        QTest::newRow("pointwise s8, w zero") << 1 << 0 << 16 << 8 << 1 << 1 << 1 << 1 << P{0, 0, 0, 0} << 7 << 1 << false << 2 << false << false;
        QTest::newRow("strided 1x1") << 0 << 1 << 16 << 8 << 1 << 1 << 2 << 1 << P{0, 0, 0, 0} << 11 << 0 << false << 2 << false << false;
        QTest::newRow("3x3 window rows") << 0 << 1 << 8 << 12 << 1 << 3 << 1 << 1 << P{1, 1, 1, 1} << 10 << 1 << false << 2 << false << false;
        QTest::newRow("stem from NCHW") << 0 << 1 << 3 << 16 << 1 << 3 << 2 << 1 << P{1, 1, 1, 1} << 17 << 0 << true << 2 << false << false;
        QTest::newRow("depthwise") << 0 << 0 << 32 << 32 << 32 << 3 << 1 << 1 << P{1, 1, 1, 1} << 12 << 2 << false << 2 << false << false;
        QTest::newRow("depthwise tail, dilated") << 1 << 1 << 20 << 20 << 20 << 3 << 2 << 2 << P{2, 0, 1, 2} << 13 << 0
                                                 << false << 1 << false << false;
        QTest::newRow("depthwise bands 5x5") << 1 << 1 << 16 << 16 << 16 << 5 << 1 << 1 << P{2, 2, 2, 2} << 61 << 1 << false
                                             << 2 << false << false;
        QTest::newRow("depthwise from NCHW") << 0 << 1 << 16 << 16 << 16 << 3 << 2 << 1 << P{1, 1, 1, 1} << 9 << 0 << true << 1 << false << false;
        // The direct AVX-512 depthwise kernel's cases: strides, channel tails, tiles of 8, 4 and 1
        // pixels, borders on every side.
        QTest::newRow("depthwise stride 2, channel tail") << 0 << 1 << 24 << 24 << 24 << 3 << 2 << 1 << P{1, 1, 1, 1} << 13
                                                         << 0 << false << 2 << false << false;
        QTest::newRow("depthwise 5x5 stride 2, int8") << 1 << 1 << 40 << 40 << 40 << 5 << 2 << 1 << P{2, 2, 2, 2} << 15 << 1
                                                      << false << 1 << false << false;
        QTest::newRow("depthwise asymmetric pads, 5 wide") << 0 << 0 << 20 << 20 << 20 << 3 << 1 << 1 << P{0, 1, 2, 0} << 3
                                                           << 2 << false << 2 << false << false;
        QTest::newRow("depthwise stride 2, 3 wide, int8 out") << 0 << 1 << 7 << 7 << 7 << 3 << 2 << 1 << P{1, 1, 1, 1} << 3
                                                              << 0 << false << 1 << false << true;
        // The VNNI kernel reading windows in place (uint8 X, int8 W of zero point 0, channels a
        // multiple of 4): padding, strides, dilation, blocks past 64 channels, a partial block.
        QTest::newRow("3x3 VNNI window, padded") << 0 << 1 << 12 << 20 << 1 << 3 << 1 << 1 << P{1, 1, 1, 1} << 9 << 0
                                                 << false << 2 << false << false;
        QTest::newRow("3x3 VNNI window, stride 2, 70 out, int8 out") << 0 << 1 << 8 << 70 << 1 << 3 << 2 << 1 << P{1, 0, 0, 1}
                                                                     << 11 << 0 << false << 2 << false << true;
        QTest::newRow("1x1 VNNI, W over 8 KiB") << 0 << 1 << 96 << 100 << 1 << 1 << 1 << 1 << P{0, 0, 0, 0} << 7 << 0 << false
                                                << 2 << false << false;
        QTest::newRow("5x5 VNNI window, dilated, ties") << 0 << 1 << 4 << 16 << 1 << 5 << 1 << 2 << P{2, 2, 2, 2} << 10 << 0
                                                        << false << 1 << true << false;
        QTest::newRow("pointwise ties") << 0 << 1 << 24 << 40 << 1 << 1 << 1 << 1 << P{0, 0, 0, 0} << 9 << 0 << false << 1
                                        << true << false;
        QTest::newRow("depthwise ties") << 1 << 1 << 32 << 32 << 32 << 3 << 1 << 1 << P{1, 1, 1, 1} << 12 << 0 << false << 2
                                        << true << false;
        QTest::newRow("stem slices") << 0 << 1 << 3 << 64 << 1 << 3 << 1 << 1 << P{1, 1, 1, 1} << 61 << 0 << true << 2 << false << false;
        QTest::newRow("pointwise slices") << 0 << 1 << 24 << 40 << 1 << 1 << 1 << 1 << P{0, 0, 0, 0} << 61 << 0 << false << 2
                                          << false << false;
        QTest::newRow("pointwise u8 in, int8 out") << 0 << 1 << 20 << 36 << 1 << 1 << 1 << 1 << P{0, 0, 0, 0} << 7 << 0 << false
                                                   << 2 << true << true;
        QTest::newRow("grouped") << 0 << 1 << 8 << 6 << 2 << 3 << 1 << 1 << P{1, 1, 1, 1} << 8 << 0 << false << 2 << false << false;
        QTest::newRow("w zeros per channel") << 0 << 0 << 8 << 6 << 1 << 1 << 1 << 1 << P{0, 0, 0, 0} << 8 << 2 << false << 1 << false << false;
        QTest::newRow("w zeros per channel, NCHW") << 0 << 0 << 3 << 6 << 1 << 3 << 1 << 1 << P{1, 1, 1, 1} << 8 << 2 << true
                                                  << 2 << false << false;
    }

    void channelsLastQLinearConvEqualsNchw() {
        QFETCH(int, xType);
        QFETCH(int, wType);
        QFETCH(int, channels);
        QFETCH(int, outChannels);
        QFETCH(int, group);
        QFETCH(int, kernel);
        QFETCH(int, stride);
        QFETCH(int, dilation);
        QFETCH(std::vector<int64_t>, pads);
        QFETCH(int, size);
        QFETCH(int, weightZeros);
        QFETCH(bool, inputNchw);
        QFETCH(int, threads);
        QFETCH(bool, ties);
        QFETCH(bool, int8Out);
        const DType xt = xType ? DType::Int8 : DType::UInt8, wt = wType ? DType::Int8 : DType::UInt8;
        const int64_t n = 2, c = channels, m = outChannels, h = size, w = size + 3;
        std::mt19937 rng(uint32_t(c * 131 + m * 7 + kernel));
        std::string weights(size_t(m * (c / group) * kernel * kernel), '\0');
        for (char& v : weights) v = char(rng());
        std::string wZeros;
        for (int64_t oc = 0; oc < (weightZeros == 2 ? m : 1); ++oc) wZeros += char(weightZeros ? int(rng() % 9) - 4 + (wt == DType::UInt8 ? 128 : 0) : (wt == DType::UInt8 ? 128 : 0));
        std::vector<int32_t> bias(static_cast<size_t>(m));
        for (int32_t& v : bias) v = int32_t(rng() % 4001) - 2000;
        std::vector<float> wScales(static_cast<size_t>(m));
        for (float& v : wScales) v = ties ? 0.25f : 0.002f + 0.001f * float(rng() % 7);
        const DType yt = int8Out ? DType::Int8 : xt;
        const char xZero = char(xt == DType::UInt8 ? 117 : -9), yZero = char(yt == DType::UInt8 ? 131 : 4);
        // One graph: the NCHW QLinearConv, or com.microsoft's on NHWC (or NCHW `input_layout`) input.
        auto build = [&](bool nhwc) {
            GraphBuilder b;
            const std::vector<int64_t> inDims = nhwc && !inputNchw ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w};
            ValueId x = b.input("x", xt, Shape::ofSizes(inDims));
            auto bytes = [&](const char* name, DType t, std::vector<int64_t> dims, const void* p, size_t count) {
                return b.initializer(Tensor(name, t, std::move(dims), makeBuffer(std::string(static_cast<const char*>(p), count)), 0, count));
            };
            const float xs = ties ? 0.5f : 0.03f, ys = ties ? 4.0f : 0.05f;  // ties: 1/32 per unit
            std::vector<int64_t> wzDims;
            if (weightZeros == 2) wzDims = {m};
            std::vector<ValueId> in{x, bytes("xs", DType::Float32, {}, &xs, 4), bytes("xz", xt, {}, &xZero, 1),
                                    bytes("w", wt, {m, c / group, kernel, kernel}, weights.data(), weights.size()),
                                    bytes("ws", DType::Float32, {m}, wScales.data(), size_t(m) * 4),
                                    bytes("wz", wt, wzDims, wZeros.data(), wZeros.size()), bytes("ys", DType::Float32, {}, &ys, 4),
                                    bytes("yz", yt, {}, &yZero, 1), bytes("b", DType::Int32, {m}, bias.data(), size_t(m) * 4)};
            std::vector<Attribute> attrs{intsAttr("pads", pads), intAttr("group", group), intsAttr("strides", {stride, stride}),
                                         intsAttr("dilations", {dilation, dilation})};
            if (nhwc) attrs.push_back(intAttr("channels_last", 1));
            if (nhwc && inputNchw) attrs.push_back(stringAttr("input_layout", "NCHW"));
            b.output(b.node("QLinearConv", in, {"y"}, attrs, "conv", nhwc ? "com.microsoft" : "")[0]);
            Model model = b.buildModel(17);
            model.opsetImports.push_back({"com.microsoft", 1});
            return model;
        };
        RtTensor x = allocateTensor(xt, {n, c, h, w});
        for (int64_t i = 0; i < x.numel(); ++i) x.as<uint8_t>()[i] = uint8_t(rng());
        RtTensor xNhwc = allocateTensor(xt, {n, h, w, c});
        for (int64_t i = 0; i < n; ++i)
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t p = 0; p < h * w; ++p) xNhwc.as<uint8_t>()[(i * h * w + p) * c + ch] = x.as<uint8_t>()[(i * c + ch) * h * w + p];
        auto nchwExec = Executor::create(build(false), cpuExecutorOptions(threads));
        QVERIFY2(nchwExec, nchwExec ? "" : nchwExec.status().message().c_str());
        auto nhwcExec = Executor::create(build(true), cpuExecutorOptions(threads));
        QVERIFY2(nhwcExec, nhwcExec ? "" : nhwcExec.status().message().c_str());
        auto want = (*nchwExec)->run({x});
        QVERIFY2(want, want ? "" : want.status().message().c_str());
        auto got = (*nhwcExec)->run({inputNchw ? x : xNhwc});
        QVERIFY2(got, got ? "" : got.status().message().c_str());
        const RtTensor &a = (*want)[0], &bt = (*got)[0];
        const int64_t oh = a.dims[2], ow = a.dims[3];
        QCOMPARE(bt.dims, (std::vector<int64_t>{n, oh, ow, m}));
        QCOMPARE(bt.dtype, a.dtype);
        int differing = 0;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t oc = 0; oc < m; ++oc)
                for (int64_t p = 0; p < oh * ow; ++p)
                    differing += a.as<uint8_t>()[(i * m + oc) * oh * ow + p] != bt.as<uint8_t>()[(i * oh * ow + p) * m + oc];
        QCOMPARE(differing, 0);
        // The outputs are not all one value (the scales leave room for the data to show).
        std::set<uint8_t> values(a.as<uint8_t>(), a.as<uint8_t>() + a.numel());
        QVERIFY(values.size() > 10);
        if (ties) {  // both ends saturated (as bytes: 0 and 255 for uint8, 128 and 127 for int8)
            QVERIFY(values.count(yt == DType::UInt8 ? 0 : 128));
            QVERIFY(values.count(yt == DType::UInt8 ? 255 : 127));
        }
    }

    // A quantized CNN as ONNX Runtime's quantizer writes it (QLinearConv stem, a MaxPool on the
    // bytes, depthwise and pointwise QLinearConv, a QLinearAdd residual, the pooled Flatten)
    // runs channels-last whole: no Transpose (the stem reads the image as it is, the Flatten
    // reads [N, 1, 1, C] as [N, C, 1, 1]), and the same bytes as in NCHW.
    void quantizedChainRunsChannelsLast() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::UInt8, Shape::ofSizes({2, 3, 20, 20}));
        std::mt19937 rng(5);
        int made = 0;
        auto scalar = [&](DType t, float v) {
            const std::string name = "p" + std::to_string(made++);
            if (t == DType::Float32) return b.initializer(floatTensor(name, {}, {v}));
            return b.initializer(Tensor(name, t, {}, makeBuffer(std::string(1, char(int(v)))), 0, 1));
        };
        auto conv = [&](ValueId in, int64_t c, int64_t m, int64_t group, int64_t k, int64_t stride, float xScale, int xZero,
                        float yScale, int yZero) {
            std::string w(size_t(m * (c / group) * k * k), '\0');
            for (char& v : w) v = char(int(rng() % 255) - 127);
            std::vector<int32_t> bias(static_cast<size_t>(m));
            for (int32_t& v : bias) v = int32_t(rng() % 801) - 400;
            std::string biasBytes(size_t(m) * 4, '\0');
            std::memcpy(biasBytes.data(), bias.data(), biasBytes.size());
            const std::string name = "w" + std::to_string(made++);
            ValueId wt = b.initializer(Tensor(name, DType::Int8, {m, c / group, k, k}, makeBuffer(w), 0, w.size()));
            ValueId bt = b.initializer(Tensor(name + "_b", DType::Int32, {m}, makeBuffer(biasBytes), 0, biasBytes.size()));
            return b.op("QLinearConv",
                        {in, scalar(DType::Float32, xScale), scalar(DType::UInt8, float(xZero)), wt, scalar(DType::Float32, 0.01f),
                         scalar(DType::Int8, 0), scalar(DType::Float32, yScale), scalar(DType::UInt8, float(yZero)), bt},
                        name + "_y",
                        {intsAttr("pads", {k / 2, k / 2, k / 2, k / 2}), intAttr("group", int(group)),
                         intsAttr("strides", {stride, stride})});
        };
        ValueId stem = conv(x, 3, 16, 1, 3, 1, 0.02f, 120, 0.05f, 100);
        ValueId pooled = b.op("MaxPool", {stem}, "pooled",
                              {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}), intsAttr("pads", {1, 1, 1, 1})});
        ValueId dw = conv(pooled, 16, 16, 16, 3, 1, 0.05f, 100, 0.04f, 110);
        ValueId pw = conv(dw, 16, 16, 1, 1, 1, 0.04f, 110, 0.05f, 100);
        ValueId sum = b.node("QLinearAdd",
                             {pw, scalar(DType::Float32, 0.05f), scalar(DType::UInt8, 100), pooled, scalar(DType::Float32, 0.05f),
                              scalar(DType::UInt8, 100), scalar(DType::Float32, 0.07f), scalar(DType::UInt8, 90)},
                             {"sum"}, {}, "residual", "com.microsoft")[0];
        ValueId mean = b.node("QLinearGlobalAveragePool",
                              {sum, scalar(DType::Float32, 0.07f), scalar(DType::UInt8, 90), scalar(DType::Float32, 0.03f),
                               scalar(DType::UInt8, 80)},
                              {"mean"}, {intAttr("channels_last", 0)}, "pool", "com.microsoft")[0];
        b.output(b.op("Flatten", {mean}, "flat", {intAttr("axis", 1)}));
        Model built = b.buildModel(17);
        built.opsetImports.push_back({"com.microsoft", 1});  // before the round trip infers the types
        auto bytes = exportModelToBytes(built);
        QVERIFY(bytes);
        auto imported = importModelFromBytes(bytes->data(), bytes->size(), "chain.onnx");
        QVERIFY(imported);
        const Model& m = *imported;
        const CompileResult nhwc = compileWith(m, {"channels-last"});
        const Graph& g = *nhwc.model.graph;
        QCOMPARE(count(g, "Transpose"), 0);
        for (NodeId id : g.order()) {
            const Node& node = g.node(id);
            if (node.opType == "QLinearConv" || node.opType == "QLinearGlobalAveragePool" || node.opType == "MaxPool")
                QVERIFY2(attr(node, "channels_last") && attr(node, "channels_last")->i == 1, node.name.c_str());
        }
        QCOMPARE(maxRelativeError(m, nhwc.model), 0.0);
        auto exec = Executor::create(nhwc.model, cpuExecutorOptions(2));
        QVERIFY(exec);
        RtTensor in = allocateTensor(DType::UInt8, {2, 3, 20, 20});
        for (int64_t i = 0; i < in.numel(); ++i) in.as<uint8_t>()[i] = uint8_t(rng());
        auto out = (*exec)->run({in});
        QVERIFY(out);
        const RtTensor& y = (*out)[0];
        QCOMPARE(y.dims, (std::vector<int64_t>{2, 16}));
        std::set<uint8_t> values(y.as<uint8_t>(), y.as<uint8_t>() + y.numel());
        QVERIFY(values.size() > 4);  // not saturated to one value
    }

    void qlinearConvRequantizesExactly_data() {
        QTest::addColumn<bool>("signedOutput");
        QTest::addColumn<float>("yScale");
        QTest::newRow("uint8 out") << false << 1.0f;
        QTest::newRow("int8 out") << true << 1.0f;
        QTest::newRow("NaN scale gives 0") << false << std::numeric_limits<float>::quiet_NaN();
    }

    void qlinearConvRequantizesExactly() {
        // QLinearConv's requantization against its definition, round((acc + B) x_scale w_scale
        // / y_scale) half to even + y_zero, saturated: scales of powers of two, so the halves
        // are exact ties; a row of 37 so vector tails are checked; sums past both limits.
        QFETCH(bool, signedOutput);
        QFETCH(float, yScale);
        const int64_t width = 37;
        const std::vector<int8_t> weights{1, -4, 3};
        const std::vector<float> wScales{1.0f, 1.0f, 4.0f};
        const std::vector<int32_t> bias{1, -2, 5};
        const int xZero = 10, yZero = signedOutput ? -3 : 128;
        auto raw = [](const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); };
        const float xScale = 0.5f;
        const int8_t yz8 = int8_t(yZero);
        const uint8_t yzu = uint8_t(yZero), xz = uint8_t(xZero);
        GraphBuilder b;
        ValueId x = b.input("x", DType::UInt8, Shape::ofSizes({1, 1, 1, width}));
        const std::string zeros(3, '\0');
        ValueId wz = b.initializer(Tensor("wz", DType::Int8, {3}, makeBuffer(zeros), 0, 3));
        ValueId xs = b.initializer(Tensor("xs", DType::Float32, {}, makeBuffer(raw(&xScale, 4)), 0, 4));
        ValueId xzero = b.initializer(Tensor("xz", DType::UInt8, {}, makeBuffer(raw(&xz, 1)), 0, 1));
        ValueId w = b.initializer(Tensor("w", DType::Int8, {3, 1, 1, 1}, makeBuffer(raw(weights.data(), 3)), 0, 3));
        ValueId ws = b.initializer(Tensor("ws", DType::Float32, {3}, makeBuffer(raw(wScales.data(), 12)), 0, 12));
        ValueId ys = b.initializer(Tensor("ys", DType::Float32, {}, makeBuffer(raw(&yScale, 4)), 0, 4));
        ValueId yzero = signedOutput ? b.initializer(Tensor("yz", DType::Int8, {}, makeBuffer(raw(&yz8, 1)), 0, 1))
                                   : b.initializer(Tensor("yz", DType::UInt8, {}, makeBuffer(raw(&yzu, 1)), 0, 1));
        ValueId bb = b.initializer(Tensor("b", DType::Int32, {3}, makeBuffer(raw(bias.data(), 12)), 0, 12));
        b.output(b.op("QLinearConv", {x, xs, xzero, w, ws, wz, ys, yzero, bb}, "y", {}, "conv"));
        Model conv = withInferredTypes(b);
        RtTensor in = allocateTensor(DType::UInt8, {1, 1, 1, width});
        for (int64_t i = 0; i < width; ++i) in.as<uint8_t>()[i] = uint8_t(i * 7 % 256);
        auto exec = Executor::create(conv, cpuExecutorOptions());
        QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
        auto out = (*exec)->run({in});
        QVERIFY2(out, out ? "" : out.status().message().c_str());
        const RtTensor& y = (*out)[0];
        QCOMPARE(y.dtype, signedOutput ? DType::Int8 : DType::UInt8);
        QCOMPARE(y.numel(), 3 * width);
        const double lo = signedOutput ? -128 : 0, hi = signedOutput ? 127 : 255;
        int ties = 0, clamped = 0;
        for (int64_t c = 0; c < 3; ++c)
            for (int64_t i = 0; i < width; ++i) {
                const int64_t acc = (int64_t(in.as<uint8_t>()[i]) - xZero) * weights[size_t(c)];
                const double v = double(acc + bias[size_t(c)]) * xScale * wScales[size_t(c)] / yScale;
                double expected = std::isnan(v) ? 0.0 : std::clamp(std::nearbyint(v) + yZero, lo, hi);
                ties += !std::isnan(v) && v - std::floor(v) == 0.5;
                clamped += !std::isnan(v) && (std::nearbyint(v) + yZero < lo || std::nearbyint(v) + yZero > hi);
                const double got = signedOutput ? y.as<int8_t>()[c * width + i] : y.as<uint8_t>()[c * width + i];
                if (got != expected)
                    QFAIL(qPrintable(QString("channel %1, element %2: %3, expected %4").arg(c).arg(i).arg(got).arg(expected)));
            }
        if (!std::isnan(yScale)) {
            QVERIFY(ties > 10);  // the data reaches the cases it is meant to
            QVERIFY(clamped > 3);
        }
    }

    void accuracyAndSensitivityAreMeasured() {
        Model m = smallCnn();
        Int8Options o;
        auto data = generated(m, 4);
        o.calibration = data;
        o.ranges = std::make_shared<ActivationRanges>();
        auto folded = quantize(m, o, true);
        auto same = compareOutputs(m, m, *data);
        QVERIFY(same);
        QCOMPARE(same->maxAbs, 0.0);
        QCOMPARE(same->cosine, 1.0);
        QCOMPARE(same->top1Agree, same->top1Rows);
        QCOMPARE(same->top1Rows, 4);  // y, the first output, is [1, 5] per sample
        auto e = compareOutputs(m, folded.model, *data);
        QVERIFY(e);
        QVERIFY(e->maxAbs > 0);
        QVERIFY(e->cosine > 0.99 && e->cosine < 1.0);
        QCOMPARE(e->samples, 4);
        auto table = layerSensitivity(m, o, *data);
        QVERIFY2(table, table.status().message().c_str());
        QCOMPARE(table->size(), size_t(4));
        for (size_t i = 1; i < table->size(); ++i) QVERIFY((*table)[i - 1].error.cosine <= (*table)[i].error.cosine);
        for (const LayerSensitivity& l : *table) QVERIFY(l.error.maxAbs > 0);
    }

    void golden() {
        Model m = smallCnn();
        Int8Options o;
        o.calibration = generated(m, 2);
        o.perChannel = true;
        auto r = quantize(m, o, true);
        checkGolden(*r.model.graph, QStringLiteral("int8_folded"));
    }
};

QTEST_APPLESS_MAIN(TestQuantization)
#include "tst_quantization.moc"
