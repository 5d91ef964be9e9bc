// Pass ablation and numeric bisection (app/analysis) without a window: ablation leaves each
// pass out, tells apart what changed nothing from what it measured, and names the passes a
// pass enables; bisection names the group holding a kernel perturbed on purpose (on the CPU
// and on the simulated CUDA device), the op inside it once unfused, and finds nothing when
// the candidate is the reference.
#include <QTest>

#include <algorithm>
#include <atomic>

#include "app/analysis/ablation.h"
#include "app/analysis/ablation_report.h"
#include "app/analysis/numeric_bisect.h"
#include "app/analysis/variant_compare.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/target.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "perturbed_provider.h"

using namespace fsc;
using namespace fsc::test;

namespace {

Shape dims(std::vector<int64_t> d) { return Shape::ofSizes(d); }

Model withTypes(GraphBuilder& b) {
    Model m = b.buildModel(17);
    auto bytes = exportModelToBytes(m);
    if (!bytes) qFatal("export: %s", bytes.status().message().c_str());
    auto imported = importModelFromBytes(bytes->data(), bytes->size(), "built.onnx");
    if (!imported) qFatal("import: %s", imported.status().message().c_str());
    return std::move(*imported);
}

// A transformer layer's shape: Linear, residual, LayerNorm, Linear, ReLU.
Model encoderBlock() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, dims({2, 8, 16}));
    ValueId h = b.op("MatMul", {x, b.initializer(randomFloatTensor("w1", {16, 16}, 1, 0.3f))}, "h", {}, "fc1");
    ValueId hb = b.op("Add", {h, b.initializer(randomFloatTensor("b1", {16}, 2, 0.1f))}, "hb", {}, "fc1_bias");
    ValueId r = b.op("Add", {hb, x}, "r", {}, "residual");
    ValueId ln = b.op("LayerNormalization",
                      {r, b.initializer(randomFloatTensor("gamma", {16}, 3, 1.0f)), b.initializer(randomFloatTensor("beta", {16}, 4, 0.1f))},
                      "ln", {intAttr("axis", -1), floatAttr("epsilon", 1e-5f)}, "norm");
    ValueId y = b.op("MatMul", {ln, b.initializer(randomFloatTensor("w2", {16, 16}, 5, 0.3f))}, "y", {}, "fc2");
    ValueId yb = b.op("Add", {y, b.initializer(randomFloatTensor("b2", {16}, 6, 0.1f))}, "yb", {}, "fc2_bias");
    b.output(b.op("Relu", {yb}, "out", {}, "act"));
    return withTypes(b);
}

// A small CNN: Conv, BatchNorm, ReLU, Conv, ReLU, pooling and a classifier.
Model smallCnn() {
    GraphBuilder b;
    ValueId x = b.input("x", DType::Float32, dims({1, 3, 16, 16}));
    ValueId c1 = b.op("Conv", {x, b.initializer(randomFloatTensor("k1", {8, 3, 3, 3}, 11, 0.3f))}, "c1",
                      {intsAttr("pads", {1, 1, 1, 1})}, "conv1");
    ValueId n1 = b.op("BatchNormalization",
                      {c1, b.initializer(randomFloatTensor("s", {8}, 12, 1.0f)), b.initializer(randomFloatTensor("t", {8}, 13, 0.1f)),
                       b.initializer(randomFloatTensor("m", {8}, 14, 0.1f)), b.initializer(floatTensor("v", {8}, std::vector<float>(8, 1.0f)))},
                      "n1", {floatAttr("epsilon", 1e-5f)}, "bn1");
    ValueId r1 = b.op("Relu", {n1}, "r1", {}, "relu1");
    ValueId c2 = b.op("Conv", {r1, b.initializer(randomFloatTensor("k2", {8, 8, 3, 3}, 15, 0.2f)),
                               b.initializer(randomFloatTensor("kb2", {8}, 16, 0.1f))},
                      "c2", {intsAttr("pads", {1, 1, 1, 1})}, "conv2");
    ValueId r2 = b.op("Relu", {c2}, "r2", {}, "relu2");
    ValueId p = b.op("GlobalAveragePool", {r2}, "p", {}, "pool");
    ValueId f = b.op("Flatten", {p}, "f", {}, "flatten");
    b.output(b.op("Gemm", {f, b.initializer(randomFloatTensor("wc", {10, 8}, 17, 0.3f))}, "logits", {intAttr("transB", 1)}, "classifier"));
    return withTypes(b);
}

