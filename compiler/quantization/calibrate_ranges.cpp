// Calibration runs a copy of the graph whose outputs are the values to observe, so the
// executor needs no hook for intermediates; histogram methods sweep the samples twice.
#include <fnmatch.h>

#include <thread>

#include "compiler/target.h"
#include "compiler/quantization/int8_options.h"
#include "compiler/runtime/thread_pool.h"
#include "compiler/runtime/executor.h"

namespace fsc {

std::string exclusionMatch(const Node& n, const std::vector<std::string>& exclude) {
    auto glob = [](const std::string& pattern, const std::string& text) {
        return !text.empty() && fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
    };
    for (const std::string& p : exclude) {
        if (glob(p, n.name) || glob(p, n.opType) || glob(p, n.scope)) return p;
        if (!n.scope.empty() && n.scope.rfind(p + "/", 0) == 0) return p;  // everything under a scope
    }
    return {};
}

Result<ActivationRanges> calibrateRanges(const Graph& graph, const std::vector<std::pair<std::string, int64_t>>& opsets,
                                         const std::vector<ValueId>& values, const CalibrationData& data,
                                         CalibrationMethod method, double percentile, const std::atomic<bool>* cancel,
                                         int threads) {
    auto observed = std::make_shared<Graph>(graph);
    observed->outputs.clear();
    for (ValueId v : values)
        if (graph.value(v).kind == Value::Kind::NodeOutput) observed->outputs.push_back(v);
    auto executor = Executor::create(observed, opsets, cpuExecutorOptions(threads));
    if (!executor) return executor.status().withContext("calibration");

    // The executor's feed order, by name, from the calibration set's order.
    std::vector<size_t> feedFrom;
    for (ValueId id : (*executor)->feeds()) {
        const std::string& name = graph.value(id).name;
        auto at = std::find(data.inputNames.begin(), data.inputNames.end(), name);
        if (at == data.inputNames.end()) return Status(ErrorCode::InvalidArgument, "calibration data has no input '" + name + "'");
        feedFrom.push_back(size_t(at - data.inputNames.begin()));
    }
    std::map<std::string, RangeCalibrator> calibrators;
    const bool histogram = method != CalibrationMethod::MinMax;
    for (int sweep = 0; sweep < (histogram ? 2 : 1); ++sweep) {
        for (const std::vector<RtTensor>& sample : data.samples) {
            if (cancel && cancel->load()) return Status(ErrorCode::Cancelled, "calibration cancelled");
            std::vector<RtTensor> feeds;
            for (size_t from : feedFrom) feeds.push_back(sample[from]);
            RunOptions run;
            run.cancel = cancel;
            auto outputs = (*executor)->run(feeds, run);
            if (!outputs) return outputs.status().withContext("calibration run");
            auto observe = [&](const std::string& name, const RtTensor& t) {
                if (t.dtype != DType::Float32) return;
                RangeCalibrator& c = calibrators[name];
                if (sweep == 0) c.observeExtent(t.as<float>(), t.numel());
                else c.observeHistogram(t.as<float>(), t.numel());
            };
            for (size_t o = 0; o < observed->outputs.size(); ++o)
                observe(graph.value(observed->outputs[o]).name, (*outputs)[o]);
            for (ValueId v : values)  // graph inputs: the feed itself
                if (graph.value(v).kind == Value::Kind::GraphInput)
                    for (size_t k = 0; k < data.inputNames.size(); ++k)
                        if (data.inputNames[k] == graph.value(v).name) observe(data.inputNames[k], sample[k]);
        }
    }
    ActivationRanges ranges;
    for (const auto& [name, c] : calibrators) ranges[name] = c.range(method, percentile);
    return ranges;
}

}  // namespace fsc
