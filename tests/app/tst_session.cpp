// The session without a window: steps of a compile and their labels, what a step removed
// and added against another, provenance links between steps, a run's heat and a node's
// kernels (only on the step that ran), and what a new compile or model forgets.
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include "app/common/session.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/pipelines.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/provenance.h"

using namespace fsc;

namespace {

Session compiledSample() {
    Session session;
    if (Status s = session.open(FSC_SAMPLE_MODEL); !s) qFatal("%s", s.message().c_str());
    if (Status s = session.compile({.passes = *pipelinePasses("O2")}); !s) qFatal("%s", s.message().c_str());
    return session;
}

NodeId nodeOfType(const Graph& g, const std::string& op) {
    for (NodeId id : g.order())
        if (g.node(id).opType == op) return id;
    return {};
}

Activity kernel(int64_t node, const char* name, int64_t ns, int iteration) {
    Activity a;
    a.name = name;
    a.node = node;
    a.startNs = 1000 * iteration;
    a.endNs = a.startNs + ns;
    a.iteration = iteration;
    return a;
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
private slots:
    void theTargetDecidesThePipelineOnce() {
        // One spec, two targets: channels-last lays out the sample's float32 convolutions on
        // the CPU, and leaves them NCHW on the CUDA backend (cuDNN's strict float32 kernels
        // read NCHW; under TF32 too, until a GPU run shows NHWC right). Every entry point
        // compiles through this, so run, profile, the walkthrough and the GUI time the same
        // graph for the same target.
        auto passNames = [](const Session& s) {
            std::vector<std::string> names;
            for (const auto& p : s.compiled()->passes) names.push_back(p.name);
            return names;
        };
        auto has = [](const std::vector<std::string>& v, const char* name) {
            return std::find(v.begin(), v.end(), name) != v.end();
        };
        Target cpu, cuda;
        cuda.backend = Backend::Cuda;
        cuda.device = makeSimulatedGpu();
        Target tf32 = cuda;
        tf32.tf32 = true;
        Session onCpu, onCuda, onTf32;
        for (Session* s : {&onCpu, &onCuda, &onTf32})
            if (Status st = s->open(FSC_SAMPLE_MODEL); !st) QFAIL(st.message().c_str());
        const std::vector<std::string> o2 = *pipelinePasses("O2");
        QVERIFY(has(o2, "channels-last"));
        QVERIFY(onCpu.compile({.passes = o2, .target = cpu}));
        QVERIFY(onCuda.compile({.passes = o2, .target = cuda}));
        QVERIFY(onTf32.compile({.passes = o2, .target = tf32}));
        QCOMPARE(passNames(onCuda), passNames(onCpu));
        // The sample's one convolution: a region on the CPU (too small to convert), none in
        // float32 on the GPU, strict or TF32, which says why.
        auto channelsLast = [](const Session& s) {
            for (const auto& p : s.compiled()->passes)
                if (p.name == "channels-last") return p;
            return PassReport{};
        };
        QVERIFY(channelsLast(onCpu).counters.matched > 0);
        QCOMPARE(channelsLast(onTf32).counters.matched, 0);
        QCOMPARE(channelsLast(onCuda).counters.matched, 0);
        QVERIFY(!channelsLast(onCuda).rejections.empty());
        QVERIFY2(channelsLast(onCuda).rejections[0].reason.find("float32") != std::string::npos,
                 channelsLast(onCuda).rejections[0].reason.c_str());
        // The session keeps the target it compiled for: the walkthrough's chapters run there.
        QCOMPARE(onCuda.pipeline().target.device, cuda.device);
        QCOMPARE(std::string(onCuda.pipeline().target.name()), std::string("cuda"));
    }

    void opensAndCompilesWithoutAWindow() {
        Session s;
        QVERIFY(!s.compile({.passes = {"fold-constants"}}).isOk());  // nothing open
        const Status missing = s.open("/nonexistent/model.onnx");
        QVERIFY(!missing.isOk());
        QVERIFY2(QString::fromStdString(missing.message()).contains("/nonexistent/model.onnx"), missing.message().c_str());
        QVERIFY(!s.model());
        QVERIFY(s.open(FSC_SAMPLE_MODEL).isOk());
        const auto opened = s.model();
        // An unknown pass: the error names the model, and nothing of the session is lost.
        const Status bad = s.compile({.passes = {"no-such-pass"}});
        QVERIFY(!bad.isOk());
        QVERIFY2(QString::fromStdString(bad.message()).contains("no-such-pass"), bad.message().c_str());
        QCOMPARE(s.model(), opened);
        QVERIFY(!s.compiled() && !s.compiledModel());
        PipelineSpec o2fp16{.passes = *pipelinePasses("O2"), .precision = Precision::Float16};
        QVERIFY(s.compile(o2fp16).isOk());
        QCOMPARE(s.pipeline().passes, o2fp16.passes);  // what the compile shown used
        QVERIFY(s.pipeline().precision == Precision::Float16);
        bool converted = false;  // buildPipeline placed the precision pass
        for (const PassReport& p : s.compiled()->passes) converted |= p.name == "fp16-conversion";
        QVERIFY(converted);
        // The compiled model is what the last step shows, and what runs.
        QCOMPARE(s.compiledModel()->graph->nodeCount(), s.compiled()->passes.back().nodesAfter);
        QCOMPARE(s.snapshotAt(s.stepCount() - 1)->nodeCount(), s.compiledModel()->graph->nodeCount());
        QCOMPARE(s.model(), opened);  // the imported model stays what steps start from
        s.setModel(opened);
        QVERIFY(!s.compiledModel());
    }

    // One description of a profile for the CLI, the GUI and the walkthrough: the fused ops'
    // domain declared, the model, the compile's passes, the target and the label.
    void aProfileRequestIsMadeOnce() {
        Session s;
        QVERIFY(s.open(FSC_SAMPLE_MODEL).isOk());
        QVERIFY(s.compile({.passes = *pipelinePasses("O2")}).isOk());
        Target cpu;
        cpu.threads = 1;
        const ProfileRequest r = s.profileRequest(s.compiledModel()->graph, cpu, "O2");
        QCOMPARE(r.graph, s.compiledModel()->graph);
        QCOMPARE(r.model, std::string(FSC_SAMPLE_MODEL));
        QCOMPARE(r.pipeline, std::string("O2"));
        QCOMPARE(r.target.threads, 1);
        QCOMPARE(r.passes.size(), s.compiled()->passes.size());
        QCOMPARE(int(std::count_if(r.opsets.begin(), r.opsets.end(),
                                   [](const auto& o) { return o.first == "ai.fusescope"; })),
                 1);
        auto trace = profileGraph([&] {
            ProfileRequest quick = r;
            quick.warmup = 0, quick.iterations = 1;
            return quick;
        }());
        QVERIFY2(trace.isOk(), trace.status().message().c_str());
        QCOMPARE(trace->passes.size(), r.passes.size());
    }

    void aProfileDeclaresTheDomainsOfTheCompiledOps() {
        // A dynamically quantized product compiles to com.microsoft.DynamicQuantizeMatMul,
        // a domain the imported model never declared: profiling the compiled graph must find
        // its kernel (it once failed with "no cpu kernel ... at opset -1" on every quantized
        // model, QDQ exports' QLinearConv included).
        GraphBuilder b;
        ValueId x = b.input("x", DType::Float32, Shape::ofSizes({4, 8}));
        auto q = b.node("DynamicQuantizeLinear", {x}, {"xq", "xs", "xz"});
        std::string bytes(8 * 3, char(3));
        ValueId w = b.initializer(Tensor("w", DType::Int8, {8, 3}, makeBuffer(bytes), 0, bytes.size()));
        ValueId acc = b.op("MatMulInteger", {q[0], w, q[2]}, "acc");
        ValueId wide = b.op("Cast", {acc}, "wide", {intAttr("to", int64_t(DType::Float32))});
        b.output(b.op("Mul", {wide, q[1]}, "y"));
        QTemporaryDir dir;
        const std::string path = dir.filePath("dynamic.onnx").toStdString();
        QVERIFY(exportModel(b.buildModel(17), path).isOk());
        Session s;
        QVERIFY(s.open(path).isOk());
        QVERIFY(s.compile({.passes = *pipelinePasses("O2")}).isOk());
        QVERIFY(nodeOfType(*s.compiledModel()->graph, "DynamicQuantizeMatMul").valid());
        ProfileRequest r = s.profileRequest(s.compiledModel()->graph, Target{}, "O2");
        r.warmup = 0, r.iterations = 1;
        auto trace = profileGraph(r);
        QVERIFY2(trace.isOk(), trace.status().message().c_str());
    }

    void stepsAreTheCompilesPassesAfterTheImport() {
        Session s = compiledSample();
        const CompileTrace& trace = *s.compiled();
        QCOMPARE(s.stepCount(), int(trace.passes.size()) + 1);
        QCOMPARE(s.stepLabel(0), std::string("imported"));
        QCOMPARE(s.stepLabel(1), "1. " + trace.passes[0].name);
        QVERIFY(s.stepLabel(s.stepCount()).empty());
        QCOMPARE(s.snapshotAt(0), trace.imported);
        QVERIFY(!s.snapshotAt(-1) && !s.snapshotAt(s.stepCount()));
        QCOMPARE(s.step(), -1);  // none shown until chosen
        // The comparison's left pane: the step before, unless another step was chosen.
        QCOMPARE(s.compareBaseFor(3, -1), 2);
        QCOMPARE(s.compareBaseFor(3, 3), 2);
        QCOMPARE(s.compareBaseFor(3, 0), 0);
        QCOMPARE(s.compareBaseFor(0, -1), -1);
    }

    void aDiffMarksWhatAStepRemovedAndAdded() {
        Session s = compiledSample();
        const auto imported = s.snapshotAt(0)->materialize();
        const auto last = s.snapshotAt(s.stepCount() - 1)->materialize();
        const Session::StepDiff d = Session::diff(*imported, *last);
        const NodeId softmax = nodeOfType(*imported, "Softmax");
        const NodeId attention = nodeOfType(*last, "Attention");
        QVERIFY(softmax.valid() && attention.valid());
        QCOMPARE(d.before[softmax.index], Session::Change::Removed);
        QCOMPARE(d.after[attention.index], Session::Change::Added);
        int kept = 0;
        for (NodeId id : last->order())
            if (imported->nodeArenaSize() > id.index && d.after[id.index] == Session::Change::None) {
                QCOMPARE(d.before[id.index], Session::Change::None);
                ++kept;
            }
        QVERIFY(kept > 0);  // unchanged nodes are marked on neither side
        // A step against itself changes nothing.
        const Session::StepDiff same = Session::diff(*last, *last);
        QVERIFY(std::all_of(same.after.begin(), same.after.end(), [](auto c) { return c == Session::Change::None; }));
    }

    void provenanceLinksAFusedNodeToWhatItWasMadeFrom() {
        Session s = compiledSample();
        const auto imported = s.snapshotAt(0)->materialize();
        const auto last = s.snapshotAt(s.stepCount() - 1)->materialize();
        const NodeId attention = nodeOfType(*last, "Attention");
        const std::vector<NodeId> sources = linkedNodes(*last, attention, *imported);
        QVERIFY(std::find(sources.begin(), sources.end(), nodeOfType(*imported, "Softmax")) != sources.end());
        // And back: the imported Softmax links to the fused node.
        const std::vector<NodeId> fused = linkedNodes(*imported, nodeOfType(*imported, "Softmax"), *last);
        QVERIFY(std::find(fused.begin(), fused.end(), attention) != fused.end());
        QVERIFY(linkedNodes(*last, NodeId{}, *imported).empty());
    }

    // Two compiles of one model (without attention-fusion, and the full O2): the unfused
    // Softmax is only on the left, the Attention only on the right, and the nodes both make
    // from the same imported nodes are marked on neither side, whatever their ids.
    void aDiffByProvenanceComparesTwoCompiles() {
        Session s = compiledSample();
        const auto full = s.snapshotAt(s.stepCount() - 1)->materialize();
        PipelineSpec without = s.pipeline();
        without.passes.erase(std::remove(without.passes.begin(), without.passes.end(), "attention-fusion"),
                             without.passes.end());
        auto variant = Session::compileWith(*s.model(), without);
        QVERIFY(variant);
        const Graph& left = *variant->model.graph;
        const Session::StepDiff d = Session::diffByProvenance(left, *full);
        QCOMPARE(d.before[nodeOfType(left, "Softmax").index], Session::Change::Removed);
        QCOMPARE(d.after[nodeOfType(*full, "Attention").index], Session::Change::Added);
        const NodeId conv = nodeOfType(*full, "FusedConv");
        QVERIFY(conv.valid());
        QCOMPARE(d.after[conv.index], Session::Change::None);  // conv-bn and activation fusion ran on both
        const Session::StepDiff same = Session::diffByProvenance(*full, *full);
        QVERIFY(std::all_of(same.before.begin(), same.before.end(), [](auto c) { return c == Session::Change::None; }));
        // A fused node is looked up by its own name and by those of the imported nodes it holds.
        const std::vector<std::string> names = ownAndOriginNames(*full, nodeOfType(*full, "Attention"));
        QVERIFY(names.size() > 2);
        QCOMPARE(names.front(), full->node(nodeOfType(*full, "Attention")).name);
        QVERIFY(std::find(names.begin(), names.end(), left.node(nodeOfType(left, "Softmax")).name) != names.end());
    }

    void heatAndKernelsBelongToTheStepThatRan() {
        Session s = compiledSample();
        const int ran = s.stepCount() - 1;
        s.setStep(ran);
        auto trace = std::make_shared<Trace>();
        trace->iterations = 2;
        for (int i = 0; i < 2; ++i) {
            trace->activities.push_back(kernel(3, "gemm", 3000, i));
            trace->activities.push_back(kernel(3, "bias", 1000, i));
            trace->activities.push_back(kernel(5, "relu", 4000, i));
        }
        s.setRun(trace, ran);
        QVERIFY(s.runMatchesStep());
        const NodeHeat share = s.runHeat(HeatUnit::Share);
        QCOMPARE(share.values.size(), size_t(6));
        QCOMPARE(share.values[3], 0.5);
        QCOMPARE(share.values[5], 0.5);
        const NodeHeat ms = s.runHeat(HeatUnit::Milliseconds);
        QCOMPARE(ms.values[3], 0.004);  // 8 us over two iterations
        const auto kernels = s.kernelsOfNode(NodeId{3});
        QCOMPARE(kernels.size(), size_t(2));
        QCOMPARE(kernels[0].name, std::string("bias"));  // by name
        QCOMPARE(kernels[1].launches, int64_t(2));
        QCOMPARE(kernels[1].msPerIteration, 0.003);
        QVERIFY(s.kernelsOfNode(NodeId{4}).empty());
        // Another step has other ids: no heat, no kernels; the run stays.
        s.setStep(0);
        QVERIFY(!s.runMatchesStep());
        QVERIFY(s.runHeat(HeatUnit::Share).empty());
        QVERIFY(s.kernelsOfNode(NodeId{3}).empty());
        // A stored run (step -1) matches no step.
        s.setRun(trace, -1);
        s.setStep(ran);
        QVERIFY(!s.runMatchesStep());
        // A new compile: the run's ids belong to the one before.
        s.setRun(trace, ran);
        s.setCompiled(s.compiledResult());
        s.setStep(ran);
        QVERIFY(!s.runMatchesStep());
        QVERIFY(s.run());
        // A new model forgets its compile; the run stays shown, tied to no step.
        s.setModel(s.model());
        QVERIFY(!s.compiled() && s.stepCount() == 0 && s.run() && s.runStep() == -1);
    }
};

QTEST_APPLESS_MAIN(TestSession)
#include "tst_session.moc"