PipelineSpec o2(Backend backend = Backend::Cpu, std::shared_ptr<CudaDevice> device = nullptr) {
    PipelineSpec spec;
    spec.passes = *pipelinePasses("O2");
    spec.target.backend = backend;
    spec.target.device = std::move(device);
    spec.target.threads = 1;
    return spec;
}

// Whether the kernel is for `name` or a group made from it.
bool isOrHolds(const KernelInit& init, const std::string& name) {
    if (init.node().name == name) return true;
    for (NodeId origin : init.node().origins)
        if (init.graph().node(origin).name == name) return true;
    return false;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// A candidate on `backend` whose kernels `perturbed` picks are off by 1%.
BisectSide perturbedCandidate(Backend backend, std::function<bool(const KernelInit&)> perturbed) {
    const auto device = backend == Backend::Cuda ? makeSimulatedGpu() : nullptr;
    BisectSide candidate{backend == Backend::Cuda ? "cuda/fp32" : "cpu/fp32", o2(backend, device), std::nullopt};
    ExecutorOptions options = executorOptions(candidate.pipeline.target);
    std::shared_ptr<const ExecutionProvider>& where = backend == Backend::Cuda ? options.device : options.host;
    where = std::make_shared<PerturbedProvider>(where, std::move(perturbed), 1e-2f);
    candidate.executor = options;
    return candidate;
}

const PassEffect& effectOf(const AblationReport& report, const std::string& pass) {
    for (const PassEffect& e : report.without)
        if (e.pass == pass) return e;
    qFatal("no row for %s", pass.c_str());
}

}  // namespace

class TestAnalysis : public QObject {
    Q_OBJECT
private slots:
    void theNoiseRuleNeedsAgreeingRoundsAndASizeableRatio() {
        QVERIFY(aboveNoise({1.10, 1.12, 1.09}));
        QVERIFY(aboveNoise({0.90, 0.85, 0.95, 0.91}));
        QVERIFY(!aboveNoise({1.10, 0.98, 1.20}));   // the rounds disagree
        QVERIFY(!aboveNoise({1.01, 1.02, 1.01}));   // agreeing, but within 3%
        QVERIFY(!aboveNoise({1.5, 1.5}));           // too few rounds to say
    }

    void ablationLeavesEachPassOutAndMeasuresOnlyWhatChanged() {
        const Model model = smallCnn();
        AblationOptions options;
        options.rounds = 3;
        options.runsPerRound = 1;
        options.warmup = 1;
        const PipelineSpec spec = o2();
        auto report = ablatePasses(model, spec, "O2", options);
        QVERIFY2(report, report ? "" : report.status().message().c_str());
        std::vector<std::string> names;
        for (const std::string& p : spec.passes)
            if (!contains(names, p)) names.push_back(p);
        QCOMPARE(report->without.size(), names.size());
        QCOMPARE(report->full.roundMediansMs.size(), size_t(3));
        // The CNN has no attention: leaving that pass out gives the same graph, not timed.
        const PassEffect& attention = effectOf(*report, "attention-fusion");
        QCOMPARE(attention.kind, PassEffect::Kind::SameGraph);
        QCOMPARE(attention.figures.nodes, report->full.nodes);
        // Without conv-bn-fusion the BatchNormalization stays: more nodes, timed against the full.
        const PassEffect& convBn = effectOf(*report, "conv-bn-fusion");
        QCOMPARE(convBn.kind, PassEffect::Kind::Measured);
        QVERIFY(convBn.figures.nodes > report->full.nodes);
        QCOMPARE(convBn.figures.roundMediansMs.size(), size_t(3));
        QVERIFY(convBn.lowestRatio <= convBn.ratio && convBn.ratio <= convBn.highestRatio);
        // The first Conv's ReLU follows its BatchNormalization: activation-fusion fuses it only
        // after conv-bn-fusion has removed the BatchNormalization.
        bool enablesActivation = false;
        for (const PassInteraction& i : convBn.enables)
            enablesActivation = enablesActivation || (i.pass == "activation-fusion" && i.appliedWithout < i.appliedWith);
        QVERIFY(enablesActivation);

        const nlohmann::json j = ablationJson(*report);
        QCOMPARE(j["schema"].get<std::string>(), std::string("fusescope.ablation/1"));
        QCOMPARE(j["without"].size(), names.size());
        const std::string csv = ablationCsv(*report);
        QCOMPARE(size_t(std::count(csv.begin(), csv.end(), '\n')), 2 + names.size());  // header, full, one per pass
        QVERIFY(ablationHtml(*report).find("<table>") != std::string::npos);
        QVERIFY(ablationText(*report).find("conv-bn-fusion") != std::string::npos);
    }

