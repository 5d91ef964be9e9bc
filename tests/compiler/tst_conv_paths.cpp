// Every fast convolution path (oneDNN with its layout reorders, pointwise as one GEMM on
// the NCHW image, the direct depthwise loops for 3x3 stride 1 and 2 and for other
// windows) against a naive loop written from ONNX's definition, on odd sizes, groups,
// dilations, asymmetric pads and with and without bias; each model runs twice (cached
// primitives and reordered weights) and then with another input size. The same cases run
// again in channels-last form (FusedConv with `channels_last`), once with the weight-copy
// budget spent so the weights are re-laid on every call. Also the one-row GEMM (gemv) that
// a batch-1 Linear takes, against the same product in double.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/target.h"
#include "compiler/backends/cpu/conv_onednn.h"
#include "compiler/backends/cpu/conv_winograd.h"
#include "compiler/backends/cpu/gemm.h"
#include "compiler/backends/cpu/relaid_constant.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/thread_pool.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"

using namespace fsc;

namespace {

struct Case {
    const char* name;
    int64_t c, m, group, kh, kw, sh, sw, dh, dw;
    std::vector<int64_t> pads;  // top, left, bottom, right
    bool bias;
};

std::vector<float> randomValues(size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

// y[n, m, oy, ox] straight from the definition, in double.
std::vector<float> naiveConv(const Case& k, const std::vector<float>& x, int64_t n, int64_t h, int64_t w,
                             const std::vector<float>& wt, const std::vector<float>& b, int64_t oh, int64_t ow) {
    std::vector<float> y(size_t(n * k.m * oh * ow));
    const int64_t cg = k.c / k.group, mg = k.m / k.group;
    for (int64_t img = 0; img < n; ++img)
        for (int64_t oc = 0; oc < k.m; ++oc)
            for (int64_t oy = 0; oy < oh; ++oy)
                for (int64_t ox = 0; ox < ow; ++ox) {
                    double acc = k.bias ? b[size_t(oc)] : 0.0;
                    const int64_t g = oc / mg;
                    for (int64_t ic = 0; ic < cg; ++ic)
                        for (int64_t ky = 0; ky < k.kh; ++ky)
                            for (int64_t kx = 0; kx < k.kw; ++kx) {
                                const int64_t iy = oy * k.sh + ky * k.dh - k.pads[0];
                                const int64_t ix = ox * k.sw + kx * k.dw - k.pads[1];
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                acc += double(x[size_t(((img * k.c + g * cg + ic) * h + iy) * w + ix)]) *
                                       wt[size_t(((oc * cg + ic) * k.kh + ky) * k.kw + kx)];
                            }
                    y[size_t(((img * k.m + oc) * oh + oy) * ow + ox)] = float(acc);
                }
    return y;
}

}  // namespace

class TestConvPaths : public QObject {
    Q_OBJECT
private slots:
    void fastPathsMatchTheDefinition_data() {
        QTest::addColumn<int>("index");
        static const std::vector<Case> cases = cases_();
        for (size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << int(i);
    }
    void fastPathsMatchTheDefinition() {
        QFETCH(int, index);
        const Case k = cases_()[size_t(index)];
        std::mt19937 rng(uint32_t(index) + 1);
        const auto weights = randomValues(size_t(k.m * (k.c / k.group) * k.kh * k.kw), rng);
        const auto bias = randomValues(size_t(k.m), rng);
        GraphBuilder gb;
        ValueId x = gb.input("x", DType::Float32,
                             Shape({Dim::symbolic("n"), Dim::known(k.c), Dim::symbolic("h"), Dim::symbolic("w")}));
        std::vector<ValueId> inputs{x, gb.initializer(floatTensor("W", {k.m, k.c / k.group, k.kh, k.kw}, weights))};
        if (k.bias) inputs.push_back(gb.initializer(floatTensor("B", {k.m}, bias)));
        gb.output(gb.op("Conv", inputs, "y",
                        {intAttr("group", k.group), intsAttr("strides", {k.sh, k.sw}),
                         intsAttr("dilations", {k.dh, k.dw}), intsAttr("pads", k.pads)}));
        Model model = gb.buildModel();
        fillUnknownTypes(*model.graph);
        auto exec = Executor::create(model, cpuExecutorOptions(2));
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        // Twice at one size (cached primitive and weights), then new sizes.
        // 7x12: 84 pixels, a 64-wide tile, a 16-wide one and four single columns. 9x40:
        // rows wide enough for the row-by-row loops (narrow ones at stride 2 run as one
        // long row).
        std::vector<std::tuple<int64_t, int64_t, int64_t>> sizes{{1, 13, 11}, {1, 13, 11}, {2, 8, 17}, {1, 7, 12}, {1, 9, 40},
                                                                 // maps narrower than two tiles: all borders
                                                                 {1, 7, 7}, {2, 5, 6}, {1, 5, 4}};
        if (winogradSized(k)) sizes.insert(sizes.end(), {{1, 30, 29}, {1, 30, 29}, {1, 16, 15}, {1, 16, 15}});
        const uint64_t winogradBefore = cpu::OneDnnConv::winogradRuns();
        for (auto [n, h, w] : sizes) {
            const auto input = randomValues(size_t(n * k.c * h * w), rng);
            RtTensor t = allocateTensor(DType::Float32, {n, k.c, h, w});
            std::copy(input.begin(), input.end(), t.as<float>());
            auto out = (*exec)->run({t});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            const RtTensor& y = (*out)[0];
            const int64_t oh = y.dims[2], ow = y.dims[3];
            QCOMPARE(oh, (h + k.pads[0] + k.pads[2] - ((k.kh - 1) * k.dh + 1)) / k.sh + 1);
            QCOMPARE(ow, (w + k.pads[1] + k.pads[3] - ((k.kw - 1) * k.dw + 1)) / k.sw + 1);
            const auto expected = naiveConv(k, input, n, h, w, weights, bias, oh, ow);
            QCOMPARE(size_t(y.numel()), expected.size());
            for (size_t i = 0; i < expected.size(); ++i)
                if (!(std::abs(y.as<float>()[i] - expected[i]) <= 1e-4f * (1 + std::abs(expected[i]))))
                    QFAIL(qPrintable(QString("element %1: %2, expected %3").arg(i).arg(y.as<float>()[i]).arg(expected[i])));
        }
        if (winogradSized(k) && oneDnnHasWinograd())
            QCOMPARE(cpu::OneDnnConv::winogradRuns() - winogradBefore, uint64_t(oneDnnTakesWinograd(k) ? 4 : 0));
    }

    // The same cases as FusedConv with `channels_last` (what the channels-last pass makes):
    // X and Y NHWC, in float32 (the NHWC depthwise loop, oneDNN told the layout) and float64
    // (NCHW copies around the kernel above); and with a residual Z and a ReLU after it, as
    // residual-fusion makes them (oneDNN's binary post-op, or each path's own pass after).
    void channelsLastMatchesTheDefinition_data() {
        QTest::addColumn<int>("index");
        QTest::addColumn<bool>("doubles");
        QTest::addColumn<bool>("nchwInput");  // `input_layout` NCHW: X as ONNX has it, Y NHWC
        QTest::addColumn<bool>("residual");   // Y = Relu(Conv(X, W, B) + Z)
        QTest::addColumn<bool>("means");      // a second output, Y's mean over H and W (se-pool-fusion)
        QTest::addColumn<bool>("noCopies");   // the weight-copy budget spent: W re-laid per call
        QTest::addColumn<bool>("blocked");    // oneDNN in its own (blocked) layouts, Z reordered in
        QTest::addColumn<int>("threads");     // one thread walks the depthwise rows backward
        QTest::addColumn<QString>("activation");  // without Z: Relu, or Clip to [-0.25, 0.5]
        static const std::vector<Case> cases = cases_();
        for (size_t i = 0; i < cases.size(); ++i) {
            const std::string name = cases[i].name;
            QTest::newRow((name + ", Relu").c_str()) << int(i) << false << false << false << false << false << false << 2 << QString("Relu");
            QTest::newRow((name + ", Clip, one thread").c_str()) << int(i) << false << false << false << false << false << false << 1 << QString("Clip");
            QTest::newRow(name.c_str()) << int(i) << false << false << false << false << false << false << 2 << QString();
            QTest::newRow((name + ", one thread, channel means").c_str()) << int(i) << false << false << false << true << false << false << 1 << QString();
            QTest::newRow((name + ", float64").c_str()) << int(i) << true << false << false << false << false << false << 2 << QString();
            QTest::newRow((name + ", NCHW input").c_str()) << int(i) << false << true << false << false << false << false << 2 << QString();
            QTest::newRow((name + ", NCHW input, no weight copies").c_str()) << int(i) << false << true << false << false << true << false << 2 << QString();
            QTest::newRow((name + ", residual").c_str()) << int(i) << false << false << true << false << false << false << 2 << QString();
            QTest::newRow((name + ", residual, blocked").c_str()) << int(i) << false << false << true << false << false << true << 2 << QString();
            QTest::newRow((name + ", residual, float64").c_str()) << int(i) << true << false << true << false << false << false << 2 << QString();
            QTest::newRow((name + ", channel means").c_str()) << int(i) << false << false << false << true << false << false << 2 << QString();
            QTest::newRow((name + ", channel means, float64").c_str()) << int(i) << true << false << false << true << false << false << 2 << QString();
            QTest::newRow((name + ", channel means, residual").c_str()) << int(i) << false << false << true << true << false << false << 2 << QString();
        }
    }
    void channelsLastMatchesTheDefinition() {
        QFETCH(int, index);
        QFETCH(bool, doubles);
        QFETCH(bool, nchwInput);
        QFETCH(bool, residual);
        QFETCH(bool, means);
        QFETCH(bool, noCopies);
        QFETCH(bool, blocked);
        QFETCH(int, threads);
        QFETCH(QString, activation);
        cpu::setRelaidCopyBudgetBytes(noCopies ? cpu::relaidBytesKept() : cpu::kDefaultCopyBudgetBytes);
        cpu::OneDnnConv::useOwnLayoutsOnly(blocked);
        const auto restore = qScopeGuard([] {
            cpu::setRelaidCopyBudgetBytes(cpu::kDefaultCopyBudgetBytes);
            cpu::OneDnnConv::useOwnLayoutsOnly(false);
        });
        const Case k = cases_()[size_t(index)];
        const DType type = doubles ? DType::Float64 : DType::Float32;
        std::mt19937 rng(uint32_t(index) + 101);
        const auto weights = randomValues(size_t(k.m * (k.c / k.group) * k.kh * k.kw), rng);
        const auto bias = randomValues(size_t(k.m), rng);
        auto tensor = [&](const char* name, std::vector<int64_t> dims, const std::vector<float>& v) {
            if (!doubles) return floatTensor(name, dims, v);
            std::string bytes(v.size() * sizeof(double), '\0');
            for (size_t i = 0; i < v.size(); ++i) {
                const double d = v[i];
                std::memcpy(bytes.data() + i * sizeof d, &d, sizeof d);
            }
            return Tensor(name, DType::Float64, std::move(dims), makeBuffer(std::move(bytes)), 0, v.size() * sizeof(double));
        };
        GraphBuilder gb;
        ValueId x = gb.input("x", type,
                             nchwInput ? Shape({Dim::symbolic("n"), Dim::known(k.c), Dim::symbolic("h"), Dim::symbolic("w")})
                                       : Shape({Dim::symbolic("n"), Dim::symbolic("h"), Dim::symbolic("w"), Dim::known(k.c)}));
        // float32 NHWC rows feed W at run time (transposed per call, not cached).
        const bool weightsFed = !doubles && !nchwInput;
        const std::vector<int64_t> wDims{k.m, k.c / k.group, k.kh, k.kw};
        std::vector<ValueId> inputs{x, weightsFed ? gb.input("W", type, Shape::ofSizes(wDims))
                                                  : gb.initializer(tensor("W", wDims, weights))};
        if (k.bias || residual) inputs.push_back(k.bias ? gb.initializer(tensor("B", {k.m}, bias)) : ValueId{});
        if (residual)
            inputs.push_back(gb.input("z", type, Shape({Dim::symbolic("n"), Dim::symbolic("oh"), Dim::symbolic("ow"), Dim::known(k.m)})));
        std::vector<Attribute> attrs{intAttr("channels_last", 1), intAttr("group", k.group), intsAttr("strides", {k.sh, k.sw}),
                                     intsAttr("dilations", {k.dh, k.dw}), intsAttr("pads", k.pads)};
        if (nchwInput) attrs.push_back(stringAttr("input_layout", "NCHW"));
        if (residual) attrs.push_back(stringAttr("activation", "Relu"));
        if (!activation.isEmpty()) attrs.push_back(stringAttr("activation", activation.toStdString()));
        if (activation == "Clip") attrs.push_back(floatsAttr("activation_params", {-0.25f, 0.5f}));
        const auto produced = gb.node("FusedConv", inputs, means ? std::vector<std::string>{"y", "means"} : std::vector<std::string>{"y"},
                                      attrs, "conv", "ai.fusescope");
        for (ValueId v : produced) gb.output(v);
        Model model = gb.buildModel();
        model.opsetImports.push_back({"ai.fusescope", 1});
        auto exec = Executor::create(model, cpuExecutorOptions(threads));
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        std::vector<std::tuple<int64_t, int64_t, int64_t>> sizes{{1, 13, 11}, {1, 13, 11}, {2, 8, 17}, {1, 7, 12}, {1, 9, 40},
                                                                 // maps narrower than two tiles: all borders
                                                                 {1, 7, 7}, {2, 5, 6}, {1, 5, 4}};
        const bool pointwise = k.kh == 1 && k.kw == 1 && k.sh == 1 && k.sw == 1 && k.pads == std::vector<int64_t>{0, 0, 0, 0};
        // Pooled images: the dot-product loop, and one pixel as one row times the weights.
        if (pointwise) sizes.insert(sizes.end(), {{2, 1, 1}, {1, 2, 2}, {1, 1, 1}});
        if (winogradSized(k)) sizes.insert(sizes.end(), {{1, 30, 29}, {1, 30, 29}, {1, 16, 15}, {1, 16, 15}});
        const uint64_t winogradBefore = cpu::OneDnnConv::winogradRuns(), oursBefore = cpu::WinogradConv::runs();
        for (auto [n, h, w] : sizes) {
            const auto input = randomValues(size_t(n * k.c * h * w), rng);  // NCHW, for the definition
            RtTensor t = allocateTensor(type, nchwInput ? std::vector<int64_t>{n, k.c, h, w} : std::vector<int64_t>{n, h, w, k.c});
            for (int64_t img = 0; img < n; ++img)
                for (int64_t ch = 0; ch < k.c; ++ch)
                    for (int64_t p = 0; p < h * w; ++p) {
                        const float v = input[size_t((img * k.c + ch) * h * w + p)];
                        const size_t at = nchwInput ? size_t((img * k.c + ch) * h * w + p) : size_t((img * h * w + p) * k.c + ch);
                        if (doubles) t.as<double>()[at] = v;
                        else t.as<float>()[at] = v;
                    }
            std::vector<RtTensor> feeds{t};
            if (weightsFed) {
                feeds.push_back(allocateTensor(type, wDims));
                std::copy(weights.begin(), weights.end(), feeds.back().as<float>());
            }
            const int64_t ohWant = (h + k.pads[0] + k.pads[2] - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
            const int64_t owWant = (w + k.pads[1] + k.pads[3] - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
            const auto zValues = randomValues(size_t(n * ohWant * owWant * k.m), rng);  // NHWC
            if (residual) {
                feeds.push_back(allocateTensor(type, {n, ohWant, owWant, k.m}));
                for (size_t i = 0; i < zValues.size(); ++i)
                    if (doubles) feeds.back().as<double>()[i] = zValues[i];
                    else feeds.back().as<float>()[i] = zValues[i];
            }
            auto out = (*exec)->run(feeds);
            QVERIFY2(out.isOk(), out.status().message().c_str());
            const RtTensor& y = (*out)[0];
            QCOMPARE(y.dims.size(), size_t(4));
            QCOMPARE(y.dims[3], k.m);
            std::vector<double> wantMeans(size_t(n * k.m), 0.0);
            const int64_t oh = y.dims[1], ow = y.dims[2];
            QCOMPARE(oh, (h + k.pads[0] + k.pads[2] - ((k.kh - 1) * k.dh + 1)) / k.sh + 1);
            QCOMPARE(ow, (w + k.pads[1] + k.pads[3] - ((k.kw - 1) * k.dw + 1)) / k.sw + 1);
            const auto expected = naiveConv(k, input, n, h, w, weights, bias, oh, ow);
            for (int64_t img = 0; img < n; ++img)
                for (int64_t oc = 0; oc < k.m; ++oc)
                    for (int64_t p = 0; p < oh * ow; ++p) {
                        const size_t at = size_t((img * oh * ow + p) * k.m + oc);
                        const double got = doubles ? y.as<double>()[at] : y.as<float>()[at];
                        float want = expected[size_t((img * k.m + oc) * oh * ow + p)];
                        if (residual) want = std::max(0.f, want + zValues[at]);
                        if (activation == "Relu") want = std::max(0.f, want);
                        if (activation == "Clip") want = std::clamp(want, -0.25f, 0.5f);
                        wantMeans[size_t(img * k.m + oc)] += double(want) / double(oh * ow);
                        if (!(std::abs(got - want) <= 1e-4 * (1 + std::abs(want))))
                            QFAIL(qPrintable(QString("image %1 channel %2 pixel %3: %4, expected %5")
                                                 .arg(img).arg(oc).arg(p).arg(got).arg(want)));
                    }
            if (!means) continue;
            QCOMPARE(out->size(), size_t(2));
            const RtTensor& got = (*out)[1];
            QCOMPARE(got.dims, (std::vector<int64_t>{n, 1, 1, k.m}));
            for (size_t i = 0; i < wantMeans.size(); ++i) {
                const double g = doubles ? got.as<double>()[i] : got.as<float>()[i];
                if (!(std::abs(g - wantMeans[i]) <= 1e-4 * (1 + std::abs(wantMeans[i]))))
                    QFAIL(qPrintable(QString("channel mean %1: %2, expected %3").arg(i).arg(g).arg(wantMeans[i])));
            }
        }
        // float32 goes through oneDNN or our Winograd route (NHWC input only), float64
        // through NCHW copies around the plain loops. oneDNN's Winograd kernels take no Clip.
        if (winogradSized(k) && oneDnnHasWinograd() && !doubles)
            QCOMPARE(cpu::OneDnnConv::winogradRuns() - winogradBefore,
                     uint64_t(oneDnnTakesWinograd(k) && activation != "Clip" ? 4 : 0));
        if (winogradSized(k) && ourWinogradRuns() && !doubles)
            QCOMPARE(cpu::WinogradConv::runs() - oursBefore, uint64_t(nchwInput ? 0 : 4));
    }

    // Our Winograd route called directly, as it runs wherever oneDNN has no Winograd kernel
    // (below AVX-512; this CPU may have it): both tile sizes against a double-precision loop
    // on sizes that leave partial tiles, every padding from 0 to 2 on each side, a batch, the
    // residual (also in Y's own buffer), the activations done in the vector loop and one done
    // after (Sigmoid), constant weights kept and fed ones transformed per call, images wide
    // enough to take several chunks, one of them spanning images, and enough threads that the
    // products are split into blocks of rows.
    void winogradMatchesTheDefinition_data() {
        QTest::addColumn<int>("tile");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("w");
        QTest::addColumn<int>("c");
        QTest::addColumn<int>("k");
        QTest::addColumn<QList<int>>("pads");  // top, left, bottom, right
        QTest::addColumn<QString>("epilogue");  // bias, z, z in y, relu, clip, leaky, sigmoid, fed
        QTest::addColumn<int>("threads");        // many: the products split into row blocks
        QTest::newRow("F4 30x29 pads 1") << 4 << 1 << 30 << 29 << 32 << 48 << QList<int>{1, 1, 1, 1} << "bias,relu" << 2;
        QTest::newRow("F2 16x15 pads 1") << 2 << 1 << 16 << 15 << 32 << 48 << QList<int>{1, 1, 1, 1} << "bias,relu" << 2;
        QTest::newRow("F4 no pads, no bias") << 4 << 1 << 19 << 23 << 8 << 16 << QList<int>{0, 0, 0, 0} << "" << 2;
        QTest::newRow("F2 asymmetric pads") << 2 << 2 << 13 << 17 << 16 << 8 << QList<int>{2, 0, 1, 2} << "bias,clip" << 2;
        QTest::newRow("F4 asymmetric pads, batch") << 4 << 3 << 11 << 14 << 24 << 8 << QList<int>{0, 2, 2, 1} << "bias,leaky" << 2;
        QTest::newRow("F4 residual") << 4 << 2 << 17 << 9 << 8 << 24 << QList<int>{1, 1, 1, 1} << "bias,z,relu" << 2;
        QTest::newRow("F2 residual in Y's buffer") << 2 << 1 << 15 << 22 << 16 << 16 << QList<int>{1, 1, 1, 1} << "z in y,relu" << 2;
        QTest::newRow("F4 sigmoid after, fed weights") << 4 << 2 << 12 << 21 << 8 << 8 << QList<int>{1, 2, 1, 0} << "bias,sigmoid,fed" << 2;
        QTest::newRow("F4 chunks of a wide image") << 4 << 1 << 40 << 1100 << 8 << 8 << QList<int>{1, 1, 1, 1} << "bias,relu" << 16;
        QTest::newRow("F2 chunks spanning images, sigmoid") << 2 << 4 << 6 << 1000 << 8 << 8 << QList<int>{1, 1, 1, 1} << "bias,z,sigmoid" << 8;
    }
    void winogradMatchesTheDefinition() {
        QFETCH(int, tile);
        QFETCH(int, n);
        QFETCH(int, h);
        QFETCH(int, w);
        QFETCH(int, c);
        QFETCH(int, k);
        QFETCH(QList<int>, pads);
        QFETCH(QString, epilogue);
        QFETCH(int, threads);
        if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) QSKIP("the route needs AVX2 and FMA");
        const QStringList parts = epilogue.split(',', Qt::SkipEmptyParts);
        const int64_t oh = h + pads[0] + pads[2] - 2, ow = w + pads[1] + pads[3] - 2;
        std::mt19937 rng(uint32_t(tile * 1000 + h * 7 + w));
        const auto x = randomValues(size_t(n * h * w * c), rng);  // NHWC
        auto weights = randomValues(size_t(k * c * 9), rng);
        const auto bias = randomValues(size_t(k), rng);
        const auto z = randomValues(size_t(n * oh * ow * k), rng);
        cpu::Activation act;
        if (parts.contains("relu")) act.kind = cpu::Activation::Kind::Relu;
        if (parts.contains("clip")) act = {cpu::Activation::Kind::Clip, -0.5f, 0.75f};
        if (parts.contains("leaky")) act = {cpu::Activation::Kind::LeakyRelu, 0.1f, 0};
        if (parts.contains("sigmoid")) act.kind = cpu::Activation::Kind::Sigmoid;
        const bool withZ = parts.contains("z") || parts.contains("z in y"), inY = parts.contains("z in y");
        const bool fed = parts.contains("fed");
        const cpu::NhwcWindow s{n, c, h, w, oh, ow, 3, 3, 1, 1, 1, 1, pads[0], pads[1]};
        ThreadPool pool(threads);
        cpu::WinogradConv conv;
        for (int call = 0; call < 2; ++call) {  // the second with kept weights, or new fed ones
            if (call == 1 && fed) {  // new values at the same address
                const auto fresh = randomValues(weights.size(), rng);
                std::copy(fresh.begin(), fresh.end(), weights.begin());
            }
            std::vector<float> y(size_t(n * oh * ow * k), 0.f);
            if (inY) y = z;
            QVERIFY(conv.run(pool, s, k, tile, x.data(), weights.data(), !fed, parts.contains("bias") ? bias.data() : nullptr,
                             withZ ? (inY ? y.data() : z.data()) : nullptr, y.data(), act));
            for (int64_t img = 0; img < n; ++img)
                for (int64_t oy = 0; oy < oh; ++oy)
                    for (int64_t ox = 0; ox < ow; ++ox)
                        for (int64_t oc = 0; oc < k; ++oc) {
                            double acc = parts.contains("bias") ? bias[size_t(oc)] : 0.0;
                            for (int64_t ky = 0; ky < 3; ++ky)
                                for (int64_t kx = 0; kx < 3; ++kx) {
                                    const int64_t iy = oy + ky - pads[0], ix = ox + kx - pads[1];
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                    for (int64_t ic = 0; ic < c; ++ic)
                                        acc += double(x[size_t(((img * h + iy) * w + ix) * c + ic)]) *
                                               weights[size_t(((oc * c + ic) * 3 + ky) * 3 + kx)];
                                }
                            const size_t at = size_t(((img * oh + oy) * ow + ox) * k + oc);
                            if (withZ) acc += z[at];
                            float want = float(acc);
                            act.apply(&want, 1);
                            if (!(std::abs(y[at] - want) <= 1e-4f * (1 + std::abs(want))))
                                QFAIL(qPrintable(QString("call %1, image %2, (%3, %4) channel %5: %6, expected %7")
                                                     .arg(call).arg(img).arg(oy).arg(ox).arg(oc).arg(y[at]).arg(want)));
                        }
        }
    }

    // Layers whose buffers would be too large are left to oneDNN: y untouched.
    // One row times B (k rows of n): rows in fours and a remainder, vector columns and a
    // remainder, more columns than one pass sums (4096), rows prefetched ahead, a row pitch wider than n, x read with
    // a stride (transA), beta 0 (y's old contents ignored, NaNs included) and 1, on one thread
    // and two (the rows split into stretches whose partial sums are added).
    void oneRowProductsMatchTheDefinition() {
        std::mt19937 rng(7);
        std::normal_distribution<float> normal;
        for (int threads : {1, 2})
            for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {5, 17}, {960, 1280}, {1280, 1000}, {33, 130}, {67, 4133}, {2, 3000}})
                for (bool transA : {false, true})
                    for (float beta : {0.f, 1.f}) {
                        const int64_t ldb = n + 3, lda = transA ? 2 : k;
                        std::vector<float> x(size_t(transA ? k * lda : k)), b(size_t(k * ldb)), y(static_cast<size_t>(n));
                        for (float& v : x) v = normal(rng);
                        for (float& v : b) v = normal(rng);
                        for (float& v : y) v = beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : normal(rng);
                        const std::vector<float> before = y;
                        ThreadPool pool(threads);
                        pool.applyToCallingThread();
                        cpu::gemm(transA, false, 1, n, k, 0.5f, x.data(), lda, b.data(), ldb, beta, y.data(), n);
                        for (int64_t j = 0; j < n; ++j) {
                            double want = 0, scale = 0;
                            for (int64_t p = 0; p < k; ++p) {
                                const double term = double(x[size_t(transA ? p * lda : p)]) * b[size_t(p * ldb + j)];
                                want += term, scale += std::fabs(term);
                            }
                            want = 0.5 * want + (beta != 0.f ? double(before[size_t(j)]) : 0.0);
                            QVERIFY2(std::fabs(y[size_t(j)] - want) <= 1e-5 * (scale + 1),
                                     qPrintable(QStringLiteral("k %1 n %2 column %3: %4, expected %5")
                                                    .arg(k).arg(n).arg(j).arg(y[size_t(j)]).arg(want)));
                        }
                    }
    }

