// Detection models' post-processing ops against their definitions written out here:
// NonMaxSuppression on boxes as torchvision's batched NMS hands them over (each class shifted
// past the last, so one call covers every class), on ordinary overlapping boxes, with either
// diagonal, centre-point boxes, score ties, NaN and infinite coordinates, and a box wider
// than the shift that overlaps its neighbours' classes. GatherElements and ScatterElements
// (MultiScaleRoIAlign's export scatters each level's pooled boxes into place) on index
// tensors smaller than the data along every dim, each axis, negative and int32 indices.
// TopK (the candidates per level before NMS) with ties, NaN, small and large k, along an
// inner axis, largest and smallest. NonZero on -0, NaN and bools, GatherND of single
// elements by int64 and int32 indices, Split into one piece and into one-element rows.
// ConvTranspose over a batch of images (Mask R-CNN's mask upsampling) on two threads.
// RoiAlign in both modes and coordinate conventions, adaptive and fixed sampling, regions
// of two images and regions reaching past the edge, on two threads.
#include <QtTest>

#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "compiler/runtime/executor.h"
#include "compiler/target.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"

using namespace fsc;

namespace {

struct NmsCase {
    int64_t batches, classes, boxes;
    std::vector<float> boxValues, scoreValues;  // [B, N, 4], [B, C, N]
    int64_t maxOut;
    float iou, scoreThreshold;
    bool centered = false;
};

// ONNX's definition: per batch and class, candidates above the threshold by score (ties by
// index), each kept unless its IoU with a kept box exceeds the threshold; every pair tried.
std::vector<std::array<int64_t, 3>> nmsByDefinition(const NmsCase& c) {
    auto corners = [&](int64_t b, int64_t i) {
        const float* v = c.boxValues.data() + (b * c.boxes + i) * 4;
        const double v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
        if (c.centered) return std::array<double, 4>{v1 - v3 / 2, v0 - v2 / 2, v1 + v3 / 2, v0 + v2 / 2};
        return std::array<double, 4>{std::min(v0, v2), std::min(v1, v3), std::max(v0, v2), std::max(v1, v3)};
    };
    auto iou = [&](const std::array<double, 4>& a, const std::array<double, 4>& d) {
        const double ix = std::max(0.0, std::min(a[2], d[2]) - std::max(a[0], d[0]));
        const double iy = std::max(0.0, std::min(a[3], d[3]) - std::max(a[1], d[1]));
        const double inter = ix * iy;
        const double uni = (a[2] - a[0]) * (a[3] - a[1]) + (d[2] - d[0]) * (d[3] - d[1]) - inter;
        return uni > 0 ? inter / uni : 0.0;
    };
    std::vector<std::array<int64_t, 3>> selected;
    for (int64_t b = 0; b < c.batches; ++b)
        for (int64_t k = 0; k < c.classes; ++k) {
            const float* score = c.scoreValues.data() + (b * c.classes + k) * c.boxes;
            std::vector<int64_t> order;
            for (int64_t i = 0; i < c.boxes; ++i)
                if (score[i] > c.scoreThreshold) order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return score[x] > score[y]; });
            std::vector<int64_t> kept;
            for (int64_t i : order) {
                if (int64_t(kept.size()) >= c.maxOut) break;
                bool suppressed = false;
                for (int64_t j : kept) suppressed = suppressed || iou(corners(b, i), corners(b, j)) > c.iou;
                if (!suppressed) kept.push_back(i);
            }
            for (int64_t i : kept) selected.push_back({b, k, i});
        }
    return selected;
}

