#include "app/analysis/numeric_bisect.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "app/common/session.h"
#include "compiler/pass_manager.h"
#include "compiler/runtime/tensor_difference.h"
#include "compiler/target.h"

namespace fsc {
namespace {

// Keeps a host copy of the values it was given names for, under the name they are compared
// by (the first value made wins when two map to one name: a narrowed value before its Cast back).
class NamedTap : public ValueTap {
public:
    NamedTap(const Graph& graph, std::map<std::string, std::string> comparedAs)
        : m_graph(graph), m_comparedAs(std::move(comparedAs)) {}
    bool wants(ValueId id) const override { return m_comparedAs.count(m_graph.value(id).name) > 0; }
    void onValue(ValueId id, RtTensor hostCopy) override {
        values.try_emplace(m_comparedAs.at(m_graph.value(id).name), std::move(hostCopy));
    }
    std::map<std::string, RtTensor> values;  // by the name compared

private:
    const Graph& m_graph;
    std::map<std::string, std::string> m_comparedAs;
};

std::map<std::string, std::string> sameNames(const std::set<std::string>& names) {
    std::map<std::string, std::string> map;
    for (const std::string& name : names) map[name] = name;
    return map;
}

// The candidate's values by the reference's name they are compared with: the same name, or
// the name a precision pass gave its narrowed copy or its Cast back ("x_float16", "x_float32").
std::map<std::string, std::string> matchNames(const std::set<std::string>& reference, const std::set<std::string>& candidate) {
    std::map<std::string, std::string> map;
    for (const std::string& name : candidate) {
        if (reference.count(name)) {
            map[name] = name;
            continue;
        }
        for (const char* suffix : {"_float16", "_bfloat16", "_float32"}) {
            const std::string s(suffix);
            if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
                reference.count(name.substr(0, name.size() - s.size()))) {
                map[name] = name.substr(0, name.size() - s.size());
                break;
            }
        }
    }
    return map;
}

struct SideRun {
    std::shared_ptr<const Model> model;
    std::unique_ptr<Executor> exec;
};

Result<SideRun> prepareSide(const Model& model, const BisectSide& side, const PipelineSpec& pipeline,
                            const std::atomic<bool>* cancel) {
    CompileOptions compile;
    compile.keepSnapshots = false;
    compile.cancel = cancel;
    auto compiled = Session::compileWith(model, pipeline, compile);
    if (!compiled) return compiled.status().withContext(side.label);
    SideRun run;
    run.model = std::make_shared<const Model>(std::move(compiled->model));
    auto exec = Executor::create(*run.model, side.executor ? *side.executor : executorOptions(pipeline.target));
    if (!exec) return exec.status().withContext(side.label);
    run.exec = std::move(*exec);
    return run;
}

std::set<std::string> nodeOutputNames(const Graph& g) {
    std::set<std::string> names;
    for (NodeId id : g.order())
        for (ValueId out : g.node(id).outputs)
            if (out.valid()) names.insert(g.value(out).name);
    return names;
}

// Runs the side on `feeds` (matched to its inputs by name), keeping the named values.
Result<std::vector<RtTensor>> runTapped(SideRun& side, const std::map<std::string, RtTensor>& feeds, NamedTap& tap,
                                        const std::string& label, const std::atomic<bool>* cancel) {
    std::vector<RtTensor> ordered;
    for (ValueId id : side.exec->feeds()) {
        const std::string& name = side.exec->graph().value(id).name;
        auto at = feeds.find(name);
        if (at == feeds.end())
            return Status(ErrorCode::InvalidArgument, label + ": input '" + name + "' is not an input of the reference graph");
        ordered.push_back(at->second);
    }
    RunOptions run;
    run.tap = &tap;
    run.cancel = cancel;
    auto outputs = side.exec->run(std::move(ordered), run);
    if (!outputs) return outputs.status().withContext(label);
    return outputs;
}

// The imported nodes a candidate node stands for (itself when it has no provenance).
void provenance(const Graph& g, const Node& n, GroupError& group) {
    if (n.origins.empty()) {
        group.onnxNodes.push_back(n.name);
        group.onnxOps.push_back(n.opType);
        return;
    }
    for (NodeId origin : n.origins) {
        if (origin.index >= g.nodeArenaSize()) continue;
        group.onnxNodes.push_back(g.node(origin).name);
        group.onnxOps.push_back(g.node(origin).opType);
    }
}

// Compares the values both runs kept, in the candidate graph's order, and marks the jumps:
// errors carried through values not compared come from the nearest compared ones upstream.
std::vector<GroupError> compareGroups(const Graph& g, const std::map<std::string, std::string>& comparedAs,
                                      const std::map<std::string, RtTensor>& reference,
                                      const std::map<std::string, RtTensor>& candidate, const BisectOptions& options,
                                      double threshold) {
    std::vector<GroupError> groups;
    std::vector<double> carried(g.valueCount(), 0.0);
    std::vector<char> tainted(g.valueCount(), 0);
    for (NodeId id : g.order()) {
        const Node& n = g.node(id);
        double inputError = 0;
        bool upstreamJump = false;
        for (ValueId in : n.inputs)
            if (in.valid()) {
                inputError = std::max(inputError, carried[in.index]);
                upstreamJump = upstreamJump || tainted[in.index];
            }
        bool jumped = false;
        double outputError = inputError;
        for (ValueId out : n.outputs) {
            if (!out.valid()) continue;
            const auto as = comparedAs.find(g.value(out).name);
            const std::string name = as == comparedAs.end() ? std::string() : as->second;
            auto a = reference.find(name), b = candidate.find(name);
            if (as == comparedAs.end() || a == reference.end() || b == candidate.end() || a->second.dims != b->second.dims) {
                carried[out.index] = inputError;
                tainted[out.index] = upstreamJump;
                continue;
            }
            TensorDifference difference;
            difference.add(a->second, b->second);
            GroupError group;
            group.value = name;
            group.node = n.name;
            group.op = n.opType;
            provenance(g, n, group);
            group.error = difference.meanRelative();
            group.maxAbs = difference.maxAbs();
            group.inputError = inputError;
            group.jump = group.error >= threshold && group.error >= options.jumpFactor * inputError;
            group.firstJump = group.jump && !upstreamJump;
            jumped = jumped || group.jump;
            carried[out.index] = group.error;
            outputError = std::max(outputError, group.error);
            groups.push_back(std::move(group));
        }
        for (ValueId out : n.outputs)
            if (out.valid()) tainted[out.index] = upstreamJump || jumped;
    }
    return groups;
}

}  // namespace

