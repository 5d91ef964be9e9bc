// com.microsoft.MatMulNBits against the dequantization its documentation defines, written
// out here: value k of column n is (code - zero point) x scale, codes packed low bits first,
// zero points packed alike (default 2^(bits - 1)) or given as floats. Each case runs with the
// weights dequantized once (inside the copy budget) and with a budget of nothing, where one
// or a few rows dequantize column by column and more rows a stripe at a time. Checked against
// ONNX Runtime 1.31 too (docs/benchmarks.md).
#include <QTest>

#include <random>

#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/pipelines.h"
#include "contrib_test_support.h"
#include "pass_test_support.h"
#include "core/buffer.h"
#include "core/graph_builder.h"

using namespace fsc;
using namespace fsc::test;

namespace {

Tensor bytesTensor(const std::string& name, std::vector<int64_t> dims, const std::vector<uint8_t>& bytes) {
    return Tensor(name, DType::UInt8, std::move(dims), makeBuffer(std::string(bytes.begin(), bytes.end())), 0, bytes.size());
}

struct Quantized {
    std::vector<uint8_t> codes, packedZeros;
    std::vector<float> scales, floatZeros;
    RtTensor dequantized;  // [K, N]
};

// Random codes, scales and zero points, packed as the op reads them, and the float weight
// they stand for.
Quantized randomWeights(int64_t k, int64_t n, int bits, int64_t blockSize, const QString& zeros, uint32_t seed) {
    std::mt19937 rng(seed);
    const int64_t blocks = (k + blockSize - 1) / blockSize, blob = blockSize * bits / 8, zeroBytes = (blocks * bits + 7) / 8;
    Quantized q;
    q.codes.assign(size_t(n * blocks * blob), 0);
    q.packedZeros.assign(size_t(n * zeroBytes), 0);
    q.scales.resize(size_t(n * blocks));
    q.floatZeros.resize(size_t(n * blocks));
    q.dequantized = allocateTensor(DType::Float32, {k, n});
    std::uniform_int_distribution<int> code(0, (1 << bits) - 1);
    std::uniform_real_distribution<float> scale(0.01f, 0.1f);
    for (int64_t c = 0; c < n; ++c)
        for (int64_t b = 0; b < blocks; ++b) {
            const size_t block = size_t(c * blocks + b);
            q.scales[block] = scale(rng);
            float zero = float(1 << (bits - 1));
            if (zeros == "packed") {
                const int z = code(rng);
                q.packedZeros[size_t(c * zeroBytes + b * bits / 8)] |= uint8_t(z << (b * bits % 8));
                zero = float(z);
            } else if (zeros == "float") {
                zero = q.floatZeros[block] = float(code(rng)) + 0.5f;
            }
            for (int64_t i = 0; i < blockSize; ++i) {
                const int v = code(rng);
                const int64_t bit = i * bits;
                q.codes[size_t(block * size_t(blob) + size_t(bit / 8))] |= uint8_t(v << (bit % 8));
                if (b * blockSize + i < k) q.dequantized.as<float>()[(b * blockSize + i) * n + c] = (float(v) - zero) * q.scales[block];
            }
        }
    return q;
}

}  // namespace