std::vector<std::array<int64_t, 3>> nmsByKernel(const NmsCase& c) {
    GraphBuilder g;
    ValueId boxes = g.input("boxes", DType::Float32, Shape::ofSizes({c.batches, c.boxes, 4}));
    ValueId scores = g.input("scores", DType::Float32, Shape::ofSizes({c.batches, c.classes, c.boxes}));
    ValueId maxOut = g.initializer(int64Tensor("max_out", {1}, {c.maxOut}));
    ValueId iou = g.initializer(floatTensor("iou", {1}, {c.iou}));
    ValueId threshold = g.initializer(floatTensor("score_threshold", {1}, {c.scoreThreshold}));
    g.output(g.op("NonMaxSuppression", {boxes, scores, maxOut, iou, threshold}, "selected",
                  {intAttr("center_point_box", c.centered ? 1 : 0)}));
    Model m = g.buildModel(17);
    fillUnknownTypes(*m.graph);
    auto exec = Executor::create(m, cpuExecutorOptions());
    if (!exec) qFatal("%s", exec.status().message().c_str());
    RtTensor b = allocateTensor(DType::Float32, {c.batches, c.boxes, 4});
    RtTensor s = allocateTensor(DType::Float32, {c.batches, c.classes, c.boxes});
    std::copy(c.boxValues.begin(), c.boxValues.end(), b.as<float>());
    std::copy(c.scoreValues.begin(), c.scoreValues.end(), s.as<float>());
    auto out = (*exec)->run({b, s});
    if (!out) qFatal("%s", out.status().message().c_str());
    std::vector<std::array<int64_t, 3>> selected(size_t((*out)[0].dims[0]));
    for (size_t i = 0; i < selected.size(); ++i)
        for (size_t k = 0; k < 3; ++k) selected[i][k] = (*out)[0].as<int64_t>()[i * 3 + k];
    return selected;
}

// Boxes of up to `size` inside a `side` x `side` image, either diagonal first; scores in a
// few levels so that ties occur.
NmsCase randomCase(std::mt19937& rng, int64_t batches, int64_t classes, int64_t boxes, float side, float size) {
    std::uniform_real_distribution<float> at(0.f, side), extent(1.f, size);
    std::uniform_int_distribution<int> level(0, 20), coin(0, 1);
    NmsCase c{batches, classes, boxes, {}, {}, 1000000, 0.5f, 0.3f};
    for (int64_t i = 0; i < batches * boxes; ++i) {
        const float x = at(rng), y = at(rng), w = extent(rng), h = extent(rng);
        if (coin(rng)) c.boxValues.insert(c.boxValues.end(), {y, x, y + h, x + w});
        else c.boxValues.insert(c.boxValues.end(), {y + h, x + w, y, x});
    }
    for (int64_t i = 0; i < batches * classes * boxes; ++i) c.scoreValues.push_back(float(level(rng)) / 20.f);
    return c;
}

// Index i of a tensor of `dims` as coordinates.
std::vector<int64_t> coordinatesOf(int64_t i, const std::vector<int64_t>& dims) {
    std::vector<int64_t> at(dims.size());
    for (size_t d = dims.size(); d-- > 0;) at[d] = i % dims[d], i /= dims[d];
    return at;
}

int64_t offsetOf(const std::vector<int64_t>& at, const std::vector<int64_t>& dims) {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) off = off * dims[d] + at[d];
    return off;
}

// RoiAlign as ONNX's reference computes it: each bin the average (or the largest) of
// bilinear samples on a regular grid, each sample's four neighbours weighed first.
std::vector<float> roiAlignByDefinition(const std::vector<float>& image, int64_t c, int64_t h, int64_t w,
                                        const std::vector<float>& rois, const std::vector<int64_t>& batch,
                                        int64_t outH, int64_t outW, int64_t ratio, float scale, bool maxMode,
                                        bool halfPixel) {
    std::vector<float> out;
    const double offset = halfPixel ? 0.5 : 0.0;
    for (size_t r = 0; r < batch.size(); ++r) {
        const double x1 = rois[r * 4] * scale - offset, y1 = rois[r * 4 + 1] * scale - offset;
        double rw = rois[r * 4 + 2] * scale - offset - x1, rh = rois[r * 4 + 3] * scale - offset - y1;
        if (!halfPixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
        const int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / double(outH)));
        const int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / double(outW)));
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t ph = 0; ph < outH; ++ph)
                for (int64_t pw = 0; pw < outW; ++pw) {
                    double sum = 0, best = -INFINITY;
                    for (int64_t iy = 0; iy < gh; ++iy)
                        for (int64_t ix = 0; ix < gw; ++ix) {
                            double y = y1 + (double(ph) + (double(iy) + 0.5) / double(gh)) * rh / double(outH);
                            double x = x1 + (double(pw) + (double(ix) + 0.5) / double(gw)) * rw / double(outW);
                            double v[4] = {0, 0, 0, 0};
                            if (!(y < -1.0 || y > double(h) || x < -1.0 || x > double(w))) {
                                y = std::max(y, 0.0), x = std::max(x, 0.0);
                                int64_t y0 = int64_t(y), x0 = int64_t(x), y2 = y0 + 1, x2 = x0 + 1;
                                if (y0 >= h - 1) y0 = y2 = h - 1, y = double(y0);
                                if (x0 >= w - 1) x0 = x2 = w - 1, x = double(x0);
                                const double ly = y - double(y0), lx = x - double(x0);
                                const float* plane = image.data() + (batch[r] * c + ch) * h * w;
                                v[0] = (1 - ly) * (1 - lx) * plane[y0 * w + x0];
                                v[1] = (1 - ly) * lx * plane[y0 * w + x2];
                                v[2] = ly * (1 - lx) * plane[y2 * w + x0];
                                v[3] = ly * lx * plane[y2 * w + x2];
                            }
                            for (double each : v) sum += each, best = std::max(best, each);
                        }
                    out.push_back(float(maxMode ? best : sum / double(std::max<int64_t>(gh * gw, 1))));
                }
    }
    return out;
}

}  // namespace

