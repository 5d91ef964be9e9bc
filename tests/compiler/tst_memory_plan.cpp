// Memory planning: lifetimes over the schedule, offsets that never collide while both
// buffers are alive, and the arena against the naive sum and the lower bound.
#include <QtTest>

#include <algorithm>
#include <random>
#include <string>

#include "compiler/cost_model.h"
#include "compiler/runtime/memory_plan.h"
#include "core/graph_builder.h"
#include "core/onnx_import.h"
#include "core/shape_inference.h"

using namespace fsc;

namespace {

// The plan against the buffers it was given (not its own copy of them): every buffer
// assigned exactly once with its lifetime and size unchanged, inside the arena, and no two
// buffers alive at the same step sharing a byte. Also checks the naive sum and the lower
// bound, worked out here from the inputs. Returns what is wrong, or an empty string.
std::string planProblems(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan) {
    if (plan.assignments.size() != buffers.size())
        return std::to_string(plan.assignments.size()) + " assignments for " + std::to_string(buffers.size()) +
               " buffers";
    std::vector<size_t> offsets(buffers.size());
    std::vector<bool> seen(buffers.size(), false);
    for (const auto& a : plan.assignments) {
        const auto it = std::find_if(buffers.begin(), buffers.end(),
                                     [&](const BufferLifetime& b) { return b.value == a.buffer.value; });
        if (it == buffers.end()) return "an assignment for a value that is not a buffer";
        const size_t k = size_t(it - buffers.begin());
        if (seen[k]) return "buffer " + std::to_string(k) + " assigned twice";
        seen[k] = true;
        if (a.buffer.bytes != it->bytes || a.buffer.firstStep != it->firstStep || a.buffer.lastStep != it->lastStep)
            return "buffer " + std::to_string(k) + "'s size or lifetime changed";
        if (a.offset + it->bytes > plan.arenaBytes) return "buffer " + std::to_string(k) + " ends past the arena";
        offsets[k] = a.offset;
    }
    size_t naive = 0, lastStep = 0;
    for (const BufferLifetime& b : buffers) naive += b.bytes, lastStep = std::max(lastStep, b.lastStep);
    if (plan.naiveBytes != naive) return "naive bytes " + std::to_string(plan.naiveBytes) + ", expected " + std::to_string(naive);
    size_t peak = 0;
    for (size_t step = 0; step <= lastStep; ++step) {
        size_t live = 0;
        for (const BufferLifetime& b : buffers) live += b.firstStep <= step && step <= b.lastStep ? b.bytes : 0;
        peak = std::max(peak, live);
    }
    if (plan.lowerBoundBytes != peak)
        return "lower bound " + std::to_string(plan.lowerBoundBytes) + ", expected " + std::to_string(peak);
    for (size_t i = 0; i < buffers.size(); ++i) {
        for (size_t j = i + 1; j < buffers.size(); ++j) {
            const BufferLifetime &a = buffers[i], &b = buffers[j];
            const bool liveTogether = a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
            const bool overlap = offsets[i] < offsets[j] + b.bytes && offsets[j] < offsets[i] + a.bytes;
            if (liveTogether && overlap)
                return "buffers " + std::to_string(i) + " and " + std::to_string(j) + " overlap while both are alive";
        }
    }
    return {};
}

}  // namespace