    void cumulativeStepsRunFromTheImportedGraphToTheFullPipeline() {
        const Model model = smallCnn();
        AblationOptions options;
        options.passes = {"conv-bn-fusion"};
        options.cumulative = true;
        options.rounds = 1;
        options.runsPerRound = 1;
        options.warmup = 0;
        const PipelineSpec spec = o2();
        auto report = ablatePasses(model, spec, "O2", options);
        QVERIFY2(report, report ? "" : report.status().message().c_str());
        QCOMPARE(report->without.size(), size_t(1));
        QCOMPARE(report->upTo.size(), spec.passes.size() + 1);
        QCOMPARE(report->upTo.front().label, std::string("imported"));
        QCOMPARE(report->upTo.front().figures.nodes, model.graph->nodeCount());
        QCOMPARE(report->upTo.back().figures.nodes, report->full.nodes);
    }

    void ablationRefusesAPassOutsideThePipelineAndStopsWhenCancelled() {
        const Model model = smallCnn();
        AblationOptions options;
        options.passes = {"schedule-for-memory"};  // O3's, not O2's
        auto refused = ablatePasses(model, o2(), "O2", options);
        QVERIFY(!refused);
        QCOMPARE(refused.status().code(), ErrorCode::InvalidArgument);
        QVERIFY(refused.status().message().find("schedule-for-memory") != std::string::npos);
        std::atomic<bool> cancel{true};
        auto cancelled = ablatePasses(model, o2(), "O2", AblationOptions{}, &cancel);
        QVERIFY(!cancelled);
        QCOMPARE(cancelled.status().code(), ErrorCode::Cancelled);
    }

    void bisectFindsNothingWhenTheCandidateIsTheReference() {
        const Model model = encoderBlock();
        BisectSide side{"cpu/fp32", o2(), std::nullopt};
        auto report = bisectNumerics(model, side, side, BisectOptions{});
        QVERIFY2(report, report ? "" : report.status().message().c_str());
        QVERIFY(!report->groups.empty());
        QVERIFY(report->firstJumps.empty());
        QCOMPARE(report->outputError, 0.0);
    }

    void bisectNamesThePerturbedLayerNormOnTheCpuAndTheSimulatedDevice() {
        const Model model = encoderBlock();
        auto layerNorm = [](const KernelInit& init) { return init.node().opType.find("LayerNorm") != std::string::npos; };
        BisectSide reference{"cpu/fp32", o2(), std::nullopt};
        for (Backend backend : {Backend::Cpu, Backend::Cuda}) {
            auto report = bisectNumerics(model, reference, perturbedCandidate(backend, layerNorm), BisectOptions{});
            QVERIFY2(report, report ? "" : report.status().message().c_str());
            QCOMPARE(report->firstJumps.size(), size_t(1));
            const GroupError& jump = report->groups[report->firstJumps.front()];
            QVERIFY2(contains(jump.onnxNodes, "norm"), jump.node.c_str());
            QVERIFY(jump.error >= 1e-3);
            QVERIFY(jump.inputError < 1e-5);  // what feeds it still agrees
            // Nothing upstream of the norm jumps.
            for (size_t i = 0; i < report->firstJumps.front(); ++i) QVERIFY(!report->groups[i].jump);
        }
    }

    void bisectNamesThePerturbedConvAndTheOpInsideItsGroup() {
        const Model model = smallCnn();
        auto conv2 = [](const KernelInit& init) { return isOrHolds(init, "conv2"); };
        BisectSide reference{"cpu/fp32", o2(), std::nullopt};
        for (Backend backend : {Backend::Cpu, Backend::Cuda}) {
            auto report = bisectNumerics(model, reference, perturbedCandidate(backend, conv2), BisectOptions{});
            QVERIFY2(report, report ? "" : report.status().message().c_str());
            QCOMPARE(report->firstJumps.size(), size_t(1));
            const GroupError& jump = report->groups[report->firstJumps.front()];
            QVERIFY2(contains(jump.onnxNodes, "conv2"), jump.node.c_str());
            QVERIFY(!contains(jump.onnxNodes, "conv1"));
            // conv2 and its ReLU are one group; unfused, the Conv is the op that jumps.
            QVERIFY(contains(jump.onnxNodes, "relu2"));
            QCOMPARE(report->insideGroup, jump.node);
            std::vector<std::string> insideJumps;
            for (const GroupError& g : report->inside)
                if (g.firstJump) insideJumps.push_back(g.node);
            QCOMPARE(insideJumps, std::vector<std::string>{"conv2"});
        }
    }

