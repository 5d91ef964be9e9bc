#pragma once
// What the user is looking at, without Qt: the model, its compile trace and the step shown,
// the run shown and the step it ran on; and what the views need computed from them (the
// nodes a step removed or added against another, a run's heat per node, a node's kernels in
// the run, the nodes of another step made from the same imported nodes). The GUI's window
// drives it and shows what it computes; the work that takes long (import, compile, runs)
// happens in jobs whose results are handed to it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pass_manager.h"
#include "core/graph.h"
#include "profiler/trace.h"
#include "views/heat_scale.h"

namespace fsc {

class Session {
public:
    // A new model: its compile and step are forgotten; a run shown stays, tied to no step.
    void setModel(std::shared_ptr<const Model> model);
    const std::shared_ptr<const Model>& model() const { return m_model; }
    // A new compile of the model; the step shown goes back to none (-1) until chosen.
    void setCompiled(std::shared_ptr<const CompileTrace> trace);
    const std::shared_ptr<const CompileTrace>& compiled() const { return m_compiled; }

    // Steps: 0 is the graph as imported, N the graph after the compile's Nth pass.
    int stepCount() const;
    std::shared_ptr<const GraphSnapshot> snapshotAt(int step) const;
    std::string stepLabel(int step) const;  // "imported", "3. fold-constants"
    void setStep(int step) { m_step = step; }
    int step() const { return m_step; }
    // The step a comparison shows beside `step`: `base` when it names another step, else the
    // one before. -1 when there is none.
    int compareBaseFor(int step, int base) const;

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
    // The nodes of `to` that share an imported origin with `node` of `from` (provenance both
    // ways: a fused node links to the nodes it was made from, and back).
    static std::vector<NodeId> linkedNodes(const Graph& from, NodeId node, const Graph& to);

private:
    std::shared_ptr<const Model> m_model;
    std::shared_ptr<const CompileTrace> m_compiled;
    int m_step = -1;
    std::shared_ptr<const Trace> m_run;
    int m_runStep = -1;
};

}  // namespace fsc