Result<SideChoice> parseSideChoice(const std::string& text) {
    const size_t slash = text.find('/');
    const std::string backend = text.substr(0, slash);
    const std::string precision = slash == std::string::npos ? "fp32" : text.substr(slash + 1);
    SideChoice choice;
    if (backend != "cpu" && backend != "cuda")
        return Status(ErrorCode::InvalidArgument, "'" + text + "': needs BACKEND/PRECISION, the backend cpu or cuda");
    choice.backend = backend;
    if (precision == "fp32") choice.precision = Precision::Float32;
    else if (precision == "fp16") choice.precision = Precision::Float16;
    else if (precision == "bf16") choice.precision = Precision::BFloat16;
    else if (precision == "int8") choice.precision = Precision::Int8;
    else return Status(ErrorCode::InvalidArgument, "'" + text + "': the precision is fp32, fp16, bf16 or int8");
    return choice;
}

Result<BisectReport> bisectNumerics(const Model& model, const BisectSide& reference, const BisectSide& candidate,
                                    const BisectOptions& options, const std::atomic<bool>* cancel,
                                    const std::function<void(const std::string&)>& progress) {
    auto say = [&](const std::string& text) {
        if (progress) progress(text);
    };
    // The error a jump must reach: what the candidate's precision leaves anyway stays below it.
    double threshold = options.threshold;
    if (threshold <= 0) {
        switch (candidate.pipeline.precision) {
        case Precision::Float32: threshold = 1e-3; break;
        case Precision::Float16: threshold = 1e-2; break;
        case Precision::BFloat16: threshold = 5e-2; break;
        case Precision::Int8: threshold = 1e-1; break;
        }
    }
    BisectReport report;
    report.model = model.path;
    report.reference = reference.label;
    report.candidate = candidate.label;
    report.threshold = threshold;

    say("compiling " + reference.label + " and " + candidate.label);
    // The reference runs the candidate's passes, channels-last as fitted to the candidate's
    // target, so both graphs have the same groups and the same layouts.
    PipelineSpec referencePipeline = reference.pipeline;
    referencePipeline.passes = candidate.pipeline.passes;
    referencePipeline.channelsLastTypes = channelsLastTypes(candidate.pipeline);
    referencePipeline.customPasses = true;
    auto ref = prepareSide(model, reference, referencePipeline, cancel);
    if (!ref) return ref.status().withContext(model.path);
    auto cand = prepareSide(model, candidate, candidate.pipeline, cancel);
    if (!cand) return cand.status().withContext(model.path);
    auto built = buildFeeds(*ref->exec, options.feeds);
    if (!built) return built.status().withContext(model.path);
    std::map<std::string, RtTensor> feeds;
    for (size_t i = 0; i < built->tensors.size(); ++i)
        feeds[ref->exec->graph().value(ref->exec->feeds()[i]).name] = built->tensors[i];

    const Graph& cg = cand->exec->graph();
    const std::set<std::string> candNames = nodeOutputNames(cg);
    report.candidateValues = candNames.size();
    const std::map<std::string, std::string> comparedAs = matchNames(nodeOutputNames(ref->exec->graph()), candNames);
    std::set<std::string> shared;
    for (const auto& [candidateName, referenceName] : comparedAs) shared.insert(referenceName);
    say("running both on the same inputs, reading " + std::to_string(shared.size()) + " values both graphs have");
    NamedTap refTap(ref->exec->graph(), sameNames(shared)), candTap(cg, comparedAs);
    auto refOut = runTapped(*ref, feeds, refTap, reference.label, cancel);
    if (!refOut) return refOut.status().withContext(model.path);
    auto candOut = runTapped(*cand, feeds, candTap, candidate.label, cancel);
    if (!candOut) return candOut.status().withContext(model.path);
    TensorDifference outputs;
    for (size_t i = 0; i < refOut->size() && i < candOut->size(); ++i)
        if ((*refOut)[i].dims == (*candOut)[i].dims) outputs.add((*refOut)[i], (*candOut)[i]);
    report.outputError = outputs.meanRelative();

    report.groups = compareGroups(cg, comparedAs, refTap.values, candTap.values, options, threshold);
    for (size_t i = 0; i < report.groups.size(); ++i)
        if (report.groups[i].firstJump) report.firstJumps.push_back(i);

    if (!options.lookInside || report.firstJumps.empty()) {
        if (options.lookInside) report.insideNote = "no group's error jumps above the threshold";
        return report;
    }
    // The first jump's group, unfused on both sides: the imported nodes inside it compared one by one.
    const GroupError& first = report.groups[report.firstJumps.front()];
    report.insideGroup = first.node;
    if (first.onnxNodes.size() < 2) {
        report.insideNote = "the group is one ONNX node (" + first.onnxNodes.front() + "): nothing inside to separate";
        return report;
    }
    say("rerunning " + first.node + "'s " + std::to_string(first.onnxNodes.size()) + " nodes unfused on both sides");
    PipelineSpec refUnfused = referencePipeline, candUnfused = candidate.pipeline;
    refUnfused.passes.clear();
    candUnfused.passes.clear();
    refUnfused.customPasses = candUnfused.customPasses = true;
    auto ref0 = prepareSide(model, reference, refUnfused, cancel);
    if (!ref0) return ref0.status().withContext(model.path);
    auto cand0 = prepareSide(model, candidate, candUnfused, cancel);
    if (!cand0) return cand0.status().withContext(model.path);
    const Graph& ug = cand0->exec->graph();
    std::set<std::string> inside;
    const std::set<std::string> members(first.onnxNodes.begin(), first.onnxNodes.end());
    for (NodeId id : ug.order())
        if (members.count(ug.node(id).name))
            for (ValueId out : ug.node(id).outputs)
                if (out.valid()) inside.insert(ug.value(out).name);
    const std::map<std::string, std::string> insideAs = matchNames(nodeOutputNames(ref0->exec->graph()), inside);
    std::set<std::string> insideShared;
    for (const auto& [candidateName, referenceName] : insideAs) insideShared.insert(referenceName);
    NamedTap refInside(ref0->exec->graph(), sameNames(insideShared)), candInside(ug, insideAs);
    if (auto ran = runTapped(*ref0, feeds, refInside, reference.label, cancel); !ran) return ran.status().withContext(model.path);
    if (auto ran = runTapped(*cand0, feeds, candInside, candidate.label, cancel); !ran) return ran.status().withContext(model.path);
    report.inside = compareGroups(ug, insideAs, refInside.values, candInside.values, options, threshold);
    if (report.inside.empty()) report.insideNote = "the group's nodes make no value both unfused graphs keep";
    return report;
}

}  // namespace fsc
