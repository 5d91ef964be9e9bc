// The compiler's infrastructure: the rewriter's provenance and name keeping, pipelines and
// the pass registry, snapshots (materialized equal to the graph they captured, and cheap:
// 20 snapshots of a 6,000-node graph within 3x one graph's memory), cancellation.
#include <QTest>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "compiler/pass_registry.h"
#include "compiler/pipelines.h"
#include "compiler/rewriter.h"
#include "compiler/verifier.h"
#include "pass_test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#define FSC_COUNTING_ALLOCATOR 0  // ASan owns the allocator; the plain build measures
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FSC_COUNTING_ALLOCATOR 0
#endif
#endif
#ifndef FSC_COUNTING_ALLOCATOR
#define FSC_COUNTING_ALLOCATOR 1
#endif

// Live heap bytes, counted by replacing the global allocation functions of this binary.
static std::atomic<long long> g_liveBytes{0};
#if FSC_COUNTING_ALLOCATOR

void* operator new(std::size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    g_liveBytes += static_cast<long long>(malloc_usable_size(p));
    return p;
}
void operator delete(void* p) noexcept {
    if (!p) return;
    g_liveBytes -= static_cast<long long>(malloc_usable_size(p));
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
#endif

using namespace fsc;
using namespace fsc::test;

namespace {

// `blocks` repetitions of Shape -> Gather -> Unsqueeze -> Concat -> Reshape around
// MatMul + Add + Identity + Relu: 9 nodes per block, most of them foldable.
Model bigGraph(int blocks) {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, Shape::ofSizes({2, 8}));
    ValueId idx = b.initializer(int64Tensor("idx", {}, {0}));
    ValueId axes = b.initializer(int64Tensor("axes", {1}, {0}));
    ValueId minus1 = b.initializer(int64Tensor("minus1", {1}, {-1}));
    for (int i = 0; i < blocks; ++i) {
        const std::string p = "/block." + std::to_string(i) + "/";
        ValueId w = b.initializer(randomFloatTensor(p + "w", {8, 8}, uint64_t(i)));
        ValueId bias = b.initializer(randomFloatTensor(p + "b", {8}, uint64_t(i) + 1000));
        ValueId shape = b.op("Shape", {x}, p + "shape", {}, p + "Shape");
        ValueId rows = b.op("Gather", {shape, idx}, p + "rows", {}, p + "Gather");
        ValueId rows1 = b.op("Unsqueeze", {rows, axes}, p + "rows1", {}, p + "Unsqueeze");
        ValueId target = b.op("Concat", {rows1, minus1}, p + "target", {intAttr("axis", 0)}, p + "Concat");
        ValueId r = b.op("Reshape", {x, target}, p + "r", {}, p + "Reshape");
        ValueId mm = b.op("MatMul", {r, w}, p + "mm", {}, p + "MatMul");
        ValueId add = b.op("Add", {mm, bias}, p + "add", {}, p + "Add");
        ValueId id = b.op("Identity", {add}, p + "id", {}, p + "Identity");
        x = b.op("Relu", {id}, p + "relu", {}, p + "Relu");
    }
    b.output(x);
    return withInferredTypes(b);
}

}  // namespace

