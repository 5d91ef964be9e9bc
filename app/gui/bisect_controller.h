#pragma once
// Run > Bisect numerics: the compile shown in float16, bfloat16, INT8 or on its own target,
// bisected against the CPU in float32 (app/analysis's bisectNumerics, as `fusescope-cli
// bisect` runs it), off the GUI thread with progress and Cancel. The result is an overlay for
// whatever step the canvas shows: each node heated by its group's relative error (a node of
// an earlier step by the groups made from it), the first jumps outlined.
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

#include "app/analysis/numeric_bisect.h"
#include "views/graph_canvas.h"
#include "views/heat_scale.h"

namespace fsc {

class JobRunner;
class Session;

class BisectController : public QObject {
    Q_OBJECT
public:
    explicit BisectController(JobRunner& jobs, QObject* parent = nullptr);

    // The candidates the menu offers: "fp16", "bf16", "int8" (on the compile's target) and
    // "target" (the compile's own target in float32: the GPU's kernels against the CPU's).
    static QStringList candidates();
    // Bisects the session's compile with `candidate`; one under way is left to finish. False,
    // with statusMessage(), when nothing is compiled yet or the candidate is unknown.
    bool bisect(const Session& session, const QString& candidate);

    struct Overlay {
        NodeHeat heat;                          // HeatUnit::RelativeError, by node index of `shown`
        std::vector<GraphCanvas::Mark> marks;   // FirstJump on the first jumps' nodes
        int nodesHeated = 0, firstJumps = 0;
    };
    // The report laid over `shown`: a node takes the largest error of the groups it is, or
    // that were made from it (provenance), so any step of the compile can show it. The ONNX
    // nodes of the first jump's group, rerun unfused (BisectReport::inside), show their own
    // errors, and only the ops that jump there are outlined.
    static Overlay overlayFor(const Graph& shown, const BisectReport& report);

signals:
    void finished(std::shared_ptr<const BisectReport> report);
    void logged(const QString& line);            // for the Log dock
    void statusMessage(const QString& message);  // for the status line

private:
    JobRunner& m_jobs;
};

}  // namespace fsc
