#pragma once
// What the user is looking at, without Qt: the model, its compile trace and the step shown,
// the run shown and the step it ran on; and what the views need computed from them (the
// nodes a step removed or added against another, a run's heat per node, a node's kernels in
// the run). The GUI's window and the CLI's commands both drive it: the CLI calls open() and
// compile() in turn; the GUI does the same work in background jobs and hands the results
// to setModel() and setCompiled().
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/profiling/profile_session.h"
#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "core/graph.h"
#include "profiler/trace.h"
#include "views/heat_scale.h"

namespace fsc {

class Session {
public:
    // A new model: its compile and step are forgotten; a run shown stays, tied to no step.
    void setModel(std::shared_ptr<const Model> model);
    const std::shared_ptr<const Model>& model() const { return m_model; }
    // Imports a model file (importModel: a one-line error naming the file and the cause).
    // On an error the session keeps what it had.
    Status open(const std::string& path);
    // Compiles `model` with the pipeline described (its passes, precision and parallelism,
    // placed by buildPipeline): what compile() and the GUI's compile job both call. A failed
    // compile names the model.
    static Result<CompileResult> compileWith(const Model& model, const PipelineSpec& pipeline,
                                             const CompileOptions& options = {});
    // Compiles the model open; on an error the session stays as it was.
    Status compile(const PipelineSpec& pipeline, const CompileOptions& options = {});
    // A new compile of the model with `pipeline`; the step shown goes back to none (-1).
    void setCompiled(std::shared_ptr<const CompileResult> result, PipelineSpec pipeline = {});
    const PipelineSpec& pipeline() const { return m_pipeline; }  // what the compile shown used
    const std::shared_ptr<const CompileResult>& compiledResult() const { return m_result; }
    const std::shared_ptr<const CompileTrace>& compiled() const { return m_compiled; }
    // The compiled model, what runs (null before a compile).
    const std::shared_ptr<const Model>& compiledModel() const { return m_compiledModel; }

    // The CUDA C++ the backend generates for a FusedElementwise node of `graph` (as compile
    // --show-kernels prints it): its entry point and source, or why there is none.
    static Result<std::pair<std::string, std::string>> generatedKernel(const Graph& graph, NodeId node);

    // Steps: 0 is the graph as imported, N the graph after the compile's Nth pass.
    int stepCount() const;
    std::shared_ptr<const GraphSnapshot> snapshotAt(int step) const;
    std::string stepLabel(int step) const;  // "imported", "3. fold-constants"
    // The step shown, with its graph once made (snapshots are materialised off the GUI thread).
    void setStep(int step, std::shared_ptr<const Graph> graph = nullptr);
    int step() const { return m_step; }
    const std::shared_ptr<const Graph>& stepGraph() const { return m_stepGraph; }
    // The step a comparison shows beside `step`: `base` when it names another step, else the
    // one before. -1 when there is none.
    int compareBaseFor(int step, int base) const;
    // Whether step's pass changed the graph (the imported step: no pass, false).
    bool stepChanged(int step) const;
    // The last step at or before `step` whose pass changed the graph, or `step` when none did:
    // where a comparison opens, so its two sides differ.
    int lastChangingStep(int step) const;

    // What profileGraph needs to time `graph` (a step of this compile, or the compiled model's)
    // on `target`: its opsets with the fused ops' domain, the model, the compile's passes, the
    // label naming what ran. The one place a profile is described; callers add their feeds,
    // warm-up and iterations.
    ProfileRequest profileRequest(std::shared_ptr<const Graph> graph, const Target& target,
                                  const std::string& label) const;

    // The run shown: measured on `step` of this compile, or -1 for a stored run (whose node
    // ids need not be those of any graph here).
    void setRun(std::shared_ptr<const Trace> run, int step);
    const std::shared_ptr<const Trace>& run() const { return m_run; }
    int runStep() const { return m_runStep; }
    bool runMatchesStep() const { return m_run && m_runStep >= 0 && m_runStep == m_step; }
    // The run's heat per node of the step that ran (empty when the run is not of the step shown).
    NodeHeat runHeat(HeatUnit unit) const;
    // A node's launches in the run shown, one row per kernel name.
    struct KernelLaunches {
        std::string name;
        int64_t launches = 0;
        double msPerIteration = 0;
        const Activity* first = nullptr;  // its grid, block and registers
    };
    std::vector<KernelLaunches> kernelsOfNode(NodeId node) const;

    // Node changes between two graphs of one compile (snapshots share node ids): by node
    // index, Removed where live in `before` only, Added where live in `after` only.
    enum class Change { None, Removed, Added };
    struct StepDiff {
        std::vector<Change> before, after;
    };
    static StepDiff diff(const Graph& before, const Graph& after);
    // The same between two compiles of one imported model (a pass left out, say), whose new
    // nodes' ids mean nothing to each other: a node is in both when a node of the same op
    // was made from the same imported nodes (an imported node, from itself).
    static StepDiff diffByProvenance(const Graph& before, const Graph& after);

private:
    std::shared_ptr<const Model> m_model;
    std::shared_ptr<const CompileResult> m_result;
    std::shared_ptr<const CompileTrace> m_compiled;     // parts of m_result
    std::shared_ptr<const Model> m_compiledModel;
    PipelineSpec m_pipeline;
    int m_step = -1;
    std::shared_ptr<const Graph> m_stepGraph;
    std::shared_ptr<const Trace> m_run;
    int m_runStep = -1;
};

}  // namespace fsc