class TestDetectionOps : public QObject {
    Q_OBJECT

private slots:
    void nonMaxSuppressionOnOverlappingBoxes() {
        std::mt19937 rng(5);
        NmsCase c = randomCase(rng, 2, 3, 300, 30.f, 30.f);
        const auto want = nmsByDefinition(c);
        QVERIFY(want.size() > 20 && want.size() < 900);  // some kept, a third of 1,260 candidates suppressed
        QCOMPARE(nmsByKernel(c), want);
        c.maxOut = 4;  // the cap per batch and class
        QCOMPARE(nmsByKernel(c), nmsByDefinition(c));
        c.maxOut = 0;
        QVERIFY(nmsByKernel(c).empty());
        c.maxOut = 1000000;
        c.centered = true;
        QCOMPARE(nmsByKernel(c), nmsByDefinition(c));
    }

    // torchvision's batched NMS: class k's boxes shifted by k * (largest coordinate + 1) along
    // both axes, all scored as one class. A few boxes wider than the shift reach into the
    // next classes' columns and must still suppress (and be suppressed by) boxes there.
    void nonMaxSuppressionOnShiftedClasses() {
        std::mt19937 rng(9);
        const int64_t classes = 40, perClass = 150;
        NmsCase c = randomCase(rng, 1, 1, classes * perClass, 320.f, 120.f);
        for (int64_t i = 0; i < c.boxes; ++i)
            for (int k = 0; k < 4; ++k) c.boxValues[size_t(i * 4 + k)] += float(i / perClass) * 321.f;
        for (int64_t i = 0; i < c.boxes; i += 97) {  // wide boxes across three classes
            c.boxValues[size_t(i * 4 + 1)] = std::min(c.boxValues[size_t(i * 4 + 1)], c.boxValues[size_t(i * 4 + 3)]);
            c.boxValues[size_t(i * 4 + 3)] = c.boxValues[size_t(i * 4 + 1)] + 900.f;
            c.scoreValues[size_t(i)] = 1.f;
        }
        c.iou = 0.1f;
        const auto want = nmsByDefinition(c);
        QVERIFY(want.size() > size_t(classes));
        QCOMPARE(nmsByKernel(c), want);
    }

    // A NaN box is never suppressed and suppresses nothing; an infinite one spans everything.
    void nonMaxSuppressionWithNonFiniteBoxes() {
        std::mt19937 rng(3);
        NmsCase c = randomCase(rng, 1, 2, 120, 50.f, 20.f);
        const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
        c.boxValues[4] = nan;
        c.boxValues[40 + 2] = nan;
        c.boxValues[80 + 3] = inf;
        c.scoreValues[1] = c.scoreValues[10] = c.scoreValues[20] = 1.f;
        QCOMPARE(nmsByKernel(c), nmsByDefinition(c));
        c.boxValues[0] = -inf;  // the span of the columns is no longer finite
        QCOMPARE(nmsByKernel(c), nmsByDefinition(c));
    }