class TestMatMulNBits : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { cpu::setRelaidCopyBudgetBytes(cpu::kDefaultCopyBudgetBytes); }

    void dequantizesAsDocumented_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("bits");
        QTest::addColumn<int>("blockSize");
        QTest::addColumn<QString>("zeros");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<bool>("budget");
        for (bool budget : {true, false}) {
            const std::string suffix = budget ? ", dequantized once" : ", in every call";
            QTest::newRow(("one row, packed zero points" + suffix).c_str()) << 1 << 96 << 4 << 32 << "packed" << false << budget;
            QTest::newRow(("20 rows, K not a whole block" + suffix).c_str()) << 20 << 100 << 4 << 32 << "packed" << true << budget;
            QTest::newRow(("3 rows, default zero points" + suffix).c_str()) << 3 << 128 << 4 << 64 << "none" << true << budget;
            QTest::newRow(("7 rows, float zero points" + suffix).c_str()) << 7 << 64 << 4 << 16 << "float" << false << budget;
            QTest::newRow(("6 rows, 8 bits" + suffix).c_str()) << 6 << 64 << 8 << 16 << "packed" << false << budget;
            QTest::newRow(("6 rows, 2 bits" + suffix).c_str()) << 6 << 64 << 2 << 16 << "packed" << false << budget;
        }
    }
    void dequantizesAsDocumented() {
        QFETCH(int, rows);
        QFETCH(int, k);
        QFETCH(int, bits);
        QFETCH(int, blockSize);
        QFETCH(QString, zeros);
        QFETCH(bool, bias);
        QFETCH(bool, budget);
        if (!budget) cpu::setRelaidCopyBudgetBytes(0);
        const int64_t n = 300;  // more than one stripe's 64 columns, not a multiple
        const Quantized q = randomWeights(k, n, bits, blockSize, zeros, uint32_t(k * bits + rows));
        const int64_t blocks = (k + blockSize - 1) / blockSize;
        const RtTensor a = randomTensor({2, int64_t(rows), int64_t(k)}, 7), b = randomTensor({n}, 8);

        GraphBuilder g;
        std::vector<ValueId> inputs = {g.input("a", DType::Float32, Shape::ofSizes(a.dims)),
                                       g.initializer(bytesTensor("codes", {n, blocks, int64_t(blockSize) * bits / 8}, q.codes)),
                                       g.initializer(floatTensor("scales", {n * blocks}, q.scales))};
        if (zeros == "packed") inputs.push_back(g.initializer(bytesTensor("zeros", {int64_t(q.packedZeros.size())}, q.packedZeros)));
        if (zeros == "float") inputs.push_back(g.initializer(floatTensor("zeros", {n * blocks}, q.floatZeros)));
        if (bias) {
            inputs.resize(5);
            inputs.push_back(g.initializer(constant("bias", b)));
        }
        g.output(g.node("MatMulNBits", inputs, {"y"},
                        {intAttr("K", k), intAttr("N", n), intAttr("bits", bits), intAttr("block_size", blockSize)}, "q4", kMs)[0]);
        const Model m = imported(g);
        QCOMPARE(m.graph->value(m.graph->outputs[0]).type.shape, Shape::ofSizes({2, int64_t(rows), n}));
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY(bool(exec));
        auto outputs = (*exec)->run({a});
        QVERIFY(bool(outputs));
        // The float copy lives with the kernel; a few rows of 4-bit codes in blocks of 32 or
        // more are read as codes on AVX-512, with no copy.
        const bool fromCodes = 2 * rows <= 4 && bits == 4 && blockSize >= 32 && __builtin_cpu_supports("avx512f");
        QCOMPARE(cpu::relaidBytesKept() > 0, budget && !fromCodes);
        const RtTensor got = (*outputs)[0];

        RtTensor want = allocateTensor(DType::Float32, {2, int64_t(rows), n});
        for (int64_t r = 0; r < 2 * rows; ++r)
            for (int64_t c = 0; c < n; ++c) {
                double sum = bias ? b.as<float>()[c] : 0.0;
                for (int64_t i = 0; i < k; ++i) sum += double(a.as<float>()[r * k + i]) * q.dequantized.as<float>()[i * n + c];
                want.as<float>()[r * n + c] = float(sum);
            }
        expectClose(got, want, 2e-5);
    }

    void aBiasAddAfterItBecomesItsBias() {
        const int64_t k = 64, n = 40;
        const Quantized q = randomWeights(k, n, 4, 32, "packed", 3);
        const RtTensor a = randomTensor({3, k}, 4), bias = randomTensor({1, n}, 5);
        GraphBuilder g;
        ValueId y = g.node("MatMulNBits",
                           {g.input("a", DType::Float32, Shape::ofSizes({3, k})), g.initializer(bytesTensor("codes", {n, 2, 16}, q.codes)),
                            g.initializer(floatTensor("scales", {n * 2}, q.scales)),
                            g.initializer(bytesTensor("zeros", {int64_t(q.packedZeros.size())}, q.packedZeros))},
                           {"p"}, {intAttr("K", k), intAttr("N", n), intAttr("block_size", 32)}, "q4", kMs)[0];
        g.output(g.op("Add", {y, g.initializer(constant("bias", bias))}, "biased"));
        const Model m = imported(g);
        auto o2 = compileWith(m, *pipelinePasses("O2"));
        QCOMPARE(int(o2.model.graph->order().size()), 1);
        expectClose(runModel(o2.model, {a})[0], runModel(m, {a})[0], 1e-6);
    }

    void refusesWhatItCannotRead() {
        GraphBuilder g;
        ValueId a = g.input("a", DType::Float32, Shape::ofSizes({1, 32}));
        g.output(g.node("MatMulNBits",
                        {a, g.initializer(bytesTensor("codes", {4, 1, 16}, std::vector<uint8_t>(64))),
                         g.initializer(floatTensor("scales", {4}, {1, 1, 1, 1}))},
                        {"y"}, {intAttr("K", 32), intAttr("N", 4), intAttr("bits", 3), intAttr("block_size", 32)}, "odd_bits", kMs)[0]);
        auto exec = Executor::create(imported(g), cpuExecutorOptions());
        QVERIFY(!exec);
        const std::string message = exec.status().message();
        QVERIFY2(message.find("odd_bits") != std::string::npos && message.find("bits = 3") != std::string::npos, message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestMatMulNBits)
#include "tst_matmul_nbits.moc"
