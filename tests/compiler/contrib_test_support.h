#pragma once
// What the tests of ONNX Runtime's com.microsoft ops share: a built graph imported through
// ONNX bytes, run on the CPU runtime, and compared.
#include <QTest>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/runtime/executor.h"
#include "compiler/target.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"

namespace fsc::test {

constexpr const char* kMs = "com.microsoft";

// The built graph through ONNX bytes (our import's inference types what libonnx cannot).
inline Model imported(GraphBuilder& b) {
    Model m = b.buildModel(17);
    m.opsetImports.push_back({kMs, 1});
    auto bytes = exportModelToBytes(m);
    if (!bytes) qFatal("%s", bytes.status().message().c_str());
    auto back = importModelFromBytes(bytes->data(), bytes->size(), "contrib.onnx");
    if (!back) qFatal("%s", back.status().message().c_str());
    return std::move(*back);
}

inline std::vector<RtTensor> runModel(const Model& m, const std::vector<RtTensor>& feeds) {
    auto exec = Executor::create(m, cpuExecutorOptions());
    if (!exec) qFatal("%s", exec.status().message().c_str());
    auto out = (*exec)->run(feeds);
    if (!out) qFatal("%s", out.status().message().c_str());
    return std::move(*out);
}

inline RtTensor randomTensor(std::vector<int64_t> dims, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    RtTensor t = allocateTensor(DType::Float32, std::move(dims));
    for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = normal(rng);
    return t;
}

inline Tensor constant(const std::string& name, const RtTensor& t) {
    return floatTensor(name, t.dims, std::vector<float>(t.as<float>(), t.as<float>() + t.numel()));
}

inline void expectClose(const RtTensor& got, const RtTensor& want, double tolerance) {
    QCOMPARE(got.dims, want.dims);
    for (int64_t i = 0; i < want.numel(); ++i) {
        const double g = got.as<float>()[i], w = want.as<float>()[i];
        if (!(std::abs(g - w) <= tolerance * (1.0 + std::abs(w))))
            QFAIL(("element " + std::to_string(i) + ": " + std::to_string(g) + " against " + std::to_string(w)).c_str());
    }
}

}  // namespace fsc::test
