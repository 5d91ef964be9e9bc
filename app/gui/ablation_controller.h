#pragma once
// Run > Ablate passes: every pass of the compile shown left out in turn and timed against the
// full pipeline on the compile's target (app/analysis's ablatePasses, as `fusescope-cli
// ablate` runs it), off the GUI thread with progress and Cancel; the verdicts fill the pass
// list's Effect column. It speaks to the session and the pass list only, so a test drives it
// without the window.
#include <QObject>
#include <QString>

namespace fsc {

class JobRunner;
class PassListModel;
class Session;

class AblationController : public QObject {
    Q_OBJECT
public:
    AblationController(JobRunner& jobs, PassListModel& passes, QObject* parent = nullptr);

    // Ablates the session's compile; one under way is left to finish. False, with
    // statusMessage(), when nothing is compiled yet.
    bool ablate(const Session& session, int rounds = 5);

signals:
    void logged(const QString& line);            // for the Log dock
    void statusMessage(const QString& message);  // for the status line

private:
    JobRunner& m_jobs;
    PassListModel& m_passes;
};

}  // namespace fsc
