#pragma once
// Compiles: the model open compiled with a named pipeline (O0..O3) or a custom list of passes
// chosen in a dialog, off the GUI thread with progress and Cancel; a newer choice replaces a
// compile under way. A compile that succeeds becomes the session's (no step shown yet) and
// compiledReady() tells the window to show its last step. A job of its own on the window's
// JobRunner; it speaks to the session only, so a test drives it without the window.
#include <QObject>
#include <QPointer>
#include <QString>

#include <string>
#include <vector>

#include "compiler/target.h"

class QWidget;

namespace fsc {

class CustomPipelineDialog;
class JobRunner;
class Session;

class CompileController : public QObject {
    Q_OBJECT
public:
    // The pipeline list's last entry: the passes chosen in the custom pipeline dialog.
    static inline const QString kCustomPipeline = QStringLiteral("Custom…");

    // `dialogParent` owns the custom pipeline dialog.
    CompileController(JobRunner& jobs, Session& session, QWidget* dialogParent);

    // A named pipeline, or kCustomPipeline (the passes chosen before, else the dialog).
    void compileWith(const QString& pipeline);
    // Exactly these passes, as given whatever the target, labelled `pipeline` in the log.
    void compilePasses(const QString& pipeline, const std::vector<std::string>& passes);
    // Opens the custom pipeline dialog (the last choice checked); accepting it compiles.
    void chooseCustomPipeline();
    CustomPipelineDialog* customPipelineDialog() const;
    // What the next compiles are for (the Run dock's backend): the pipeline fits it, as the
    // CLI's does for --backend, so a run of the graph shown times what `profile` would.
    void setTarget(const Target& target) { m_target = target; }
    const Target& target() const { return m_target; }

signals:
    void compiledReady(const QString& pipeline);  // the session holds it; no step shown yet
    void customChosen();                          // the dialog was accepted
    void logged(const QString& line);             // for the Log dock
    void statusMessage(const QString& message);   // for the status line

private:
    // A named pipeline is fitted to the target (buildPipeline); a custom one runs as given.
    void compile(const QString& pipeline, const std::vector<std::string>& passes, bool custom);

    JobRunner& m_jobs;
    Session& m_session;
    QWidget* m_dialogParent;
    Target m_target;
    std::vector<std::string> m_customPasses;  // the last custom pipeline chosen
    QPointer<CustomPipelineDialog> m_dialog;
};

}  // namespace fsc
