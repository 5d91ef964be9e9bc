#include "app/analysis/ablation.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "app/analysis/timed_variant.h"
#include "app/common/session.h"
#include "compiler/pass_manager.h"
#include "core/text_printer.h"

namespace fsc {
namespace {

// A compiled variant waiting to be timed, or why it will not be.
struct Candidate {
    PassEffect effect;
    std::shared_ptr<const Model> model;
    std::string graphText;
    std::map<std::string, int> applied;  // pass name -> rewrites over all its steps
    int timedIndex = -1;                 // into the timed variants
};

std::map<std::string, int> appliedByPass(const CompileTrace& trace) {
    std::map<std::string, int> applied;
    for (const PassReport& pass : trace.passes) applied[pass.name] += pass.counters.applied;
    return applied;
}

double median(std::vector<double> values) {
    return values.empty() ? 0.0 : computeStats(std::move(values)).median;
}

}  // namespace

PipelineSpec pipelineWithout(const PipelineSpec& pipeline, const std::string& pass) {
    PipelineSpec spec = pipeline;
    spec.passes.clear();
    for (const std::string& name : pipeline.passes)
        if (name != pass) spec.passes.push_back(name);
    return spec;
}

namespace {

// Compiles `passes` (the rest of `base` kept), or says why it does not compile.
Candidate compileVariant(const Model& model, const PipelineSpec& base, std::vector<std::string> passes,
                         const std::atomic<bool>* cancel) {
    Candidate c;
    PipelineSpec spec = base;
    spec.passes = std::move(passes);
    CompileOptions options;
    options.keepSnapshots = false;
    options.cancel = cancel;
    auto compiled = Session::compileWith(model, spec, options);
    if (!compiled) {
        c.effect.kind = PassEffect::Kind::Failed;
        c.effect.note = "does not compile: " + compiled.status().message();
        return c;
    }
    c.applied = appliedByPass(compiled->trace);
    c.graphText = printGraph(*compiled->model.graph);
    c.model = std::make_shared<const Model>(std::move(compiled->model));
    return c;
}

VariantFigures figuresOf(const TimedVariant& v) {
    VariantFigures f;
    f.nodes = v.exec->graph().nodeCount();
    f.kernels = v.exec->plan().steps.size();
    if (const MemoryPlan* plan = v.exec->lastMemoryPlan()) f.arenaBytes = int64_t(plan->arenaBytes);
    f.samplesMs = v.samplesMs;
    f.roundMediansMs = v.roundMediansMs;
    f.latency = computeStats(v.samplesMs);
    return f;
}

// What the pass saved, round by round: the time without it against the time with it.
void compare(PassEffect& effect, const VariantFigures& withoutPass, const VariantFigures& withPass) {
    const auto &a = withoutPass.roundMediansMs, &b = withPass.roundMediansMs;
    const RoundRatios ratios = summarizeRoundRatios(a, b);
    if (ratios.empty()) return;
    std::vector<double> deltas;
    for (size_t r = 0; r < a.size() && r < b.size(); ++r)
        if (b[r] > 0) deltas.push_back(a[r] - b[r]);
    effect.ratio = ratios.median;
    effect.lowestRatio = ratios.lowest;
    effect.highestRatio = ratios.highest;
    effect.deltaMs = median(deltas);
    effect.aboveNoise = aboveNoise(ratios.ratios);
}

void interactions(PassEffect& effect, const std::map<std::string, int>& with, const std::map<std::string, int>& without) {
    for (const auto& [pass, applied] : with) {
        if (pass == effect.pass) continue;
        const auto at = without.find(pass);
        const int other = at == without.end() ? 0 : at->second;
        if (other < applied) effect.enables.push_back({pass, applied, other});
        if (other > applied) effect.takesOver.push_back({pass, applied, other});
    }
    for (const auto& [pass, applied] : without)
        if (pass != effect.pass && !with.count(pass) && applied > 0) effect.takesOver.push_back({pass, 0, applied});
}

}  // namespace

bool aboveNoise(const std::vector<double>& roundRatios) {
    if (roundRatios.size() < 3) return false;
    const bool allAbove = std::all_of(roundRatios.begin(), roundRatios.end(), [](double r) { return r > 1; });
    const bool allBelow = std::all_of(roundRatios.begin(), roundRatios.end(), [](double r) { return r < 1; });
    return (allAbove || allBelow) && std::abs(median(roundRatios) - 1) >= kAblationNoiseShare;
}

Result<AblationReport> ablatePasses(const Model& model, const PipelineSpec& pipeline, const std::string& pipelineName,
                                    const AblationOptions& options, const std::atomic<bool>* cancel,
                                    const std::function<void(const AblationProgress&)>& progress) {
    const auto started = std::chrono::steady_clock::now();
    // Compiles count one each; the timed runs are added once the variants are known.
    const int compiles = 1 + int(options.passes.empty() ? pipeline.passes.size() : options.passes.size()) +
                         (options.cumulative ? int(pipeline.passes.size()) : 0);
    int compiled = 0;
    auto say = [&](const std::string& text) {
        if (progress) progress({text, compiled, compiles + 1});
    };
    AblationReport report;
    report.model = model.path;
    report.pipeline = pipelineName;
    report.target = pipeline.target.name();
    report.warmup = options.warmup;
    report.rounds = options.rounds;
    report.runsPerRound = options.runsPerRound;
    report.settle = options.settle;
    report.noiseRule = "above noise: every round's ratio on the same side of 1, their median at least " +
                       std::to_string(int(kAblationNoiseShare * 100)) + "% from it, over at least 3 rounds";

    // The passes to leave out: each name once, in pipeline order.
    std::vector<std::string> names;
    for (const std::string& pass : pipeline.passes)
        if (std::find(names.begin(), names.end(), pass) == names.end()) names.push_back(pass);
    if (!options.passes.empty()) {
        for (const std::string& pass : options.passes)
            if (std::find(names.begin(), names.end(), pass) == names.end())
                return Status(ErrorCode::InvalidArgument, model.path + ": pass '" + pass + "' is not in the " +
                                                              pipelineName + " pipeline");
        names = options.passes;
    }

    say("compiling the full " + pipelineName + " pipeline");
    Candidate full = compileVariant(model, pipeline, pipeline.passes, cancel);
    ++compiled;
    if (cancel && cancel->load()) return Status(ErrorCode::Cancelled, "cancelled");
    if (full.effect.kind == PassEffect::Kind::Failed) return Status(ErrorCode::InvalidModel, full.effect.note);

    std::vector<Candidate> without;
    for (size_t i = 0; i < names.size(); ++i) {
        if (cancel && cancel->load()) return Status(ErrorCode::Cancelled, "cancelled");
        say("compiling without " + names[i] + " (" + std::to_string(i + 1) + " of " + std::to_string(names.size()) + ")");
        Candidate c = compileVariant(model, pipeline, pipelineWithout(pipeline, names[i]).passes, cancel);
        ++compiled;
        c.effect.label = "without " + names[i];
        c.effect.pass = names[i];
        if (c.effect.kind != PassEffect::Kind::Failed) {
            interactions(c.effect, full.applied, c.applied);
            if (c.graphText == full.graphText) {
                c.effect.kind = PassEffect::Kind::SameGraph;
                c.effect.note = full.applied.count(names[i]) && full.applied.at(names[i]) > 0
                                    ? "the same graph as the full pipeline's: later passes do its work"
                                    : "the same graph as the full pipeline's: it changed nothing here";
            }
        }
        without.push_back(std::move(c));
    }
    std::vector<Candidate> upTo;
    if (options.cumulative) {
        for (size_t k = 0; k < pipeline.passes.size(); ++k) {
            if (cancel && cancel->load()) return Status(ErrorCode::Cancelled, "cancelled");
            say("compiling the pipeline's first " + std::to_string(k) + " steps");
            Candidate c = compileVariant(model, pipeline,
                                         std::vector<std::string>(pipeline.passes.begin(), pipeline.passes.begin() + long(k)),
                                         cancel);
            ++compiled;
            c.effect.pass = k == 0 ? "" : pipeline.passes[k - 1];
            c.effect.label = k == 0 ? "imported" : "up to " + std::to_string(k) + ". " + pipeline.passes[k - 1];
            if (c.effect.kind != PassEffect::Kind::Failed && !upTo.empty() && upTo.back().graphText == c.graphText) {
                c.effect.kind = PassEffect::Kind::SameGraph;
                c.effect.note = "the same graph as the step before";
            }
            upTo.push_back(std::move(c));
        }
        Candidate last;  // the full pipeline, the last cumulative step
        last.effect.pass = pipeline.passes.back();
        last.effect.label = "up to " + std::to_string(pipeline.passes.size()) + ". " + pipeline.passes.back();
        last.graphText = full.graphText;
        if (!upTo.empty() && upTo.back().graphText == full.graphText) {
            last.effect.kind = PassEffect::Kind::SameGraph;
            last.effect.note = "the same graph as the step before";
        }
        upTo.push_back(std::move(last));
    }

    // Executors for every graph to time: the full pipeline first.
    std::vector<TimedVariant> timed;
    timed.reserve(1 + without.size() + upTo.size());
    auto prepare = [&](Candidate& c) {
        auto v = prepareVariant(*c.model, pipeline.target, options.feeds);
        if (!v) {
            c.effect.kind = PassEffect::Kind::Failed;
            c.effect.note = "does not run: " + v.status().message();
            return;
        }
        c.timedIndex = int(timed.size());
        timed.push_back(std::move(*v));
    };
    say("preparing the executors");
    prepare(full);
    if (full.timedIndex < 0) return Status(ErrorCode::InvalidModel, model.path + ": the compiled model " + full.effect.note);
    for (Candidate& c : without)
        if (c.effect.kind == PassEffect::Kind::Measured) prepare(c);
    for (Candidate& c : upTo)
        if (c.effect.kind == PassEffect::Kind::Measured && c.model) prepare(c);
    // The last cumulative step is the full pipeline itself.
    if (!upTo.empty() && upTo.back().effect.kind == PassEffect::Kind::Measured) upTo.back().timedIndex = full.timedIndex;
    report.threads = timed.front().exec->threadsInUse();

    std::vector<TimedVariant*> order;
    for (TimedVariant& v : timed) order.push_back(&v);
    const std::string timing = "timing " + std::to_string(order.size()) + " variants in " + std::to_string(options.rounds) +
                               " alternating rounds";
    Status ran = alternateRounds(order, options.warmup, options.rounds, options.runsPerRound, cancel,
                                 [&](int done, int total) {
                                     if (progress) progress({timing, compiled + done, compiled + total});
                                 },
                                 options.settle);
    if (!ran) return ran.withContext(model.path);

    report.full = figuresOf(timed[size_t(full.timedIndex)]);
    for (Candidate& c : without) {
        if (c.effect.kind == PassEffect::Kind::Measured) {
            c.effect.figures = figuresOf(timed[size_t(c.timedIndex)]);
            compare(c.effect, c.effect.figures, report.full);
        } else if (c.effect.kind == PassEffect::Kind::SameGraph) {
            c.effect.figures = report.full;
        }
        report.without.push_back(std::move(c.effect));
    }
    report.upTo.reserve(upTo.size());
    const VariantFigures* before = nullptr;  // the last step that ran
    for (Candidate& c : upTo) {
        report.upTo.push_back(std::move(c.effect));
        PassEffect& step = report.upTo.back();
        if (step.kind == PassEffect::Kind::Measured) {
            step.figures = figuresOf(timed[size_t(c.timedIndex)]);
            if (before) compare(step, *before, step.figures);
        } else if (step.kind == PassEffect::Kind::SameGraph && before) {
            step.figures = *before;
        }
        if (step.kind != PassEffect::Kind::Failed) before = &step.figures;
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

}  // namespace fsc
