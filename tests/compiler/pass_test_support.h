#pragma once
// Helpers for the pass tests: build a model and give it ONNX's inferred types, compile it
// with chosen passes (verifier on), count ops, compare outputs numerically on the CPU
// runtime, and check golden text dumps.
#include <QTest>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/pass_manager.h"
#include "compiler/runtime/executor.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/text_printer.h"
#include "test_support.h"

namespace fsc::test {

// Round trip through ONNX bytes, so the model carries the types ONNX's inference gives.
inline Model withInferredTypes(GraphBuilder& builder, int64_t opset = 17) {
    Model m = builder.buildModel(opset);
    auto bytes = exportModelToBytes(m);
    if (!bytes) qFatal("export failed: %s", bytes.status().message().c_str());
    auto imported = importModelFromBytes(bytes->data(), bytes->size(), "built.onnx");
    if (!imported) qFatal("import failed: %s", imported.status().message().c_str());
    return std::move(*imported);
}

inline CompileResult compileWith(const Model& model, const std::vector<std::string>& passes) {
    CompileOptions options;
    options.verifyEachPass = true;
    auto r = compileModel(model, passes, options);
    if (!r) qFatal("compile failed: %s", r.status().message().c_str());
    return std::move(*r);
}

inline int countOps(const Graph& g, const std::string& op) {
    int n = 0;
    for (NodeId id : g.order()) n += g.node(id).opType == op;
    return n;
}

inline std::vector<RtTensor> randomFeeds(const Executor& exec, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> real(-1.0f, 1.0f);
    std::vector<RtTensor> feeds;
    for (ValueId id : exec.feeds()) {
        const ValueType& t = exec.graph().value(id).type;
        std::vector<int64_t> dims;
        for (const Dim& d : t.shape.dims()) dims.push_back(d.isKnown() ? d.size() : 2);
        RtTensor x = allocateTensor(t.elemType, dims);
        for (int64_t i = 0; i < x.numel(); ++i) {
            if (t.elemType == DType::Float32) x.as<float>()[i] = real(rng);
            else if (t.elemType == DType::Int64) x.as<int64_t>()[i] = int64_t(rng() % 4);
        }
        feeds.push_back(std::move(x));
    }
    return feeds;
}

// Largest max|a - b| / max|a| over the outputs of both models on the same random inputs.
inline double maxRelativeError(const Model& reference, const Model& candidate, uint64_t seed = 7) {
    auto a = Executor::create(reference, {});
    auto b = Executor::create(candidate, {});
    if (!a) qFatal("reference: %s", a.status().message().c_str());
    if (!b) qFatal("candidate: %s", b.status().message().c_str());
    auto feeds = randomFeeds(**a, seed);
    auto ra = (*a)->run(feeds);
    if (!ra) qFatal("reference run failed: %s", ra.status().message().c_str());
    double worst = 0;
    // The candidate twice: its first run lays out the memory plan (buffers shared between
    // values, outputs written over inputs in place), its second runs in it.
    for (int pass = 0; pass < 2; ++pass) {
        auto rb = (*b)->run(feeds);
        if (!rb) qFatal("candidate run failed: %s", rb.status().message().c_str());
        for (size_t o = 0; o < ra->size(); ++o) {
            const RtTensor &x = (*ra)[o], &y = (*rb)[o];
            if (x.dims != y.dims) return INFINITY;
            double diff = 0, scale = 1e-30;
            for (int64_t i = 0; i < x.numel(); ++i) {
                diff = std::max(diff, std::abs(elementAsDouble(x, i) - elementAsDouble(y, i)));
                scale = std::max(scale, std::abs(elementAsDouble(x, i)));
            }
            worst = std::max(worst, diff / scale);
        }
    }
    return worst;
}

// A pass of the result rejected a candidate with a reason containing `reasonPart`.
inline bool rejectedFor(const CompileResult& r, const std::string& reasonPart) {
    for (const PassReport& p : r.trace.passes)
        for (const Rejection& j : p.rejections)
            if (j.reason.find(reasonPart) != std::string::npos) return true;
    return false;
}

// Compares a graph's text dump with tests/compiler/golden/<name>.txt;
// FSC_UPDATE_GOLDEN=1 rewrites the file.
inline void checkGolden(const Graph& g, const QString& name) {
    const QString path = QStringLiteral(FSC_COMPILER_GOLDEN_DIR "/") + name + QStringLiteral(".txt");
    const QString dump = QString::fromStdString(printGraph(g));
    if (qEnvironmentVariableIsSet("FSC_UPDATE_GOLDEN")) {
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write(dump.toUtf8());
    }
    QCOMPARE(dump, QString::fromUtf8(readAll(path)));
}

}  // namespace fsc::test
