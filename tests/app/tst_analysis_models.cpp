// Numeric bisection on exported models (the `models` label: torchvision and torch.nn exports
// in the model cache): a LayerNormalization kernel perturbed on purpose in a Transformer
// encoder (and BERT-base when the benchmarks have exported it), one Conv of ResNet-50, on the
// CPU and on the simulated CUDA device. Bisection must name the perturbed group as the only
// first jump, and for the Conv, the Conv as the op inside its group that jumps.
#include <QTest>

#include <algorithm>
#include <filesystem>

#include "app/analysis/numeric_bisect.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/target.h"
#include "core/onnx_import.h"
#include "perturbed_provider.h"

using namespace fsc;
using namespace fsc::test;

namespace {

bool holds(const KernelInit& init, const std::string& name) {
    if (init.node().name == name) return true;
    for (NodeId origin : init.node().origins)
        if (init.graph().node(origin).name == name) return true;
    return false;
}

// Bisects `file` with the kernels `perturbed` picks off by 1%; returns the report.
BisectReport plantedBisect(const std::string& file, Backend backend, std::function<bool(const KernelInit&)> perturbed) {
    auto model = importModel(file);
    if (!model) qFatal("%s", model.status().message().c_str());
    PipelineSpec spec{.passes = *pipelinePasses("O2")};
    spec.target.threads = 0;
    BisectSide reference{"cpu/fp32", spec, std::nullopt};
    PipelineSpec candidateSpec = spec;
    candidateSpec.target.backend = backend;
    if (backend == Backend::Cuda) candidateSpec.target.device = makeSimulatedGpu();
    ExecutorOptions options = executorOptions(candidateSpec.target);
    auto& provider = backend == Backend::Cuda ? options.device : options.host;
    provider = std::make_shared<PerturbedProvider>(provider, std::move(perturbed), 1e-2f);
    BisectSide candidate{"perturbed", candidateSpec, options};
    auto report = bisectNumerics(*model, reference, candidate, BisectOptions{});
    if (!report) qFatal("%s: %s", file.c_str(), report.status().message().c_str());
    return std::move(*report);
}

std::string cached(const std::string& name) {
    return (std::filesystem::path(FSC_MODEL_CACHE) / (name + ".onnx")).string();
}

}  // namespace

class TestAnalysisModels : public QObject {
    Q_OBJECT
private slots:
    void theFirstLayerNormOfAnEncoderIsTheFirstJump_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("cuda");
        for (const char* name : {"transformer_encoder", "bert_base"}) {
            if (!std::filesystem::exists(cached(name))) continue;  // bert_base: exported by the benchmarks
            QTest::newRow((std::string(name) + " cpu").c_str()) << QString::fromLatin1(name) << false;
            QTest::newRow((std::string(name) + " cuda").c_str()) << QString::fromLatin1(name) << true;
        }
    }
    void theFirstLayerNormOfAnEncoderIsTheFirstJump() {
        QFETCH(QString, model);
        QFETCH(bool, cuda);
        const BisectReport report = plantedBisect(cached(model.toStdString()), cuda ? Backend::Cuda : Backend::Cpu,
                                                  [](const KernelInit& init) {
                                                      return init.node().opType.find("LayerNorm") != std::string::npos;
                                                  });
        QCOMPARE(report.firstJumps.size(), size_t(1));
        const GroupError& jump = report.groups[report.firstJumps.front()];
        const bool norm = std::any_of(jump.onnxOps.begin(), jump.onnxOps.end(),
                                      [](const std::string& op) { return op == "LayerNormalization"; });
        QVERIFY2(norm, jump.node.c_str());
        QVERIFY(jump.inputError < 1e-4);
        qInfo("%s: first jump %s (%s), error %.2e -> %.2e, %zu of %zu values compared", qPrintable(model), jump.node.c_str(),
              jump.op.c_str(), jump.inputError, jump.error, report.groups.size(), report.candidateValues);
    }

    void oneConvOfResNetIsTheFirstJumpAndTheOpInsideIt_data() {
        QTest::addColumn<bool>("cuda");
        QTest::newRow("cpu") << false;
        QTest::newRow("cuda") << true;
    }
    void oneConvOfResNetIsTheFirstJumpAndTheOpInsideIt() {
        QFETCH(bool, cuda);
        const std::string conv = "/layer2/layer2.0/conv2/Conv";
        const BisectReport report = plantedBisect(cached("resnet50"), cuda ? Backend::Cuda : Backend::Cpu,
                                                  [conv](const KernelInit& init) { return holds(init, conv); });
        QCOMPARE(report.firstJumps.size(), size_t(1));
        const GroupError& jump = report.groups[report.firstJumps.front()];
        QVERIFY2(std::find(jump.onnxNodes.begin(), jump.onnxNodes.end(), conv) != jump.onnxNodes.end(), jump.node.c_str());
        std::vector<std::string> inside;
        for (const GroupError& g : report.inside)
            if (g.firstJump) inside.push_back(g.node);
        QCOMPARE(inside, std::vector<std::string>{conv});
        qInfo("resnet50 %s: first jump %s (%s), error %.2e -> %.2e, %zu of %zu values compared", cuda ? "cuda" : "cpu",
              jump.node.c_str(), jump.op.c_str(), jump.inputError, jump.error, report.groups.size(), report.candidateValues);
    }
};

QTEST_GUILESS_MAIN(TestAnalysisModels)
#include "tst_analysis_models.moc"