    void winogradDeclinesHugeBuffers() {
        if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) QSKIP("the route needs AVX2 and FMA");
        ThreadPool pool(2);
        cpu::WinogradConv conv;
        const int64_t wide = 500000;  // one tile row of F(4x4) at 8 channels: 69 MiB
        std::vector<float> x(size_t(wide * 8), 1.f), w(8 * 8 * 9, 1.f), y(x.size(), -7.f);
        QVERIFY(!conv.run(pool, {1, 8, 1, wide, 1, wide, 3, 3, 1, 1, 1, 1, 1, 1}, 8, 4, x.data(), w.data(), true, nullptr,
                          nullptr, y.data(), {}));
        QVERIFY(std::all_of(y.begin(), y.end(), [](float v) { return v == -7.f; }));
        const int64_t channels = 1536;  // F(4x4) weights: 36 x 1536 x 1536 floats, 324 MiB
        std::vector<float> x2(size_t(16 * 16 * channels), 1.f), y2(x2.size(), -7.f);
        QVERIFY(!conv.run(pool, {1, channels, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1}, channels, 4, x2.data(), w.data(),
                          true, nullptr, nullptr, y2.data(), {}));
        QVERIFY(std::all_of(y2.begin(), y2.end(), [](float v) { return v == -7.f; }));
    }

