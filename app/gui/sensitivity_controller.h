#pragma once
// The INT8 sensitivity dock's work: calibrate the graph shown on generated inputs, quantize
// each layer alone and all of them, and measure the outputs against float32, off the GUI
// thread with progress and Cancel (a job of its own on the window's JobRunner). It speaks to
// the session and its panel only, so a test drives it without the window.
#include <QObject>
#include <QString>

namespace fsc {

class JobRunner;
class SensitivityPanel;
class Session;

class SensitivityController : public QObject {
    Q_OBJECT
public:
    SensitivityController(JobRunner& jobs, SensitivityPanel& panel, QObject* parent = nullptr);

    // Measures the graph at the session's step shown; a measurement already under way is left
    // to finish. False, with statusMessage(), when there is nothing to measure yet.
    bool measure(const Session& session);

signals:
    void logged(const QString& line);            // for the Log dock
    void statusMessage(const QString& message);  // for the status line

private:
    JobRunner& m_jobs;
    SensitivityPanel& m_panel;
};

}  // namespace fsc