    void scatterAndGatherElementsMatchTheDefinition() {
        std::mt19937 rng(11);
        std::uniform_int_distribution<int64_t> size(1, 5);
        for (int rank = 1; rank <= 4; ++rank)
            for (int axis = 0; axis < rank; ++axis)
                for (DType indexType : {DType::Int64, DType::Int32}) {
                    std::vector<int64_t> dataDims(static_cast<size_t>(rank)), idxDims(static_cast<size_t>(rank));
                    for (int d = 0; d < rank; ++d) {
                        dataDims[size_t(d)] = size(rng) + 1;
                        idxDims[size_t(d)] = d == axis ? size(rng) : std::uniform_int_distribution<int64_t>(1, dataDims[size_t(d)])(rng);
                    }
                    int64_t dataCount = 1, idxCount = 1;
                    for (int d = 0; d < rank; ++d) dataCount *= dataDims[size_t(d)], idxCount *= idxDims[size_t(d)];
                    const int64_t len = dataDims[size_t(axis)];
                    std::vector<float> data(static_cast<size_t>(dataCount)), updates(static_cast<size_t>(idxCount));
                    std::vector<int64_t> indices(static_cast<size_t>(idxCount));
                    for (size_t i = 0; i < data.size(); ++i) data[i] = float(i) + 0.5f;
                    for (size_t i = 0; i < updates.size(); ++i) updates[i] = -float(i) - 1.f;
                    for (int64_t& v : indices) v = std::uniform_int_distribution<int64_t>(-len, len - 1)(rng);
                    // The definitions: out[i with i[axis] = index] (gather), and ScatterElements
                    // writing each update there in index order (the last write wins) or adding.
                    std::vector<float> gathered(updates.size()), scattered = data, added = data;
                    for (int64_t i = 0; i < idxCount; ++i) {
                        auto at = coordinatesOf(i, idxDims);
                        const int64_t v = indices[size_t(i)];
                        at[size_t(axis)] = v < 0 ? v + len : v;
                        const int64_t off = offsetOf(at, dataDims);
                        gathered[size_t(i)] = data[size_t(off)];
                        scattered[size_t(off)] = updates[size_t(i)];
                        added[size_t(off)] += updates[size_t(i)];
                    }
                    GraphBuilder g;
                    ValueId x = g.input("x", DType::Float32, Shape::ofSizes(dataDims));
                    ValueId u = g.input("u", DType::Float32, Shape::ofSizes(idxDims));
                    ValueId idx = g.input("idx", indexType, Shape::ofSizes(idxDims));
                    g.output(g.op("GatherElements", {x, idx}, "gathered", {intAttr("axis", axis)}));
                    g.output(g.op("ScatterElements", {x, idx, u}, "scattered", {intAttr("axis", axis)}));
                    g.output(g.op("ScatterElements", {x, idx, u}, "added", {intAttr("axis", axis), stringAttr("reduction", "add")}));
                    Model m = g.buildModel(18);
                    fillUnknownTypes(*m.graph);
                    auto exec = Executor::create(m, cpuExecutorOptions());
                    QVERIFY2(exec.isOk(), exec.status().message().c_str());
                    RtTensor tx = allocateTensor(DType::Float32, dataDims), tu = allocateTensor(DType::Float32, idxDims);
                    RtTensor ti = allocateTensor(indexType, idxDims);
                    std::copy(data.begin(), data.end(), tx.as<float>());
                    std::copy(updates.begin(), updates.end(), tu.as<float>());
                    for (size_t i = 0; i < indices.size(); ++i)
                        if (indexType == DType::Int64) ti.as<int64_t>()[i] = indices[i];
                        else ti.as<int32_t>()[i] = int32_t(indices[i]);
                    auto out = (*exec)->run({tx, tu, ti});
                    QVERIFY2(out.isOk(), out.status().message().c_str());
                    const QByteArray what = QStringLiteral("rank %1 axis %2").arg(rank).arg(axis).toUtf8();
                    auto values = [](const RtTensor& t) { return std::vector<float>(t.as<float>(), t.as<float>() + t.numel()); };
                    QVERIFY2(values((*out)[0]) == gathered, what.constData());
                    QVERIFY2(values((*out)[1]) == scattered, what.constData());
                    QVERIFY2(values((*out)[2]) == added, what.constData());
                    if (indexType == DType::Int64) ti.as<int64_t>()[0] = len;
                    else ti.as<int32_t>()[0] = int32_t(len);
                    auto bad = (*exec)->run({tx, tu, ti});
                    QVERIFY2(!bad.isOk() && bad.status().message().find("out of range") != std::string::npos, what.constData());
                }
    }