    // The same on a quantized CNN's bytes (uint8 and int8; MaxPool commutes with the
    // quantization, so an export runs it on them): the max over each window inside the image.
    void channelsLastMaxPoolTakesBytes() {
        std::mt19937 rng(11);
        for (const DType type : {DType::UInt8, DType::Int8})
            for (const int64_t c : {3, 20}) {
                GraphBuilder gb;
                const int64_t h = 9, w = 11;
                ValueId x = gb.input("x", type, Shape::ofSizes({1, h, w, c}));
                gb.output(gb.node("MaxPool", {x}, {"y"},
                                  {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}), intsAttr("pads", {1, 1, 1, 1})},
                                  "pool", "ai.fusescope")[0]);
                Model model = gb.buildModel();
                model.opsetImports.push_back({"ai.fusescope", 1});
                auto exec = Executor::create(model, cpuExecutorOptions(2));
                QVERIFY2(exec.isOk(), exec.status().message().c_str());
                RtTensor t = allocateTensor(type, {1, h, w, c});
                for (int64_t i = 0; i < t.numel(); ++i) t.as<uint8_t>()[i] = uint8_t(rng());
                auto out = (*exec)->run({t});
                QVERIFY2(out.isOk(), out.status().message().c_str());
                const RtTensor& y = (*out)[0];
                QCOMPARE(y.dims, (std::vector<int64_t>{1, 5, 6, c}));
                QCOMPARE(y.dtype, type);
                auto at = [&](const RtTensor& v, int64_t i) { return type == DType::UInt8 ? int(v.as<uint8_t>()[i]) : int(v.as<int8_t>()[i]); };
                for (int64_t oy = 0; oy < 5; ++oy)
                    for (int64_t ox = 0; ox < 6; ++ox)
                        for (int64_t ch = 0; ch < c; ++ch) {
                            int want = std::numeric_limits<int>::lowest();
                            for (int64_t iy = std::max<int64_t>(0, 2 * oy - 1); iy <= std::min(h - 1, 2 * oy + 1); ++iy)
                                for (int64_t ix = std::max<int64_t>(0, 2 * ox - 1); ix <= std::min(w - 1, 2 * ox + 1); ++ix)
                                    want = std::max(want, at(t, (iy * w + ix) * c + ch));
                            const int got = at(y, (oy * 6 + ox) * c + ch);
                            if (got != want) QCOMPARE(got, want);
                        }
            }
    }

    // ai.fusescope MaxPool on NHWC (what channels-last makes of MaxPool) against the max over
    // each window written out here: channel counts under one vector, whole vectors, blocks
    // of four and an overlapping last vector; windows at the borders, strided and dilated;
    // -inf and NaN among the values as ONNX's kernel keeps them (the first tap seeds).
    void channelsLastMaxPoolMatchesTheDefinition() {
        struct Pool {
            int64_t kh, kw, sh, sw, dh, dw;
            std::vector<int64_t> pads;
        };
        const std::vector<Pool> pools{{3, 3, 2, 2, 1, 1, {1, 1, 1, 1}}, {2, 2, 2, 2, 1, 1, {0, 0, 0, 0}},
                                      {3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}, {5, 3, 1, 2, 2, 1, {2, 0, 1, 2}}};
        std::mt19937 rng(7);
        for (const int64_t c : {3, 16, 20, 64, 72, 130})
            for (const Pool& k : pools) {
                GraphBuilder gb;
                ValueId x = gb.input("x", DType::Float32, Shape({Dim::known(1), Dim::known(9), Dim::known(11), Dim::known(c)}));
                gb.output(gb.node("MaxPool", {x}, {"y"},
                                  {intsAttr("kernel_shape", {k.kh, k.kw}), intsAttr("strides", {k.sh, k.sw}),
                                   intsAttr("dilations", {k.dh, k.dw}), intsAttr("pads", k.pads)},
                                  "pool", "ai.fusescope")[0]);
                Model model = gb.buildModel();
                model.opsetImports.push_back({"ai.fusescope", 1});
                auto exec = Executor::create(model, cpuExecutorOptions(2));
                QVERIFY2(exec.isOk(), exec.status().message().c_str());
                const int64_t h = 9, w = 11;
                std::vector<float> input = randomValues(size_t(h * w * c), rng);
                input[5] = -std::numeric_limits<float>::infinity();
                input[size_t(c + 1)] = std::numeric_limits<float>::quiet_NaN();
                RtTensor t = allocateTensor(DType::Float32, {1, h, w, c});
                std::copy(input.begin(), input.end(), t.as<float>());
                auto out = (*exec)->run({t});
                QVERIFY2(out.isOk(), out.status().message().c_str());
                const RtTensor& y = (*out)[0];
                const int64_t oh = (h + k.pads[0] + k.pads[2] - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
                const int64_t ow = (w + k.pads[1] + k.pads[3] - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
                QCOMPARE(y.dims, (std::vector<int64_t>{1, oh, ow, c}));
                for (int64_t oy = 0; oy < oh; ++oy)
                    for (int64_t ox = 0; ox < ow; ++ox)
                        for (int64_t ch = 0; ch < c; ++ch) {
                            float want = 0.f;
                            bool seeded = false;
                            for (int64_t ky = 0; ky < k.kh; ++ky)
                                for (int64_t kx = 0; kx < k.kw; ++kx) {
                                    const int64_t iy = oy * k.sh - k.pads[0] + ky * k.dh, ix = ox * k.sw - k.pads[1] + kx * k.dw;
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                    const float v = input[size_t((iy * w + ix) * c + ch)];
                                    want = !seeded ? v : (v > want ? v : want);
                                    seeded = true;
                                }
                            const float got = y.as<float>()[size_t((oy * ow + ox) * c + ch)];
                            const bool same = std::isnan(want) ? std::isnan(got) : got == want;
                            QVERIFY2(same, qPrintable(QString("c %1, window %2x%3: (%4, %5, %6) is %7, not %8")
                                                          .arg(c).arg(k.kh).arg(k.kw).arg(oy).arg(ox).arg(ch).arg(got).arg(want)));
                        }
            }
    }

    // MaxPool over 1 and 3 spatial dims (separably: each depth window's maximum, then the
    // planes' pool) against the max over each window written out here: padded, strided,
    // ceil_mode's partial last window, depth windows of one tap; float and uint8.
    // Depthwise Conv1d (Conformer's 31 taps, wav2vec's positional convolution) runs the 2-D
    // depthwise loop on rows of one: against the definition as a 1 x k window, with strides,
    // dilation, asymmetric pads, with and without bias.
    void linesMatchTheDefinition() {
        const std::vector<Case> lines{
            {"31 taps", 24, 24, 24, 1, 31, 1, 1, 1, 1, {0, 15, 0, 15}, true},
            {"3 taps stride 2", 17, 17, 17, 1, 3, 1, 2, 1, 1, {0, 1, 0, 1}, false},
            {"5 taps dilated 2 asymmetric pads", 9, 9, 9, 1, 5, 1, 1, 1, 2, {0, 3, 0, 1}, true},
            {"4 taps no pad stride 3", 5, 5, 5, 1, 4, 1, 3, 1, 1, {0, 0, 0, 0}, true},
            // Dense lines of stride 1 take the shifted-tap tiles (WaveNet's causal layers).
            {"dense 2 taps dilated 8 causal", 16, 24, 1, 1, 2, 1, 1, 1, 8, {0, 8, 0, 0}, true},
            {"dense 3 taps padded, 7 outputs", 10, 7, 1, 1, 3, 1, 1, 1, 1, {0, 1, 0, 1}, true},
            {"dense 5 taps no pad", 3, 5, 1, 1, 5, 1, 1, 1, 1, {0, 0, 0, 0}, false},
            {"dense 3 taps stride 2", 8, 8, 1, 1, 3, 1, 2, 1, 1, {0, 1, 0, 1}, true},
            {"dense 1 tap", 12, 20, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, true},
        };
        std::mt19937 rng(23);
        for (const Case& k : lines) {
            const auto weights = randomValues(size_t(k.m * (k.c / k.group) * k.kw), rng);
            const auto bias = randomValues(size_t(k.m), rng);
            GraphBuilder gb;
            ValueId x = gb.input("x", DType::Float32, Shape({Dim::symbolic("n"), Dim::known(k.c), Dim::symbolic("l")}));
            std::vector<ValueId> inputs{x, gb.initializer(floatTensor("W", {k.m, k.c / k.group, k.kw}, weights))};
            if (k.bias) inputs.push_back(gb.initializer(floatTensor("B", {k.m}, bias)));
            gb.output(gb.op("Conv", inputs, "y",
                            {intAttr("group", k.group), intsAttr("strides", {k.sw}), intsAttr("dilations", {k.dw}),
                             intsAttr("pads", {k.pads[1], k.pads[3]})}));
            Model model = gb.buildModel();
            fillUnknownTypes(*model.graph);
            auto exec = Executor::create(model, cpuExecutorOptions(2));
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            // The same as FusedConv with a residual Z and a ReLU after it (WaveNet's skips):
            // the tiles add Z before they store.
            GraphBuilder fb;
            ValueId fx = fb.input("x", DType::Float32, Shape({Dim::symbolic("n"), Dim::known(k.c), Dim::symbolic("l")}));
            ValueId fz = fb.input("z", DType::Float32, Shape({Dim::symbolic("n"), Dim::known(k.m), Dim::symbolic("ol")}));
            fb.output(fb.node("FusedConv",
                              {fx, fb.initializer(floatTensor("W", {k.m, k.c / k.group, k.kw}, weights)),
                               k.bias ? fb.initializer(floatTensor("B", {k.m}, bias)) : ValueId{}, fz},
                              {"y"},
                              {intAttr("group", k.group), intsAttr("strides", {k.sw}), intsAttr("dilations", {k.dw}),
                               intsAttr("pads", {k.pads[1], k.pads[3]}), stringAttr("activation", "Relu")},
                              "conv", "ai.fusescope")[0]);
            Model fused = fb.buildModel();
            fused.opsetImports.push_back({"ai.fusescope", 1});
            auto withResidual = Executor::create(fused, cpuExecutorOptions(2));
            QVERIFY2(withResidual.isOk(), withResidual.status().message().c_str());
            for (auto [n, l] : {std::pair<int64_t, int64_t>{1, 99}, {2, 40}, {1, 7}, {1, 600}}) {
                const auto input = randomValues(size_t(n * k.c * l), rng);
                RtTensor t = allocateTensor(DType::Float32, {n, k.c, l});
                std::copy(input.begin(), input.end(), t.as<float>());
                auto out = (*exec)->run({t});
                QVERIFY2(out.isOk(), out.status().message().c_str());
                const RtTensor& y = (*out)[0];
                QCOMPARE(y.rank(), size_t(3));
                const int64_t ol = y.dims[2];
                QCOMPARE(ol, (l + k.pads[1] + k.pads[3] - ((k.kw - 1) * k.dw + 1)) / k.sw + 1);
                const auto expected = naiveConv(k, input, n, 1, l, weights, bias, 1, ol);
                const auto residual = randomValues(size_t(n * k.m * ol), rng);
                RtTensor zt = allocateTensor(DType::Float32, {n, k.m, ol});
                std::copy(residual.begin(), residual.end(), zt.as<float>());
                auto summed = (*withResidual)->run({t, zt});
                QVERIFY2(summed.isOk(), summed.status().message().c_str());
                for (size_t i = 0; i < expected.size(); ++i) {
                    const float want = std::max(expected[i] + residual[i], 0.f);
                    QVERIFY2(std::abs((*summed)[0].as<float>()[i] - want) <= 1e-4f * (1 + std::abs(want)),
                             qPrintable(QString("%1 with Z, length %2, element %3: %4, expected %5")
                                            .arg(k.name).arg(l).arg(i).arg((*summed)[0].as<float>()[i]).arg(want)));
                }
                QCOMPARE(size_t(y.numel()), expected.size());
                for (size_t i = 0; i < expected.size(); ++i)
                    QVERIFY2(std::abs(y.as<float>()[i] - expected[i]) <= 1e-4f * (1 + std::abs(expected[i])),
                             qPrintable(QString("%1, length %2, element %3: %4, expected %5")
                                            .arg(k.name).arg(l).arg(i).arg(y.as<float>()[i]).arg(expected[i])));
            }
        }
    }

    void lineAndVolumeMaxPoolsMatchTheDefinition() {
        struct Pool {
            std::vector<int64_t> in, kernel, strides, pads;
            int64_t ceil = 0;
        };
        const std::vector<Pool> pools{
            {{5, 7, 9}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
            {{5, 7, 9}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1, 0, 1, 1}},
            {{5, 7, 9}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}, 1},
            {{5, 7, 9}, {3, 1, 1}, {2, 1, 1}, {1, 0, 0, 1, 0, 0}},
            {{20}, {3}, {2}, {1, 1}},
            {{20}, {4}, {1}, {0, 0}},
            {{20}, {3}, {3}, {0, 0}, 1},
        };
        std::mt19937 rng(11);
        for (const DType type : {DType::Float32, DType::UInt8})
            for (const Pool& k : pools) {
                const size_t nd = k.in.size();
                const int64_t planes = 2 * 3;
                std::vector<int64_t> dims{2, 3};
                dims.insert(dims.end(), k.in.begin(), k.in.end());
                GraphBuilder gb;
                ValueId x = gb.input("x", type, Shape::ofSizes(dims));
                gb.output(gb.op("MaxPool", {x}, "y",
                                {intsAttr("kernel_shape", k.kernel), intsAttr("strides", k.strides),
                                 intsAttr("pads", k.pads), intAttr("ceil_mode", k.ceil)}));
                Model model = gb.buildModel();
                auto exec = Executor::create(model, cpuExecutorOptions(2));
                QVERIFY2(exec.isOk(), exec.status().message().c_str());
                int64_t inSize = 1;
                for (int64_t d : k.in) inSize *= d;
                std::vector<float> input = randomValues(size_t(planes * inSize), rng);
                RtTensor t = allocateTensor(type, dims);
                for (size_t i = 0; i < input.size(); ++i) {
                    if (type == DType::UInt8) input[i] = std::floor((input[i] + 1.f) * 100.f);
                    if (type == DType::UInt8) t.as<uint8_t>()[i] = uint8_t(input[i]);
                    else t.as<float>()[i] = input[i];
                }
                auto out = (*exec)->run({t});
                QVERIFY2(out.isOk(), out.status().message().c_str());
                const RtTensor& y = (*out)[0];
                QCOMPARE(y.rank(), nd + 2);
                std::vector<int64_t> outDims(y.dims.begin() + 2, y.dims.end());
                int64_t outSize = 1;
                for (size_t d = 0; d < nd; ++d) {
                    const int64_t span = k.in[d] + k.pads[d] + k.pads[d + nd] - k.kernel[d];
                    QCOMPARE(outDims[d], (k.ceil ? (span + k.strides[d] - 1) / k.strides[d] : span / k.strides[d]) + 1);
                    outSize *= outDims[d];
                }
                for (int64_t p = 0; p < planes; ++p)
                    for (int64_t o = 0; o < outSize; ++o) {
                        std::vector<int64_t> at(nd);  // the output's coordinates
                        for (int64_t rest = o, d = int64_t(nd) - 1; d >= 0; --d) at[size_t(d)] = rest % outDims[size_t(d)], rest /= outDims[size_t(d)];
                        float want = -std::numeric_limits<float>::infinity();
                        int64_t kSize = 1;
                        for (int64_t kd : k.kernel) kSize *= kd;
                        for (int64_t tap = 0; tap < kSize; ++tap) {
                            int64_t offset = 0, rest = tap;
                            bool inside = true;
                            for (int64_t d = int64_t(nd) - 1, stride = 1; d >= 0; --d) {
                                const int64_t kd = rest % k.kernel[size_t(d)];
                                rest /= k.kernel[size_t(d)];
                                const int64_t i = at[size_t(d)] * k.strides[size_t(d)] - k.pads[size_t(d)] + kd;
                                inside = inside && i >= 0 && i < k.in[size_t(d)];
                                offset += i * stride;
                                stride *= k.in[size_t(d)];
                            }
                            if (inside) want = std::max(want, input[size_t(p * inSize + offset)]);
                        }
                        const float got = type == DType::UInt8 ? float(y.as<uint8_t>()[p * outSize + o]) : y.as<float>()[p * outSize + o];
                        QVERIFY2(got == want, qPrintable(QString("%1-D pool %2 (%3): output %4 of plane %5 is %6, not %7")
                                                             .arg(nd).arg(&k - pools.data()).arg(QString::fromUtf8(dtypeName(type).data(), qsizetype(dtypeName(type).size()))).arg(o).arg(p).arg(got).arg(want)));
                    }
            }
    }

    // NCHW AveragePool at stride 1 (PoolFormer's token mixer), summed separably in float,
    // against the definition: pads either side, count_include_pad both ways, windows wider
    // than the image.
    void averagePoolsAtStrideOneMatchTheDefinition() {
        struct Pool {
            std::vector<int64_t> kernel, pads;  // pads: top, left, bottom, right
            int64_t includePad, h, w;
        };
        const std::vector<Pool> pools{{{3, 3}, {1, 1, 1, 1}, 0, 9, 11},  {{3, 3}, {1, 1, 1, 1}, 1, 9, 11},
                                      {{5, 3}, {2, 0, 1, 2}, 0, 8, 40},  {{5, 3}, {2, 0, 1, 2}, 1, 8, 40},
                                      {{2, 2}, {0, 0, 0, 0}, 0, 6, 7},   {{7, 7}, {3, 3, 3, 3}, 0, 5, 6},
                                      {{7, 7}, {3, 3, 3, 3}, 1, 5, 6}};
        std::mt19937 rng(29);
        const int64_t c = 3;
        for (const Pool& k : pools) {
            GraphBuilder gb;
            ValueId x = gb.input("x", DType::Float32, Shape::ofSizes({1, c, k.h, k.w}));
            gb.output(gb.op("AveragePool", {x}, "y",
                            {intsAttr("kernel_shape", k.kernel), intsAttr("pads", k.pads), intAttr("count_include_pad", k.includePad)}));
            Model model = gb.buildModel();
            auto exec = Executor::create(model, cpuExecutorOptions(2));
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            const auto input = randomValues(size_t(c * k.h * k.w), rng);
            RtTensor t = allocateTensor(DType::Float32, {1, c, k.h, k.w});
            std::copy(input.begin(), input.end(), t.as<float>());
            auto out = (*exec)->run({t});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            const RtTensor& y = (*out)[0];
            const int64_t oh = k.h + k.pads[0] + k.pads[2] - k.kernel[0] + 1, ow = k.w + k.pads[1] + k.pads[3] - k.kernel[1] + 1;
            QCOMPARE(y.dims, (std::vector<int64_t>{1, c, oh, ow}));
            for (int64_t p = 0; p < c; ++p)
                for (int64_t oy = 0; oy < oh; ++oy)
                    for (int64_t ox = 0; ox < ow; ++ox) {
                        double sum = 0;
                        int64_t inside = 0;
                        for (int64_t ky = 0; ky < k.kernel[0]; ++ky)
                            for (int64_t kx = 0; kx < k.kernel[1]; ++kx) {
                                const int64_t iy = oy - k.pads[0] + ky, ix = ox - k.pads[1] + kx;
                                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                                sum += input[size_t((p * k.h + iy) * k.w + ix)];
                                ++inside;
                            }
                        const double want = sum / double(k.includePad ? k.kernel[0] * k.kernel[1] : inside);
                        const float got = y.as<float>()[(p * oh + oy) * ow + ox];
                        QVERIFY2(std::abs(got - want) <= 1e-5,
                                 qPrintable(QString("%1x%2 pool, include pad %3: (%4, %5) is %6, not %7")
                                                .arg(k.kernel[0]).arg(k.kernel[1]).arg(k.includePad).arg(oy).arg(ox).arg(got).arg(want)));
                    }
        }
    }

    // ai.fusescope AveragePool on NHWC against ONNX's AveragePool on the same values in NCHW
    // (the kernel ONNX's conformance data checks): DenseNet's 2x2 stride 2, Inception's 3x3
    // with and without count_include_pad, ceil_mode's extra column, auto_pad, dilation; channel
    // counts under one vector, whole vectors, blocks of four and an overlapping last vector.
    void channelsLastAveragePoolMatchesOnnxs() {
        struct Pool {
            std::vector<int64_t> kernel, strides, dilations, pads;
            int64_t ceil, includePad;
            std::string autoPad;
        };
        const std::vector<Pool> pools{{{2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0, 0, "NOTSET"},
                                      {{3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 0, "NOTSET"},
                                      {{3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, "NOTSET"},
                                      {{3, 3}, {2, 2}, {1, 1}, {1, 0, 0, 1}, 1, 1, "NOTSET"},
                                      {{5, 3}, {1, 2}, {2, 1}, {2, 0, 1, 2}, 0, 1, "NOTSET"},
                                      {{3, 3}, {2, 2}, {1, 1}, {}, 0, 1, "SAME_UPPER"}};
        std::mt19937 rng(11);
        const int64_t h = 9, w = 11;
        for (const int64_t c : {3, 16, 20, 64, 72, 130})
            for (const Pool& k : pools) {
                std::vector<Attribute> attrs{intsAttr("kernel_shape", k.kernel), intsAttr("strides", k.strides),
                                             intsAttr("dilations", k.dilations), intAttr("ceil_mode", k.ceil),
                                             intAttr("count_include_pad", k.includePad), stringAttr("auto_pad", k.autoPad)};
                if (!k.pads.empty()) attrs.push_back(intsAttr("pads", k.pads));
                auto runPool = [&](bool channelsLast, const std::vector<float>& values) {
                    GraphBuilder gb;
                    const std::vector<int64_t> dims = channelsLast ? std::vector<int64_t>{1, h, w, c} : std::vector<int64_t>{1, c, h, w};
                    ValueId x = gb.input("x", DType::Float32, Shape::ofSizes(dims));
                    gb.output(gb.node("AveragePool", {x}, {"y"}, attrs, "pool", channelsLast ? "ai.fusescope" : "")[0]);
                    Model model = gb.buildModel();
                    model.opsetImports = {{"", 19}, {"ai.fusescope", 1}};
                    auto exec = Executor::create(model, cpuExecutorOptions(2));
                    if (!exec.isOk()) qFatal("%s", exec.status().message().c_str());
                    RtTensor t = allocateTensor(DType::Float32, dims);
                    std::copy(values.begin(), values.end(), t.as<float>());
                    auto out = (*exec)->run({t});
                    if (!out.isOk()) qFatal("%s", out.status().message().c_str());
                    return (*out)[0];
                };
                const std::vector<float> nchw = randomValues(size_t(h * w * c), rng);
                std::vector<float> nhwc(nchw.size());
                for (int64_t ch = 0; ch < c; ++ch)
                    for (int64_t p = 0; p < h * w; ++p) nhwc[size_t(p * c + ch)] = nchw[size_t(ch * h * w + p)];
                const RtTensor want = runPool(false, nchw), got = runPool(true, nhwc);
                const int64_t oh = want.dims[2], ow = want.dims[3];
                QCOMPARE(got.dims, (std::vector<int64_t>{1, oh, ow, c}));
                for (int64_t ch = 0; ch < c; ++ch)
                    for (int64_t p = 0; p < oh * ow; ++p) {
                        const float a = got.as<float>()[size_t(p * c + ch)], b = want.as<float>()[size_t(ch * oh * ow + p)];
                        QVERIFY2(std::abs(a - b) <= 1e-6f * (1 + std::abs(b)),
                                 qPrintable(QString("c %1, window %2x%3 (%4): pixel %5 channel %6 is %7, not %8")
                                                .arg(c).arg(k.kernel[0]).arg(k.kernel[1]).arg(k.autoPad.c_str()).arg(p).arg(ch).arg(a).arg(b)));
                    }
            }
    }

private:
    // 3x3 at stride 1 with channels oneDNN's Winograd kernels take: F(4x4, 3x3) runs on the
    // 30x29 image the tests add for these and F(2x2, 3x3) on the 16x15 one, where oneDNN
    // runs AVX-512 (not under ONEDNN_MAX_CPU_ISA=AVX2, whatever the CPU has).
    static bool winogradSized(const Case& k) {
        return k.kh == 3 && k.kw == 3 && k.sh == 1 && k.sw == 1 && k.dh == 1 && k.dw == 1 && k.group == 1 &&
               k.c % 16 == 0 && k.m % 16 == 0;
    }
    static bool oneDnnHasWinograd() { return cpu::OneDnnConv::hasAvx512(); }
    // oneDNN's Winograd kernels are taken with 32 channels or more on both sides.
    static bool oneDnnTakesWinograd(const Case& k) { return winogradSized(k) && std::min(k.c, k.m) >= 32; }
    // Where oneDNN has none, our route takes those sizes (with AVX2 and FMA).
    static bool ourWinogradRuns() {
        return cpu::WinogradConv::tileFor({1, 32, 30, 29, 30, 29, 3, 3, 1, 1, 1, 1, 1, 1}, 48, 1) != 0;
    }
    static std::vector<Case> cases_() {
        return {
            {"dense 3x3 (oneDNN)", 5, 7, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            {"dense 3x3, 32 to 48 channels (Winograd at 14x14 and up)", 32, 48, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            {"dense 3x3, 16 to 64 channels (oneDNN: direct, too few channels for Winograd)", 16, 64, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            {"dense 3x3 stride 2 asymmetric pads", 4, 6, 1, 3, 3, 2, 2, 1, 1, {0, 1, 2, 0}, false},
            {"dense 5x3 dilated", 3, 4, 1, 5, 3, 1, 2, 2, 1, {2, 1, 2, 1}, true},
            {"grouped", 6, 9, 3, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            {"pointwise (GEMM on NCHW)", 9, 5, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, true},
            {"pointwise no bias", 4, 3, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, false},
            {"pointwise 24 to 38 (register tiles, two rows left over)", 24, 38, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, true},
            {"pointwise 80 to 7 (sgemm)", 80, 7, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, true},
            {"pointwise stride 2", 4, 3, 1, 1, 1, 2, 2, 1, 1, {0, 0, 0, 0}, true},
            {"depthwise 3x3", 6, 6, 6, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            {"depthwise 3x3 stride 2", 5, 5, 5, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
            {"depthwise 3x3 stride 2 pads after only", 4, 4, 4, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, true},
            {"depthwise 3x3 stride 2 no pad", 3, 3, 3, 3, 3, 2, 2, 1, 1, {0, 0, 0, 0}, false},
            {"depthwise 3x3 no pad", 3, 3, 3, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}, false},
            {"depthwise 5x5 asymmetric pads", 4, 4, 4, 5, 5, 1, 1, 1, 1, {2, 1, 1, 2}, true},
            {"depthwise 5x5 stride 2", 4, 4, 4, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
            {"depthwise 5x4 stride 2 asymmetric pads", 3, 3, 3, 5, 4, 2, 2, 1, 1, {1, 2, 2, 1}, false},
            {"depthwise 3x3 dilated stride 2x1", 3, 3, 3, 3, 3, 2, 1, 2, 2, {2, 2, 2, 2}, true},
            {"depthwise 3x3 dilated 2 stride 1 (long-row path)", 3, 3, 3, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, true},
            {"depthwise 7x5 stride 1 (long-row path)", 4, 4, 4, 7, 5, 1, 1, 1, 1, {3, 2, 3, 2}, false},
            {"depthwise multiplier 2 (oneDNN)", 3, 6, 3, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            // Channel counts that fill the NHWC loop's 64- and 32-channel tiles and leave 16s and single ones.
            {"depthwise 3x3 70 channels", 70, 70, 70, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            {"depthwise 5x5 stride 2 96 channels", 96, 96, 96, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
            {"depthwise 3x3 dilated 37 channels asymmetric pads", 37, 37, 37, 3, 3, 1, 1, 2, 2, {2, 1, 0, 2}, false},
            {"depthwise 3x3 stride 2 136 channels", 136, 136, 136, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
            // The channels past the last 16 as one vector overlapping the channels before:
            // mnasnet's 120 by 5x5, shufflenet's 58, 20 (all but 4 overlapped); under 16 on a padded copy.
            {"depthwise 5x5 120 channels", 120, 120, 120, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
            {"depthwise 3x3 58 channels no pad", 58, 58, 58, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}, false},
            {"depthwise 5x5 stride 2 20 channels", 20, 20, 20, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
            {"depthwise 3x3 12 channels", 12, 12, 12, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
            // The sliding stride-2 tile with and without pads; rows 2 apart under columns that slide at stride 1.
            {"depthwise 3x3 stride 2 48 channels no pad", 48, 48, 48, 3, 3, 2, 2, 1, 1, {0, 0, 0, 0}, true},
            {"depthwise 3x3 stride 2x1 32 channels", 32, 32, 32, 3, 3, 2, 1, 1, 1, {1, 1, 1, 1}, false},
            {"depthwise 5x5 stride 1x2 16 channels (no slide)", 16, 16, 16, 5, 5, 1, 2, 1, 1, {2, 2, 2, 2}, true},
            // ConvNeXt's 7x7 windows slide too: whole blocks, an overlapping last vector.
            {"depthwise 7x7 48 channels", 48, 48, 48, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
            {"depthwise 7x7 20 channels asymmetric pads", 20, 20, 20, 7, 7, 1, 1, 1, 1, {3, 2, 1, 3}, false},
            // Large kernels slide eight pixels at a time (ConvMixer's 9x9): rows of fewer
            // outputs take the one-pixel tiles.
            {"depthwise 9x9 32 channels", 32, 32, 32, 9, 9, 1, 1, 1, 1, {4, 4, 4, 4}, true},
            {"depthwise 9x9 24 channels narrow pads", 24, 24, 24, 9, 9, 1, 1, 1, 1, {3, 2, 3, 3}, false},
            {"depthwise 11x11 20 channels asymmetric pads", 20, 20, 20, 11, 11, 1, 1, 1, 1, {5, 3, 4, 6}, true},
            {"depthwise 13x13 17 channels", 17, 17, 17, 13, 13, 1, 1, 1, 1, {6, 6, 6, 6}, true},
        };
    }
};

QTEST_GUILESS_MAIN(TestConvPaths)
#include "tst_conv_paths.moc"
