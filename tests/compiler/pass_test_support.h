#pragma once
// Helpers for the pass tests: build a model and give it ONNX's inferred types, compile it
// with chosen passes (verifier on), count ops, compare outputs numerically on the CPU
// runtime, and check golden text dumps.
#include <QTest>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/target.h"
#include "compiler/pass_manager.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/half.h"
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

// Random inputs for every dtype a graph input can have: reals in [-1, 1), small integers
// (valid indices for the Gather-style tests), both booleans. A dtype left at zero would hide
// any pass that mishandles it, so an unknown one stops the test.
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
            switch (t.elemType) {
                case DType::Float32: x.as<float>()[i] = real(rng); break;
                case DType::Float64: x.as<double>()[i] = real(rng); break;
                case DType::Float16: x.as<uint16_t>()[i] = floatToHalf(real(rng)); break;
                case DType::BFloat16: x.as<uint16_t>()[i] = floatToBfloat16(real(rng)); break;
                case DType::Int64: x.as<int64_t>()[i] = int64_t(rng() % 4); break;
                case DType::Int32: x.as<int32_t>()[i] = int32_t(rng() % 4); break;
                case DType::Int8: x.as<int8_t>()[i] = int8_t(int(rng() % 9) - 4); break;
                case DType::UInt8: x.as<uint8_t>()[i] = uint8_t(rng() % 9); break;
                case DType::Bool: x.as<bool>()[i] = (rng() & 1) != 0; break;
                default: qFatal("randomFeeds: no random values for input dtype %d", int(t.elemType));
            }
        }
        feeds.push_back(std::move(x));
    }
    return feeds;
}

// max|a - b| / max|a| of one output pair; NaN in one and not the other, or a different
// dtype or shape, is an infinite error (std::max would drop a NaN silently).
inline double relativeError(const RtTensor& x, const RtTensor& y) {
    if (x.dtype != y.dtype || x.dims != y.dims) return INFINITY;
    double diff = 0, scale = 1e-30;
    for (int64_t i = 0; i < x.numel(); ++i) {
        const double a = elementAsDouble(x, i), b = elementAsDouble(y, i);
        if (std::isnan(a) || std::isnan(b)) {
            if (std::isnan(a) != std::isnan(b)) return INFINITY;
            continue;
        }
        if (std::isinf(a) || std::isinf(b)) {
            if (a != b) return INFINITY;
            continue;
        }
        diff = std::max(diff, std::abs(a - b));
        scale = std::max(scale, std::abs(a));
    }
    return diff / scale;
}

// Largest relative error (above) over the outputs of both models on the same random
// inputs; a different number of outputs is an infinite error.
inline double maxRelativeError(const Model& reference, const Model& candidate, uint64_t seed = 7) {
    auto a = Executor::create(reference, cpuExecutorOptions());
    auto b = Executor::create(candidate, cpuExecutorOptions());
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
        if (ra->size() != rb->size()) return INFINITY;
        for (size_t o = 0; o < ra->size(); ++o) worst = std::max(worst, relativeError((*ra)[o], (*rb)[o]));
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
