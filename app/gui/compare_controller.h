#pragma once
// Run > Compare variants node by node: the compile shown, in float32 on the CPU (the
// baseline), on its own target and in float16, bfloat16 and INT8 there, each profiled and
// bisected against the baseline (app/analysis's compareVariants, as `fusescope-cli compare`
// runs it), off the GUI thread with progress and Cancel. The result fills the Variants dock;
// its overlay heats whatever step the canvas shows by one variant's time over another's,
// or by its error against the baseline.
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

#include "app/analysis/variant_compare.h"
#include "views/heat_scale.h"

namespace fsc {

class Graph;
class JobRunner;
class Session;

class CompareController : public QObject {
    Q_OBJECT
public:
    explicit CompareController(JobRunner& jobs, QObject* parent = nullptr);

    // The variants a compare of this compile runs, the baseline (cpu/fp32) first. None
    // before a compile.
    static std::vector<CompareVariant> variantsOf(const Session& session);
    // Compares the session's compile; one under way is left to finish. False, with
    // statusMessage(), when nothing is compiled yet.
    bool compare(const Session& session, int rounds = 3);

    enum class Measure { TimeRatio, Error };
    struct Overlay {
        NodeHeat heat;  // HeatUnit::TimeRatio or RelativeError, by node index of `shown`
        int nodesHeated = 0;
    };
    // One variant of `comparison` laid over `shown`: its time over variant `over`'s (any of
    // them: times need no reference), or its error against the comparison's baseline. A node
    // takes the largest figure of the ONNX nodes it is or was made from (provenance), so any
    // step of the compile can show it.
    static Overlay overlayFor(const Graph& shown, const VariantComparison& comparison,
                              size_t variant, Measure measure, size_t over);

signals:
    void started();
    void finished(std::shared_ptr<const VariantComparison> comparison);
    void stopped(const QString& why);            // cancelled, or a variant failed
    void logged(const QString& line);            // for the Log dock
    void statusMessage(const QString& message);  // for the status line

private:
    JobRunner& m_jobs;
};

}  // namespace fsc