    void topKMatchesTheDefinition() {
        std::mt19937 rng(17);
        std::uniform_int_distribution<int> level(0, 40);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (int64_t len : {1, 7, 300, 5000})
            for (int64_t k : {int64_t(0), int64_t(1), len / 3, len})
                for (int largest : {1, 0})
                    for (int axis : {0, 1}) {
                        const std::vector<int64_t> dims = axis == 1 ? std::vector<int64_t>{2, len, 3} : std::vector<int64_t>{len, 2};
                        const int64_t inner = axis == 1 ? 3 : 2, outer = axis == 1 ? 2 : 1;
                        std::vector<float> x(static_cast<size_t>(outer * len * inner));
                        for (float& v : x) v = level(rng) == 0 ? nan : float(level(rng)) * 0.25f;  // ties
                        GraphBuilder g;
                        ValueId in = g.input("x", DType::Float32, Shape::ofSizes(dims));
                        ValueId kk = g.initializer(int64Tensor("k", {1}, {k}));
                        const auto outs = g.node("TopK", {in, kk}, {"values", "indices"},
                                                    {intAttr("axis", axis), intAttr("largest", largest)});
                        g.output(outs[0]);
                        g.output(outs[1]);
                        Model m = g.buildModel(17);
                        fillUnknownTypes(*m.graph);
                        auto exec = Executor::create(m, cpuExecutorOptions());
                        QVERIFY2(exec.isOk(), exec.status().message().c_str());
                        RtTensor t = allocateTensor(DType::Float32, dims);
                        std::copy(x.begin(), x.end(), t.as<float>());
                        auto out = (*exec)->run({t});
                        QVERIFY2(out.isOk(), out.status().message().c_str());
                        const QByteArray what = QStringLiteral("len %1 k %2 largest %3 axis %4").arg(len).arg(k).arg(largest).arg(axis).toUtf8();
                        for (int64_t o = 0; o < outer; ++o)
                            for (int64_t i = 0; i < inner; ++i) {
                                auto at = [&](int64_t j) { return x[size_t((o * len + j) * inner + i)]; };
                                // By value (NaN beyond every number), equal values by index.
                                std::vector<int64_t> want(static_cast<size_t>(len));
                                std::iota(want.begin(), want.end(), 0);
                                std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
                                    const float va = at(a), vb = at(b);
                                    const bool na = std::isnan(va), nb = std::isnan(vb);
                                    if (na || nb) return na != nb && (largest ? na : nb);
                                    return largest ? va > vb : va < vb;
                                });
                                for (int64_t j = 0; j < k; ++j) {
                                    const int64_t got = (*out)[1].as<int64_t>()[(o * k + j) * inner + i];
                                    QVERIFY2(got == want[size_t(j)], what.constData());
                                    const float value = (*out)[0].as<float>()[(o * k + j) * inner + i];
                                    QVERIFY2(std::isnan(value) ? std::isnan(at(got)) : value == at(got), what.constData());
                                }
                            }
                    }
    }

    void nonZeroGatherNdAndSplitOnDetectionShapes() {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({2, 3}));
        ValueId flags = g.input("flags", DType::Bool, Shape::ofSizes({4}));
        ValueId idx32 = g.input("idx32", DType::Int32, Shape::ofSizes({3, 2}));
        ValueId positions = g.op("NonZero", {x}, "positions");              // [2, hits]
        ValueId pairs = g.op("Transpose", {positions}, "pairs", {});        // [hits, 2]
        g.output(positions);
        g.output(g.op("NonZero", {flags}, "flagged"));
        g.output(g.op("GatherND", {x, pairs}, "picked"));                    // int64, one element each
        g.output(g.op("GatherND", {x, idx32}, "picked32"));
        const auto whole = g.node("Split", {x}, {"whole"}, {intAttr("axis", 1), intAttr("num_outputs", 1)});
        const auto columns = g.node("Split", {x}, {"c0", "c1", "c2"}, {intAttr("axis", 1), intAttr("num_outputs", 3)});
        g.output(whole[0]);
        for (ValueId c : columns) g.output(c);
        Model m = g.buildModel(18);
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        RtTensor tx = allocateTensor(DType::Float32, {2, 3}), tf = allocateTensor(DType::Bool, {4});
        RtTensor ti = allocateTensor(DType::Int32, {3, 2});
        const std::vector<float> values{0.f, -0.f, 2.f, nan, 0.f, -3.f};
        std::copy(values.begin(), values.end(), tx.as<float>());
        const bool flagValues[] = {false, true, true, false};
        std::copy(std::begin(flagValues), std::end(flagValues), tf.as<bool>());
        const int32_t idxValues[] = {1, 2, 0, -1, 1, 0};
        std::copy(std::begin(idxValues), std::end(idxValues), ti.as<int32_t>());
        auto out = (*exec)->run({tx, tf, ti});
        QVERIFY2(out.isOk(), out.status().message().c_str());
        auto ints = [](const RtTensor& t) { return std::vector<int64_t>(t.as<int64_t>(), t.as<int64_t>() + t.numel()); };
        auto floatsOf = [](const RtTensor& t) { return std::vector<float>(t.as<float>(), t.as<float>() + t.numel()); };
        QCOMPARE((*out)[0].dims, (std::vector<int64_t>{2, 3}));  // 2, NaN and -3 at (0,2), (1,0), (1,2)
        QCOMPARE(ints((*out)[0]), (std::vector<int64_t>{0, 1, 1, 2, 0, 2}));
        QCOMPARE(ints((*out)[1]), (std::vector<int64_t>{1, 2}));
        const auto picked = floatsOf((*out)[2]);
        QCOMPARE(picked.size(), size_t(3));
        QVERIFY(picked[0] == 2.f && std::isnan(picked[1]) && picked[2] == -3.f);
        const auto picked32 = floatsOf((*out)[3]);  // (1, 2), (0, -1), (1, 0)
        QVERIFY(picked32.size() == 3 && picked32[0] == -3.f && picked32[1] == 2.f && std::isnan(picked32[2]));
        QVERIFY(std::isnan(floatsOf((*out)[4])[3]));
        QCOMPARE((*out)[4].dims, (std::vector<int64_t>{2, 3}));
        const auto first = floatsOf((*out)[5]);  // column 0: 0 and NaN
        QVERIFY(first.size() == 2 && first[0] == 0.f && std::isnan(first[1]));
        QCOMPARE(floatsOf((*out)[6]), (std::vector<float>{-0.f, 0.f}));
        QCOMPARE((*out)[7].dims, (std::vector<int64_t>{2, 1}));
        QCOMPARE(floatsOf((*out)[7]), (std::vector<float>{2.f, -3.f}));
    }

    // The generic path (overlapping windows, padding, groups) and the one for windows that
    // tile the output exactly (kernel = stride: Mask R-CNN's 2x2 upsampling, and 2x3).
    void batchedConvTransposeMatchesTheDefinition() {
        struct Config {
            int64_t kh, kw, sh, sw, pad;
            bool bias;
        };
        for (const Config cfg : {Config{3, 3, 2, 2, 1, true}, Config{2, 2, 2, 2, 0, false}, Config{2, 3, 2, 3, 0, true}}) {
            const int64_t n = 6, c = 4, m = 6, group = 2, h = 5, w = 4, pad = cfg.pad;
            const int64_t oh = (h - 1) * cfg.sh - 2 * pad + cfg.kh, ow = (w - 1) * cfg.sw - 2 * pad + cfg.kw;
            const QByteArray what = QByteArray::number(qlonglong(cfg.kh)) + "x" + QByteArray::number(qlonglong(cfg.kw));
            std::mt19937 rng(23);
            std::uniform_real_distribution<float> real(-1.f, 1.f);
            std::vector<float> x(static_cast<size_t>(n * c * h * w)), wt(static_cast<size_t>(c * (m / group) * cfg.kh * cfg.kw)),
                bias(static_cast<size_t>(m));
            for (auto* v : {&x, &wt, &bias})
                for (float& e : *v) e = real(rng);
            if (!cfg.bias) std::fill(bias.begin(), bias.end(), 0.f);
            GraphBuilder g;
            ValueId in = g.input("x", DType::Float32, Shape::ofSizes({n, c, h, w}));
            std::vector<ValueId> inputs{in, g.initializer(floatTensor("w", {c, m / group, cfg.kh, cfg.kw}, wt))};
            if (cfg.bias) inputs.push_back(g.initializer(floatTensor("b", {m}, bias)));
            g.output(g.op("ConvTranspose", inputs, "y",
                          {intAttr("group", group), intsAttr("strides", {cfg.sh, cfg.sw}), intsAttr("pads", {pad, pad, pad, pad})}));
            Model model = g.buildModel(17);
            fillUnknownTypes(*model.graph);
            auto exec = Executor::create(model, cpuExecutorOptions(2));
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            RtTensor tx = allocateTensor(DType::Float32, {n, c, h, w});
            std::copy(x.begin(), x.end(), tx.as<float>());
            auto out = (*exec)->run({tx});
            QVERIFY2(out.isOk(), out.status().message().c_str());
            QCOMPARE((*out)[0].dims, (std::vector<int64_t>{n, m, oh, ow}));
            // y[i, o, p, q] = b[o] + sum over the group's inputs ci and taps with p = ih*s + kh - pad.
            std::vector<double> want(static_cast<size_t>(n * m * oh * ow));
            for (int64_t i = 0; i < n; ++i)
                for (int64_t o = 0; o < m; ++o) {
                    const int64_t grp = o / (m / group), om = o % (m / group);
                    for (int64_t p = 0; p < oh * ow; ++p) want[size_t((i * m + o) * oh * ow + p)] = bias[size_t(o)];
                    for (int64_t ci = grp * (c / group); ci < (grp + 1) * (c / group); ++ci)
                        for (int64_t ih = 0; ih < h; ++ih)
                            for (int64_t iw = 0; iw < w; ++iw)
                                for (int64_t kh = 0; kh < cfg.kh; ++kh)
                                    for (int64_t kw = 0; kw < cfg.kw; ++kw) {
                                        const int64_t p = ih * cfg.sh + kh - pad, q = iw * cfg.sw + kw - pad;
                                        if (p < 0 || p >= oh || q < 0 || q >= ow) continue;
                                        want[size_t(((i * m + o) * oh + p) * ow + q)] +=
                                            double(x[size_t(((i * c + ci) * h + ih) * w + iw)]) *
                                            wt[size_t(((ci * (m / group) + om) * cfg.kh + kh) * cfg.kw + kw)];
                                    }
                }
            for (size_t e = 0; e < want.size(); ++e)
                QVERIFY2(std::fabs((*out)[0].as<float>()[e] - want[e]) <= 1e-5 * (1 + std::fabs(want[e])),
                         qPrintable(what + QStringLiteral(" element %1: %2, expected %3").arg(e).arg((*out)[0].as<float>()[e]).arg(want[e])));
        }
    }

    // A Concat of few long rows (Mask R-CNN's paste loop grows [n, 320, 320] by one mask a
    // turn) splits each row's bytes over the threads: every byte lands where it belongs,
    // across piece boundaries that fall inside a stretch.
    void concatOfFewLongRowsOverThreads() {
        struct Case {
            std::vector<std::vector<int64_t>> dims;
            int64_t axis;
        };
        for (const Case& c : {Case{{{7, 200, 201}, {1, 200, 201}}, 0}, Case{{{1, 5, 300, 299}, {1, 2, 300, 299}, {1, 1, 300, 299}}, 1},
                              Case{{{2, 3, 100, 1000}, {2, 1, 100, 1000}}, 1}}) {
            GraphBuilder g;
            std::vector<ValueId> ins;
            std::vector<RtTensor> feeds;
            float next = 0.f;
            for (size_t i = 0; i < c.dims.size(); ++i) {
                ins.push_back(g.input("x" + std::to_string(i), DType::Float32, Shape::ofSizes(c.dims[i])));
                RtTensor t = allocateTensor(DType::Float32, c.dims[i]);
                for (int64_t e = 0; e < t.numel(); ++e) t.as<float>()[e] = next++;
                feeds.push_back(std::move(t));
            }
            g.output(g.op("Concat", ins, "y", {intAttr("axis", c.axis)}));
            Model model = g.buildModel(17);
            fillUnknownTypes(*model.graph);
            auto exec = Executor::create(model, cpuExecutorOptions(2));
            QVERIFY2(exec.isOk(), exec.status().message().c_str());
            auto out = (*exec)->run(feeds);
            QVERIFY2(out.isOk(), out.status().message().c_str());
            // Expected: for each outer index, each input's slab in turn.
            const size_t a = size_t(c.axis);
            int64_t outer = 1;
            for (size_t d = 0; d < a; ++d) outer *= c.dims[0][d];
            std::vector<float> want;
            for (int64_t o = 0; o < outer; ++o)
                for (const RtTensor& t : feeds) {
                    const int64_t slab = t.numel() / outer;
                    want.insert(want.end(), t.as<float>() + o * slab, t.as<float>() + (o + 1) * slab);
                }
            QCOMPARE((*out)[0].numel(), int64_t(want.size()));
            QVERIFY(std::equal(want.begin(), want.end(), (*out)[0].as<float>()));
        }
    }

    void roiAlignMatchesTheDefinition() {
        const int64_t n = 2, c = 3, h = 9, w = 11;
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> value(-2.f, 2.f);
        std::vector<float> image(size_t(n * c * h * w));
        for (float& v : image) v = value(rng);
        // Regions in input pixels (spatial_scale 0.5): inside, reaching past the right and
        // bottom edges, starting before the image, smaller than a bin, one on each image.
        const std::vector<float> rois = {2, 2, 14, 12, 10, 6, 30, 25, -3, -1, 5, 4, 7, 7, 7.5f, 7.2f, 0, 0, 22, 18};
        const std::vector<int64_t> batch = {0, 1, 1, 0, 1};
        const int64_t r = int64_t(batch.size());
        for (const char* mode : {"avg", "max"})
            for (const char* transform : {"half_pixel", "output_half_pixel"})
                for (int64_t ratio : {0, 2}) {
                    const QByteArray what = QByteArray(mode) + " " + transform + " ratio " + QByteArray::number(qlonglong(ratio));
                    GraphBuilder g;
                    ValueId x = g.input("x", DType::Float32, Shape::ofSizes({n, c, h, w}));
                    ValueId boxes = g.initializer(floatTensor("rois", {r, 4}, rois));
                    ValueId indices = g.initializer(int64Tensor("batch", {r}, batch));
                    g.output(g.op("RoiAlign", {x, boxes, indices}, "y",
                                  {stringAttr("mode", mode), stringAttr("coordinate_transformation_mode", transform),
                                   intAttr("output_height", 3), intAttr("output_width", 4), intAttr("sampling_ratio", ratio),
                                   floatAttr("spatial_scale", 0.5f)}));
                    Model m = g.buildModel(16);
                    fillUnknownTypes(*m.graph);
                    auto exec = Executor::create(m, cpuExecutorOptions(2));
                    QVERIFY2(bool(exec), what.constData());
                    RtTensor in = allocateTensor(DType::Float32, {n, c, h, w});
                    std::copy(image.begin(), image.end(), in.as<float>());
                    auto out = (*exec)->run({in});
                    QVERIFY2(bool(out), what.constData());
                    const std::vector<float> want = roiAlignByDefinition(image, c, h, w, rois, batch, 3, 4, ratio, 0.5f,
                                                                         std::string(mode) == "max",
                                                                         std::string(transform) == "half_pixel");
                    QCOMPARE((*out)[0].dims, (std::vector<int64_t>{r, c, 3, 4}));
                    for (size_t i = 0; i < want.size(); ++i)
                        QVERIFY2(std::abs((*out)[0].as<float>()[i] - want[i]) <= 1e-5f * (1 + std::abs(want[i])),
                                 (what + " element " + QByteArray::number(qulonglong(i))).constData());
                }
    }

    void elementsIndicesLargerThanTheDataAreRefused() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({2, 3}));
        ValueId idx = g.input("idx", DType::Int64, Shape::ofSizes({3, 3}));
        g.output(g.op("GatherElements", {x, idx}, "y", {intAttr("axis", 1)}));
        Model m = g.buildModel(17);
        fillUnknownTypes(*m.graph);
        auto exec = Executor::create(m, cpuExecutorOptions());
        QVERIFY2(exec.isOk(), exec.status().message().c_str());
        RtTensor tx = allocateTensor(DType::Float32, {2, 3}), ti = allocateTensor(DType::Int64, {3, 3});
        auto out = (*exec)->run({tx, ti});
        QVERIFY(!out.isOk());
        QVERIFY2(out.status().message().find("exceed data") != std::string::npos, out.status().message().c_str());
    }
};

QTEST_APPLESS_MAIN(TestDetectionOps)
#include "tst_detection_ops.moc"
