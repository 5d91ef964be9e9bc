#include "compiler/pass_manager.h"

#include <chrono>

#include "compiler/pass_registry.h"
#include "compiler/verifier.h"

namespace fsc {
namespace {

bool usesDomain(const Graph& g, const std::string& domain) {
    for (NodeId id : g.order()) {
        const Node& n = g.node(id);
        if (n.domain == domain) return true;
        for (const auto& sub : n.subgraphs())
            if (usesDomain(*sub, domain)) return true;
    }
    return false;
}

}  // namespace

Result<CompileResult> compileModel(const Model& model, const std::vector<std::string>& passes,
                                   const CompileOptions& options) {
    const PassRegistry& registry = PassRegistry::builtin();
    std::vector<std::unique_ptr<Pass>> pipeline;
    for (const std::string& name : passes) {
        const PassInfo* info = registry.find(name);
        if (!info) return Status(ErrorCode::InvalidArgument, "unknown pass '" + name + "'");
        pipeline.push_back(info->create());
    }
    return compileModel(model, std::move(pipeline), options);
}

Result<CompileResult> compileModel(const Model& model, std::vector<std::unique_ptr<Pass>> pipeline,
                                   const CompileOptions& options) {
    if (!model.graph) return invalidModel("model has no graph");

    CompileResult result;
    result.model = model;
    result.model.graph = std::make_shared<Graph>(*model.graph);
    Graph& graph = *result.model.graph;
    result.trace.imported = GraphSnapshot::capture(graph);
    const GraphSnapshot* previous = result.trace.imported.get();

    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < pipeline.size(); ++i) {
        Pass& pass = *pipeline[i];
        if (options.progress) options.progress(i, pipeline.size(), pass.name());
        if (options.cancel && options.cancel->load())
            return Status(ErrorCode::Cancelled, "compilation cancelled");
        PassReport report;
        report.name = pass.name();
        report.description = pass.description();
        report.nodesBefore = graph.nodeCount();
        Rewriter rewriter(graph, pass.name());
        PassContext context{rewriter, report.counters, report.rejections, result.model,
                            options.cancel};
        const auto t0 = std::chrono::steady_clock::now();
        Status s = pass.run(context);
        rewriter.finish();
        report.milliseconds =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!s) return s.withContext("pass '" + pass.name() + "'");
        // Declared as soon as a pass uses it: a later pass that runs the graph (INT8
        // calibration) looks kernels up by the model's opset imports.
        // com.microsoft: qdq-folding's QLinearAdd, as ONNX Runtime's quantizer writes it.
        for (const char* domain : {kFusescopeDomain, "com.microsoft"})
            if (result.model.opsetVersion(domain) < 0 && usesDomain(graph, domain))
                result.model.opsetImports.push_back({domain, 1});
        if (options.verifyEachPass) {
            Status v = verifyGraph(graph);
            if (!v) return v.withContext("after pass '" + pass.name() + "'");
        }
        report.nodesAfter = graph.nodeCount();
        report.changes = rewriter.changes();
        if (options.keepSnapshots) {
            report.snapshot = GraphSnapshot::capture(graph, previous, rewriter.takeTouchedNodes(),
                                                     rewriter.takeTouchedValues());
            previous = report.snapshot.get();
        }
        result.trace.passes.push_back(std::move(report));
    }
    result.trace.totalMilliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    return result;
}

}  // namespace fsc