class TestMemoryPlan : public QObject {
    Q_OBJECT
private slots:
    // A named product dim (batch*197, as shape inference writes a Reshape's folded dims)
    // is its symbol's value times the factor, for the cost model as for the plan: a ViT's
    // attention projections were costed as one row instead of 197.
    void aNamedProductDimIsItsSymbolTimesTheFactor() {
        const DimBindings bindings{{"batch", 2}};
        QCOMPARE(boundSize(Dim::symbolic("batch*197"), bindings), std::optional<int64_t>(394));
        QCOMPARE(boundSize(Dim::symbolic("batch"), bindings), std::optional<int64_t>(2));
        QCOMPARE(boundSize(Dim::known(7), bindings), std::optional<int64_t>(7));
        QVERIFY(!boundSize(Dim::symbolic("seq*4"), bindings));
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch*197"), Dim::known(768)}));
        ValueId y = b.op("MatMul", {x, b.input("w", DType::Float32, Shape::ofSizes({768, 64}))}, "y");
        b.output(y);
        Graph g = b.graph();
        g.value(y).type = ValueType::tensor(DType::Float32, Shape({Dim::symbolic("batch*197"), Dim::known(64)}));
        const NodeCost cost = estimateNodeCost(g, g.node(g.order()[0]), bindings);
        QCOMPARE(cost.flops, 2.0 * 394 * 768 * 64);
        auto bytes = valueBytes(g.value(y), bindings, 1);
        QVERIFY(bytes.isOk());
        QCOMPARE(*bytes, size_t(394 * 64 * 4));
    }

