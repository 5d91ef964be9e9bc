// Tensor statistics (min, max, mean, std, sparsity, histogram) and ONNX op documentation
// from the schema registry: what the GUI's properties show.
#include <QTest>

#include <cmath>

#include "compiler/runtime/tensor_stats.h"
#include "core/op_docs.h"

using namespace fsc;

namespace {
RtTensor floats(std::vector<float> values) {
    RtTensor t = allocateTensor(DType::Float32, {int64_t(values.size())});
    for (size_t i = 0; i < values.size(); ++i) t.as<float>()[i] = values[i];
    return t;
}
}  // namespace

class TestTensorStats : public QObject {
    Q_OBJECT
private slots:
    void momentsSparsityAndHistogram() {
        const TensorStats s = computeTensorStats(floats({0, 0, 1, 2, 3, 4, 5, 7}), 7);
        QCOMPARE(s.count, int64_t(8));
        QCOMPARE(s.min, 0.0);
        QCOMPARE(s.max, 7.0);
        QCOMPARE(s.mean, 22.0 / 8);
        double var = 0;
        for (double v : {0, 0, 1, 2, 3, 4, 5, 7}) var += (v - 2.75) * (v - 2.75);
        QVERIFY(std::abs(s.stddev - std::sqrt(var / 8)) < 1e-12);
        QCOMPARE(s.sparsity, 0.25);
        // Seven bins of width 1 over [0, 7]: the maximum lands in the last bin.
        QCOMPARE(s.histogram, (std::vector<int64_t>{2, 1, 1, 1, 1, 1, 1}));
    }
    void nonFiniteValuesAreCountedApart() {
        const TensorStats s = computeTensorStats(floats({1, NAN, INFINITY, 3}), 4);
        QCOMPARE(s.nonFinite, int64_t(2));
        QCOMPARE(s.min, 1.0);
        QCOMPARE(s.max, 3.0);
        QCOMPARE(s.mean, 2.0);
        int64_t binned = 0;
        for (int64_t b : s.histogram) binned += b;
        QCOMPARE(binned, int64_t(2));
    }
    void constantAndEmptyTensors() {
        const TensorStats same = computeTensorStats(floats({2, 2, 2}), 16);
        QCOMPARE(same.histogram, (std::vector<int64_t>{3}));  // one bin when min == max
        QCOMPARE(same.stddev, 0.0);
        const TensorStats none = computeTensorStats(floats({}), 16);
        QCOMPARE(none.count, int64_t(0));
        QVERIFY(none.histogram.empty());
        RtTensor ints = allocateTensor(DType::Int64, {3});
        ints.as<int64_t>()[0] = -5, ints.as<int64_t>()[1] = 0, ints.as<int64_t>()[2] = 5;
        QCOMPARE(computeTensorStats(ints).mean, 0.0);
    }
    void opDocsFollowTheOpset() {
        const auto conv = findOpDoc("", "Conv", 17);
        QVERIFY(conv);
        QCOMPARE(conv->sinceVersion, 11);
        QVERIFY(QString::fromStdString(conv->text).contains(QStringLiteral("convolution operator")));
        QCOMPARE(conv->inputs.size(), size_t(3));
        QCOMPARE(conv->inputs[1].name, std::string("W"));
        bool strides = false;
        for (const auto& a : conv->attributes) strides = strides || (a.name == "strides" && a.type == "INTS");
        QVERIFY(strides);
        // The version in force at the model's opset, not the newest.
        QCOMPARE(findOpDoc("ai.onnx", "Softmax", 11)->sinceVersion, 11);
        QCOMPARE(findOpDoc("", "Softmax", 13)->sinceVersion, 13);
        QVERIFY(!findOpDoc("", "Gelu", 17));  // Gelu arrived in opset 20
        QVERIFY(!findOpDoc("com.example", "Frobnicate", 1));
    }
};

QTEST_GUILESS_MAIN(TestTensorStats)
#include "tst_tensor_stats.moc"
