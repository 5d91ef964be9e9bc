#include "app/common/session.h"

#include <algorithm>
#include <set>
#include <map>

#include "compiler/backends/cuda/generated_kernels.h"
#include "compiler/runtime/fused_domain.h"
#include "compiler/graph_snapshot.h"
#include "core/onnx_import.h"
#include "profiler/node_stats.h"

namespace fsc {

void Session::setModel(std::shared_ptr<const Model> model) {
    m_model = std::move(model);
    m_result.reset();
    m_compiled.reset();
    m_compiledModel.reset();
    m_step = -1;
    m_stepGraph.reset();
    m_runStep = -1;  // the run stays shown, but its ids belong to no graph here
}

Status Session::open(const std::string& path) {
    auto model = importModel(path);
    if (!model) return model.status();
    setModel(std::make_shared<const Model>(std::move(*model)));
    return Status::ok();
}

Result<CompileResult> Session::compileWith(const Model& model, const PipelineSpec& pipeline,
                                           const CompileOptions& options) {
    auto passes = buildPipeline(pipeline);
    if (!passes) return passes.status();
    auto result = compileModel(model, std::move(*passes), options);
    if (!result) return result.status().withContext(model.path);
    return result;
}

Result<std::pair<std::string, std::string>> Session::generatedKernel(const Graph& graph, NodeId node) {
    auto kernel = cudaKernelForNode(graph, graph.node(node));
    if (!kernel) return kernel.status();
    return std::make_pair(kernel->name, kernel->source);
}

Status Session::compile(const PipelineSpec& pipeline, const CompileOptions& options) {
    if (!m_model) return Status(ErrorCode::InvalidArgument, "no model to compile");
    auto result = compileWith(*m_model, pipeline, options);
    if (!result) return result.status();
    setCompiled(std::make_shared<const CompileResult>(std::move(*result)), pipeline);
    return Status::ok();
}

void Session::setCompiled(std::shared_ptr<const CompileResult> result, PipelineSpec pipeline) {
    m_result = std::move(result);
    m_pipeline = std::move(pipeline);
    // Views of the parts that share the result's lifetime.
    m_compiled = m_result ? std::shared_ptr<const CompileTrace>(m_result, &m_result->trace) : nullptr;
    m_compiledModel = m_result ? std::shared_ptr<const Model>(m_result, &m_result->model) : nullptr;
    m_step = -1;
    m_stepGraph.reset();
    if (m_runStep >= 0) m_runStep = -1;  // the run's ids belong to the compile before
}

void Session::setStep(int step, std::shared_ptr<const Graph> graph) {
    m_step = step;
    m_stepGraph = std::move(graph);
}

int Session::stepCount() const {
    return m_compiled ? int(m_compiled->passes.size()) + 1 : 0;
}

std::shared_ptr<const GraphSnapshot> Session::snapshotAt(int step) const {
    if (!m_compiled || step < 0 || step >= stepCount()) return nullptr;
    return step == 0 ? m_compiled->imported : m_compiled->passes[size_t(step - 1)].snapshot;
}

std::string Session::stepLabel(int step) const {
    if (step == 0) return "imported";
    if (!m_compiled || step < 0 || step >= stepCount()) return {};
    return std::to_string(step) + ". " + m_compiled->passes[size_t(step - 1)].name;
}

bool Session::stepChanged(int step) const {
    if (!m_compiled || step <= 0 || size_t(step) > m_compiled->passes.size()) return false;
    const PassReport& p = m_compiled->passes[size_t(step - 1)];
    return !p.changes.empty() || p.nodesBefore != p.nodesAfter;
}

int Session::lastChangingStep(int step) const {
    for (int s = step; s > 0; --s)
        if (stepChanged(s)) return s;
    return step;
}

ProfileRequest Session::profileRequest(std::shared_ptr<const Graph> graph, const Target& target,
                                       const std::string& label) const {
    ProfileRequest request;
    request.graph = std::move(graph);
    if (m_model) {
        request.opsets = m_model->opsetImports;
        request.model = m_model->path;
    }
    // A compiled step's fused ops need their domains declared: ours, and com.microsoft's
    // quantized ops that qdq-folding and integer-matmul-fusion write.
    auto declare = [&](const std::string& domain, int64_t version) {
        for (const auto& [declared, v] : request.opsets)
            if (declared == domain) return;
        request.opsets.push_back({domain, version});
    };
    declare(kFusescopeDomain, 1);
    if (m_compiledModel)
        for (const auto& [domain, version] : m_compiledModel->opsetImports) declare(domain, version);
    request.target = target;
    request.pipeline = label;
    if (m_compiled)
        for (const PassReport& p : m_compiled->passes)
            request.passes.push_back({p.name, int64_t(p.nodesBefore), int64_t(p.nodesAfter), p.milliseconds,
                                      int64_t(p.changes.size()), int64_t(p.rejections.size())});
    return request;
}

int Session::compareBaseFor(int step, int base) const {
    const int chosen = base >= 0 && base != step ? base : step - 1;
    return snapshotAt(chosen) ? chosen : -1;
}

void Session::setRun(std::shared_ptr<const Trace> run, int step) {
    m_run = std::move(run);
    m_runStep = step;
}

NodeHeat Session::runHeat(HeatUnit unit) const {
    NodeHeat heat;
    if (!runMatchesStep()) return heat;
    heat.unit = unit;
    const bool rate = unit == HeatUnit::BytesPerSecond || unit == HeatUnit::FlopsPerSecond;
    const double iterations = std::max(1, m_run->iterations);
    for (const NodeStat& s : computeNodeStats(*m_run)) {
        if (s.node < 0) continue;
        const size_t i = size_t(s.node);
        if (i >= heat.values.size()) heat.values.resize(i + 1, 0.0);
        if (rate && i >= heat.seconds.size()) heat.seconds.resize(i + 1, 0.0);
        const TraceNode* n = m_run->findNode(s.node);
        switch (unit) {
            case HeatUnit::Share:
                heat.values[i] = s.share;
                break;
            case HeatUnit::Milliseconds:
                heat.values[i] = double(s.medianNs) / 1e6;
                break;
            case HeatUnit::BytesPerSecond:
                heat.values[i] = n ? n->bytes * double(s.launches) / iterations : 0.0;
                break;
            case HeatUnit::FlopsPerSecond:
                heat.values[i] = n ? n->flops * double(s.launches) / iterations : 0.0;
                break;
            case HeatUnit::RelativeError:  // bisection's, not a run's
            case HeatUnit::TimeRatio: break;  // compare's, not a run's
        }
        if (rate) heat.seconds[i] = double(s.medianNs) / 1e9;  // per iteration, as the values
    }
    return heat;
}

std::vector<Session::KernelLaunches> Session::kernelsOfNode(NodeId node) const {
    std::vector<KernelLaunches> rows;
    if (!node.valid() || !runMatchesStep()) return rows;
    std::map<std::string, size_t> byName;
    int64_t totalNs = 0;
    std::vector<int64_t> ns;
    for (const Activity& a : m_run->activities) {
        if (a.node != int64_t(node.index) || a.kind == ActivityKind::Range) continue;
        auto [at, added] = byName.try_emplace(a.name, rows.size());
        if (added) {
            rows.push_back({a.name, 0, 0, &a});
            ns.push_back(0);
        }
        rows[at->second].launches += 1;
        ns[at->second] += a.durationNs();
        totalNs += a.durationNs();
    }
    const double iterations = std::max(1, m_run->iterations);
    for (size_t i = 0; i < rows.size(); ++i) rows[i].msPerIteration = double(ns[i]) / 1e6 / iterations;
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return rows;
}

Session::StepDiff Session::diff(const Graph& before, const Graph& after) {
    const size_t n = std::max(before.nodeArenaSize(), after.nodeArenaSize());
    std::vector<bool> liveBefore(n), liveAfter(n);
    for (NodeId id : before.order()) liveBefore[id.index] = true;
    for (NodeId id : after.order()) liveAfter[id.index] = true;
    StepDiff d;
    d.before.assign(n, Change::None);
    d.after.assign(n, Change::None);
    for (size_t i = 0; i < n; ++i) {
        if (liveBefore[i] && !liveAfter[i]) d.before[i] = Change::Removed;
        if (liveAfter[i] && !liveBefore[i]) d.after[i] = Change::Added;
    }
    return d;
}

Session::StepDiff Session::diffByProvenance(const Graph& before, const Graph& after) {
    // Imported nodes keep their ids in every compile of the model: "op|id,id,..." names a node.
    auto keyOf = [](const Graph& g, NodeId id) {
        const Node& n = g.node(id);
        std::string key = n.opType + "|";
        for (NodeId origin : n.origins.empty() ? std::vector<NodeId>{id} : n.origins)
            key += std::to_string(origin.index) + ",";
        return key;
    };
    auto keysOf = [&keyOf](const Graph& g) {
        std::set<std::string> keys;
        for (NodeId id : g.order()) keys.insert(keyOf(g, id));
        return keys;
    };
    const std::set<std::string> inBefore = keysOf(before), inAfter = keysOf(after);
    StepDiff d;
    d.before.assign(before.nodeArenaSize(), Change::None);
    d.after.assign(after.nodeArenaSize(), Change::None);
    for (NodeId id : before.order())
        if (!inAfter.count(keyOf(before, id))) d.before[id.index] = Change::Removed;
    for (NodeId id : after.order())
        if (!inBefore.count(keyOf(after, id))) d.after[id.index] = Change::Added;
    return d;
}

}  // namespace fsc