    // A quantized convolution costs what a float one does: its W is QLinearConv's fourth
    // input, and the count holds in NHWC (channels-last's form) as in NCHW.
    void quantizedConvolutionsAreCosted() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::UInt8, Shape::ofSizes({1, 14, 14, 32}));
        ValueId s = b.input("s", DType::Float32, Shape::ofSizes({}));
        ValueId z = b.input("z", DType::UInt8, Shape::ofSizes({}));
        ValueId w = b.input("w", DType::Int8, Shape::ofSizes({64, 32, 3, 3}));
        ValueId wz = b.input("wz", DType::Int8, Shape::ofSizes({}));
        ValueId y = b.node("QLinearConv", {x, s, z, w, s, wz, s, z}, {"y"}, {intAttr("channels_last", 1)}, "conv",
                           "com.microsoft")[0];
        b.output(y);
        Graph g = b.graph();
        g.value(y).type = ValueType::tensor(DType::UInt8, Shape::ofSizes({1, 14, 14, 64}));
        QCOMPARE(estimateNodeCost(g, g.node(g.order()[0])).flops, 2.0 * 14 * 14 * 64 * 32 * 9);
    }

    // ONNX Runtime's quantized and packed forms cost their products: a dynamically quantized
    // product as a float one, QAttention its packed projection and both attention products.
    void quantizedProductsAndPackedAttentionAreCosted() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 16, 64}));
        ValueId w = b.input("w", DType::Int8, Shape::ofSizes({64, 96}));
        ValueId s = b.input("s", DType::Float32, Shape::ofSizes({}));
        ValueId y = b.node("DynamicQuantizeMatMul", {x, w, s}, {"y"}, {}, "product", "com.microsoft")[0];
        ValueId xq = b.input("xq", DType::UInt8, Shape::ofSizes({2, 16, 64}));
        ValueId wq = b.input("wq", DType::Int8, Shape::ofSizes({64, 192}));
        ValueId bias = b.input("bias", DType::Float32, Shape::ofSizes({192}));
        ValueId att = b.node("QAttention", {xq, wq, bias, s, s}, {"att"}, {intAttr("num_heads", 4)}, "attention",
                             "com.microsoft")[0];
        b.output(y);
        b.output(att);
        Graph g = b.graph();
        fillUnknownTypes(g);
        QCOMPARE(estimateNodeCost(g, g.node(g.order()[0])).flops, 2.0 * 2 * 16 * 96 * 64);
        QCOMPARE(estimateNodeCost(g, g.node(g.order()[1])).flops, 2.0 * 32 * 64 * 192 + 2.0 * 32 * 16 * (64 + 64));
    }

    void aChainNeedsTwoBuffers() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({1, 256}));
        ValueId v = x;
        for (int i = 0; i < 4; ++i) v = b.op("Relu", {v}, "r" + std::to_string(i));
        b.output(v);
        fillUnknownTypes(b.graph());
        auto lifetimes = computeLifetimes(b.graph());
        QVERIFY2(lifetimes.isOk(), lifetimes.status().message().c_str());
        QCOMPARE(lifetimes->size(), size_t(3));  // r3 is the graph's output
        QCOMPARE((*lifetimes)[0].firstStep, size_t(0));
        QCOMPARE((*lifetimes)[0].lastStep, size_t(1));
        MemoryPlan plan = planMemory(*lifetimes);
        QCOMPARE(planProblems(*lifetimes, plan), std::string());
        QCOMPARE(plan.naiveBytes, size_t(3 * 1024));
        QCOMPARE(plan.lowerBoundBytes, size_t(2 * 1024));
        QCOMPARE(plan.arenaBytes, size_t(2 * 1024));
    }

    void randomLifetimesNeverCollide() {
        std::mt19937 rng(7);
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<BufferLifetime> buffers;
            const int n = 1 + int(rng() % 40);
            for (int i = 0; i < n; ++i) {
                const size_t first = rng() % 30;
                buffers.push_back({ValueId(uint32_t(i)), 64 * (1 + rng() % 32), first, first + rng() % 10});
            }
            MemoryPlan plan = planMemory(buffers);
            QCOMPARE(planProblems(buffers, plan), std::string());
            QVERIFY(plan.arenaBytes >= plan.lowerBoundBytes);
            QVERIFY(plan.arenaBytes <= plan.naiveBytes);
        }
    }

    void sampleModelPlansWithBatchBound() {
        auto model = importModel(FSC_SAMPLE_MODEL);
        QVERIFY(model.isOk());
        auto unbound = computeLifetimes(*model->graph);
        QVERIFY(!unbound.isOk());
        QVERIFY2(unbound.status().message().find("dim 'batch' with no value bound") != std::string::npos,
                 unbound.status().message().c_str());
        auto lifetimes = computeLifetimes(*model->graph, {{"batch", 8}});
        QVERIFY2(lifetimes.isOk(), lifetimes.status().message().c_str());
        MemoryPlan plan = planMemory(*lifetimes);
        QCOMPARE(planProblems(*lifetimes, plan), std::string());
        QVERIFY(plan.lowerBoundBytes <= plan.arenaBytes && plan.arenaBytes < plan.naiveBytes);
        qInfo("sample, batch 8: arena %zu B, lower bound %zu B, naive %zu B", plan.arenaBytes,
              plan.lowerBoundBytes, plan.naiveBytes);
    }

    void namedProductDimsUseTheirSymbolsValue() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({8}));
        ValueId h = b.op("Relu", {x}, "h");
        b.graph().value(h).type = ValueType::tensor(DType::Float32, Shape({Dim::symbolic("batch*4"), Dim::known(8)}));
        b.output(b.op("Neg", {h}, "y"));
        auto lifetimes = computeLifetimes(b.graph(), {{"batch", 2}}, /*alignment=*/1);
        QVERIFY2(lifetimes.isOk(), lifetimes.status().message().c_str());
        QCOMPARE(lifetimes->at(0).bytes, size_t(2 * 4 * 8 * 4));
    }

    void valuesReadInsideSubgraphsLiveUntilTheirNode() {
        GraphBuilder body("then");
        ValueId outer = body.outerValue("early");
        body.output(body.op("Identity", {outer}, "o"));
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({16}));
        ValueId cond = b.input("c", DType::Bool, Shape::scalar());
        ValueId early = b.op("Relu", {x}, "early");
        ValueId mid = b.op("Neg", {x}, "mid");
        ValueId result = b.node("If", {cond}, {"r"}, {graphAttr("then_branch", body.takeGraph())}, "if")[0];
        b.output(b.op("Add", {mid, result}, "y"));
        b.graph().value(result).type = ValueType::tensor(DType::Float32, Shape::ofSizes({16}));
        fillUnknownTypes(b.graph());
        auto lifetimes = computeLifetimes(b.graph());
        QVERIFY2(lifetimes.isOk(), lifetimes.status().message().c_str());
        const auto it = std::find_if(lifetimes->begin(), lifetimes->end(),
                                     [&](const BufferLifetime& l) { return l.value == early; });
        QVERIFY(it != lifetimes->end());
        QCOMPARE(it->lastStep, size_t(2));  // the If at step 2 reads it from inside
    }
};

QTEST_GUILESS_MAIN(TestMemoryPlan)
#include "tst_memory_plan.moc"