    void compareGivesEveryOnnxNodeATimeAndAnErrorPerVariant() {
        const Model model = encoderBlock();
        PipelineSpec fp16 = o2();
        fp16.precision = Precision::Float16;
        const std::vector<CompareVariant> variants = {
            {"cpu/fp32", o2()}, {"cpu/fp16", fp16}, {"cuda/fp32", o2(Backend::Cuda, makeSimulatedGpu())}};
        CompareOptions options;
        options.iterations = 2;
        options.warmup = 1;
        auto result = compareVariants(model, variants, 0, options);
        QVERIFY2(result, result ? "" : result.status().message().c_str());
        QCOMPARE(result->variants.size(), size_t(3));
        QCOMPARE(result->rows.size(), model.graph->nodeCount());
        QCOMPARE(result->variants[0].outputError, 0.0);
        // The whole-run times come from alternating rounds: the baseline is 1x itself, each
        // variant's ratio is the median of its rounds' and lies within their range.
        QCOMPARE(result->rounds, 3);
        QCOMPARE(result->variants[0].vsBaseline, 1.0);
        for (const VariantSummary& v : result->variants) {
            QVERIFY2(v.medianMs > 0 && v.p90Ms >= v.medianMs, v.label.c_str());
            QVERIFY2(v.lowestRatio > 0 && v.lowestRatio <= v.vsBaseline && v.vsBaseline <= v.highestRatio, v.label.c_str());
        }
        QVERIFY(result->variants[1].outputError > 1e-5 && result->variants[1].outputError < 1e-2);  // float16 rounding
        QVERIFY(result->variants[2].outputError < 1e-5);  // the simulated device runs the CPU's arithmetic
        for (const CompareRow& row : result->rows)
            for (const NodeCell& cell : row.cells) {
                QVERIFY2(cell.ran, row.node.c_str());
                QVERIFY(cell.ms >= 0);
            }
        // fc1's MatMul and its bias Add are one group: one time on both rows.
        const auto rowOf = [&](const std::string& name) -> const CompareRow& {
            for (const CompareRow& row : result->rows)
                if (row.node == name) return row;
            qFatal("no row %s", name.c_str());
        };
        const NodeCell &matmul = rowOf("fc1").cells[0], &bias = rowOf("fc1_bias").cells[0];
        QCOMPARE(matmul.group, bias.group);
        QVERIFY(matmul.groupSize >= 2);
        QCOMPARE(matmul.ms, bias.ms);
        QCOMPARE(rowOf("norm").cells[0].error, 0.0);
        QVERIFY(rowOf("norm").cells[1].error > 0);

        // Without rounds the whole-run times are each profile's, and no ratio is claimed.
        options.rounds = 0;
        auto profiled = compareVariants(model, {variants[0], variants[1]}, 0, options);
        QVERIFY2(profiled, profiled ? "" : profiled.status().message().c_str());
        QCOMPARE(profiled->rounds, 0);
        QVERIFY(profiled->variants[1].medianMs > 0);
        QCOMPARE(profiled->variants[1].vsBaseline, 0.0);

        // A variant of another pipeline (compare's "cpu/fp32@O0"): nothing fused, each ONNX
        // node its own group, and the same numbers as its reference compiled the same way.
        PipelineSpec o0 = o2();
        o0.passes = *pipelinePasses("O0");
        auto pipelines = compareVariants(model, {variants[0], {"cpu/fp32@O0", o0}}, 0, options);
        QVERIFY2(pipelines, pipelines ? "" : pipelines.status().message().c_str());
        QVERIFY(pipelines->variants[1].nodes > pipelines->variants[0].nodes);
        for (const CompareRow& row : pipelines->rows)
            if (row.node == "fc1") {
                QCOMPARE(row.cells[1].groupSize, 1);
                QVERIFY(row.cells[0].groupSize >= 2);
            }
        QVERIFY(pipelines->variants[1].outputError < 1e-6);
    }

    void sideChoicesNameABackendAndAPrecision() {
        QCOMPARE(parseSideChoice("cuda/fp16")->precision, Precision::Float16);
        QCOMPARE(parseSideChoice("cpu/int8")->backend, std::string("cpu"));
        QCOMPARE(parseSideChoice("cpu")->precision, Precision::Float32);
        QVERIFY(!parseSideChoice("tpu/fp32"));
        QVERIFY(!parseSideChoice("cpu/fp8"));
    }
};

QTEST_GUILESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