class TestPassManager : public QObject {
    Q_OBJECT
private slots:
    void provenanceIsTransitive() {
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4}));
        ValueId e = b.op("Exp", {x}, "e", {}, "n_exp");
        ValueId n = b.op("Neg", {e}, "n", {}, "n_neg");
        ValueId y = b.op("Abs", {n}, "y", {}, "n_abs");
        b.output(y);
        Model m = b.buildModel();
        Graph& g = *m.graph;
        const NodeId exp = g.order()[0], neg = g.order()[1], abs = g.order()[2];

        Rewriter rw(g, "test");
        Node f1;
        f1.name = "fused1";
        f1.opType = "Exp";  // stands in for a fused op; only provenance is checked here
        f1.inputs = {x};
        f1.outputs = {n};
        rw.removeNode(neg);
        rw.removeNode(exp);
        NodeId first = rw.addNode(f1, neg, {exp, neg});
        QVERIFY(rw.commit("p1", "first fusion"));
        Node f2 = f1;
        f2.name = "fused2";
        f2.outputs = {y};
        rw.removeNode(abs);
        rw.removeNode(first);
        NodeId second = rw.addNode(f2, abs, {first, abs});
        QVERIFY(rw.commit("p2", "second fusion"));
        rw.finish();
        QCOMPARE(g.node(second).origins, (std::vector<NodeId>{exp, neg, abs}));
        QCOMPARE(int(g.nodeCount()), 1);
        QCOMPARE(rw.changes().size(), size_t(2));
        QCOMPARE(rw.changes()[1].removed, (std::vector<NodeId>{abs, first}));
        QCOMPARE(rw.changes()[1].added, (std::vector<NodeId>{second}));
        QVERIFY(verifyGraph(g).isOk());
    }

    void pipelinesResolve() {
        auto o0 = pipelinePasses("O0");
        QVERIFY(o0.isOk() && o0->empty());
        auto o1 = pipelinePasses("O1");
        auto o2 = pipelinePasses("O2");
        QVERIFY(o1.isOk() && !o1->empty());
        QVERIFY(o2->size() >= o1->size());
        QVERIFY(!pipelinePasses("O7").isOk());
        for (const PipelineStep& step : pipelineSteps())
            QVERIFY2(PassRegistry::builtin().find(step.pass), step.pass);
        auto custom = resolvePipeline("", "fold-constants,eliminate-dead-code", {"eliminate-dead-code"});
        QVERIFY(custom.isOk());
        QCOMPARE(*custom, (std::vector<std::string>{"fold-constants"}));
        auto bad = resolvePipeline("O1", "", {"no-such-pass"});
        QVERIFY(!bad.isOk());
        QVERIFY(bad.status().message().find("no-such-pass") != std::string::npos);
        QVERIFY(!compileModel(bigGraph(1), {"nope"}).isOk());
    }

    // Precision and parallelism go where buildPipeline puts them, for every caller alike.
    void optionalPassesHaveOnePlace() {
        auto names = [](const PipelineSpec& spec) {
            std::vector<std::string> out;
            auto built = buildPipeline(spec);
            for (const auto& p : *built) out.push_back(p->name());
            return out;
        };
        auto indexOf = [](const std::vector<std::string>& list, const std::string& name) {
            return int(std::find(list.begin(), list.end(), name) - list.begin());
        };
        PipelineSpec spec;
        spec.passes = *pipelinePasses("O3");
        spec.precision = Precision::Int8;
        spec.tensorParallel = 2;
        spec.pipelineParallel = 2;
        const auto int8 = names(spec);
        QCOMPARE(int8.size(), spec.passes.size() + 4);
        QVERIFY(indexOf(int8, "conv-bn-fusion") < indexOf(int8, "tensor-parallel"));
        QCOMPARE(indexOf(int8, "tensor-parallel") + 1, indexOf(int8, "int8-quantization"));
        auto lastIndexOf = [](const std::vector<std::string>& list, const std::string& name) {
            return int(std::find(list.rbegin(), list.rend(), name).base() - list.begin()) - 1;
        };
        QVERIFY(indexOf(int8, "qdq-folding") < indexOf(int8, "conv-bn-fusion"));  // an export's own QDQ form
        QCOMPARE(indexOf(int8, "int8-quantization") + 1, lastIndexOf(int8, "qdq-folding"));
        QVERIFY(lastIndexOf(int8, "qdq-folding") < indexOf(int8, "gelu-fusion"));
        QCOMPARE(indexOf(int8, "pipeline-parallel") + 1, indexOf(int8, "schedule-for-memory"));

        spec.precision = Precision::Float16;
        spec.passes = *pipelinePasses("O2");  // no memory passes: precision and stages go last
        const auto fp16 = names(spec);
        QCOMPARE(fp16[fp16.size() - 2], std::string("fp16-conversion"));
        QCOMPARE(fp16.back(), std::string("pipeline-parallel"));

        spec.passes = {"fold-constants", "no-such-pass"};
        QVERIFY(!buildPipeline(spec).isOk());
    }

    // channels-last lays out what the target has NHWC kernels for: float32 and the 8-bit
    // types of QLinearConv on the CPU; half types on CUDA, and float32 there only under TF32
    // or a half precision; an explicit choice (bisect's reference) wins.
    void channelsLastTypesFollowTheTarget() {
        PipelineSpec spec;
        QCOMPARE(channelsLastTypes(spec), (std::set<DType>{DType::Float32, DType::UInt8, DType::Int8}));
        spec.target.backend = Backend::Cuda;
        QCOMPARE(channelsLastTypes(spec), (std::set<DType>{DType::Float16, DType::BFloat16}));
        spec.target.tf32 = true;  // NHWC float32 under TF32 came out wrong on an H200: NCHW
        QVERIFY(!channelsLastTypes(spec).count(DType::Float32));
        spec.target.tf32 = false;
        spec.precision = Precision::Float16;
        QVERIFY(channelsLastTypes(spec).count(DType::Float32));
        spec.channelsLastTypes = std::set<DType>{DType::Float32};
        QCOMPARE(channelsLastTypes(spec), std::set<DType>{DType::Float32});
        // The named pipeline is the same list on both backends.
        spec = PipelineSpec{};
        spec.passes = *pipelinePasses("O2");
        spec.target.backend = Backend::Cuda;
        auto built = buildPipeline(spec);
        QVERIFY(built.isOk());
        QCOMPARE(built->size(), spec.passes.size());
    }

    void snapshotsMaterializeWhatTheyCaptured() {
        Model m = bigGraph(20);
        auto passes = pipelinePasses("O1");
        auto r = compileWith(m, *passes);
        QCOMPARE(printGraph(*r.trace.imported->materialize()), printGraph(*m.graph));
        QCOMPARE(printGraph(*r.trace.passes.back().snapshot->materialize()), printGraph(*r.model.graph));
        for (const PassReport& p : r.trace.passes) {
            auto g = p.snapshot->materialize();
            QVERIFY2(verifyGraph(*g).isOk(), p.name.c_str());
            QCOMPARE(g->nodeCount(), p.nodesAfter);
        }
        QCOMPARE(int(r.model.graph->nodeCount()), 20 * 3);  // MatMul, Add, Relu per block
        QVERIFY(maxRelativeError(m, r.model) == 0.0);
    }

    void twentySnapshotsStaySmall() {
        if (!FSC_COUNTING_ALLOCATOR) QSKIP("the sanitizer owns the allocator; the plain build measures this");
        Model m = bigGraph(700);  // 6,300 nodes
        QVERIFY(m.graph->nodeCount() >= 6000);
        const long long before = g_liveBytes;
        auto copy = std::make_unique<Graph>(*m.graph);
        const long long oneGraph = g_liveBytes - before;
        copy.reset();

        std::vector<std::string> passes;
        const auto o1 = *pipelinePasses("O1");
        while (passes.size() < 20) passes.push_back(o1[passes.size() % o1.size()]);
        auto r = compileWith(m, passes);
        QCOMPARE(r.trace.passes.size(), size_t(20));
        const long long withTrace = g_liveBytes;
        r.trace = {};
        const long long traceBytes = withTrace - g_liveBytes;
        qInfo("one graph: %lld bytes; trace with 21 snapshots: %lld bytes (%.2fx)", oneGraph,
              traceBytes, double(traceBytes) / double(oneGraph));
        QVERIFY(traceBytes > 0);
        QVERIFY(traceBytes <= 3 * oneGraph);
    }

    void cancelStopsCompilation() {
        std::atomic<bool> cancel{true};
        CompileOptions options;
        options.cancel = &cancel;
        auto r = compileModel(bigGraph(2), *pipelinePasses("O1"), options);
        QVERIFY(!r.isOk());
        QCOMPARE(r.status().code(), ErrorCode::Cancelled);
        QVERIFY(r.status().message().find("cancelled") != std::string::npos);
    }

    void progressReportsEveryPass() {
        std::vector<std::string> seen;
        CompileOptions options;
        options.progress = [&](size_t, size_t, const std::string& name) { seen.push_back(name); };
        auto passes = *pipelinePasses("O1");
        QVERIFY(compileModel(bigGraph(2), passes, options).isOk());
        QCOMPARE(seen, passes);
    }
};

QTEST_APPLESS_MAIN(TestPassManager)
#include "tst_pass_manager.moc"
