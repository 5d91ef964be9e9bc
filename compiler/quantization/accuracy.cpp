#include "compiler/target.h"
#include "compiler/quantization/accuracy.h"
#include "compiler/runtime/thread_pool.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/tensor_difference.h"

namespace fsc {
namespace {

Result<std::unique_ptr<Executor>> executorFor(const Model& model, int threads) {
    return Executor::create(model, cpuExecutorOptions(threads));
}

Result<std::vector<RtTensor>> runSample(Executor& executor, const CalibrationData& data, size_t sample,
                                        const std::atomic<bool>* cancel) {
    std::vector<RtTensor> feeds;
    for (ValueId id : executor.feeds()) {
        const std::string& name = executor.graph().value(id).name;
        auto at = std::find(data.inputNames.begin(), data.inputNames.end(), name);
        if (at == data.inputNames.end()) return Status(ErrorCode::InvalidArgument, "the data has no input '" + name + "'");
        feeds.push_back(data.samples[sample][size_t(at - data.inputNames.begin())]);
    }
    RunOptions run;
    run.cancel = cancel;
    return executor.run(std::move(feeds), run);
}

size_t argmaxRow(const RtTensor& t, int64_t row, int64_t width) {
    size_t best = 0;
    double top = -INFINITY;
    for (int64_t j = 0; j < width; ++j)
        if (double v = elementAsDouble(t, row * width + j); v > top) {
            top = v;
            best = size_t(j);
        }
    return best;
}

}  // namespace

Result<OutputError> compareOutputs(const Model& reference, const Model& candidate, const CalibrationData& data,
                                   const std::atomic<bool>* cancel, int threads) {
    auto ref = executorFor(reference, threads);
    if (!ref) return ref.status().withContext("float32 reference");
    auto cand = executorFor(candidate, threads);
    if (!cand) return cand.status();
    OutputError e;
    TensorDifference difference;
    for (size_t s = 0; s < data.samples.size(); ++s) {
        auto a = runSample(**ref, data, s, cancel);
        if (!a) return a.status().withContext("float32 reference");
        auto b = runSample(**cand, data, s, cancel);
        if (!b) return b.status();
        for (size_t o = 0; o < a->size() && o < b->size(); ++o) {
            const RtTensor &x = (*a)[o], &y = (*b)[o];
            if (x.dims != y.dims)
                return Status(ErrorCode::Internal, "output " + std::to_string(o) + " has shape " + y.typeString() +
                                                       ", the float32 graph's " + x.typeString());
            difference.add(x, y);
            if (o == 0 && x.rank() == 2 && x.dims[1] > 1)  // the first output as [batch, classes]
                for (int64_t r = 0; r < x.dims[0]; ++r) {
                    ++e.top1Rows;
                    e.top1Agree += argmaxRow(x, r, x.dims[1]) == argmaxRow(y, r, x.dims[1]);
                }
        }
        difference.endSample();
        ++e.samples;
    }
    e.maxAbs = difference.maxAbs();
    e.meanRelative = difference.meanRelative();
    e.cosine = difference.cosine();
    return e;
}

Result<std::vector<LayerSensitivity>> layerSensitivity(const Model& model, const Int8Options& options,
                                                       const CalibrationData& data,
                                                       const std::function<void(size_t, size_t)>& progress,
                                                       const std::atomic<bool>* cancel) {
    // The layers the pass would quantize: run it once and read back what it changed.
    CompileOptions compile;
    compile.keepSnapshots = false;
    compile.cancel = cancel;
    std::vector<std::unique_ptr<Pass>> all;
    all.push_back(passes::quantizeInt8(options));
    auto full = compileModel(model, std::move(all), compile);
    if (!full) return full.status();
    std::vector<std::pair<std::string, std::string>> layers;  // name, op: those now reading a DequantizeLinear
    const Graph& q = *full->model.graph;
    for (NodeId id : q.order()) {
        const Node& n = q.node(id);
        if (n.opType != "Conv" && n.opType != "MatMul" && n.opType != "Gemm") continue;
        const Value& in = q.value(n.inputs[0]);
        if (in.producer.valid() && q.node(in.producer).opType == "DequantizeLinear") layers.push_back({n.name, n.opType});
    }
    std::vector<LayerSensitivity> table;
    for (size_t i = 0; i < layers.size(); ++i) {
        if (progress) progress(i, layers.size());
        Int8Options alone = options;
        alone.only = std::set<std::string>{layers[i].first};
        std::vector<std::unique_ptr<Pass>> one;
        one.push_back(passes::quantizeInt8(alone));
        auto quantized = compileModel(model, std::move(one), compile);
        if (!quantized) return quantized.status();
        auto error = compareOutputs(model, quantized->model, data, cancel, options.threads);
        if (!error) return error.status().withContext(layers[i].first);
        table.push_back({layers[i].first, layers[i].second, *error});
    }
    std::stable_sort(table.begin(), table.end(),
                     [](const LayerSensitivity& a, const LayerSensitivity& b) { return a.error.cosine < b.error.cosine; });
    return table;
}

}  // namespace fsc
