#pragma once
// The status bar's report of the job runner's work (import, compile, layout, run, ...): a
// progress bar for the newest job under way (busy when it reports no fractions) and one
// Cancel that stops all of it. Hidden while nothing runs.
#include <QWidget>

#include <map>

class QProgressBar;
class QToolButton;

namespace fsc {

class JobRunner;

class WorkIndicator : public QWidget {
    Q_OBJECT
public:
    explicit WorkIndicator(JobRunner& jobs, QWidget* parent = nullptr);
    bool busy() const { return !m_work.empty(); }
    void cancelAll();

private:
    void refresh();
    struct Work {
        QString label;
        int percent = -1;
    };
    JobRunner& m_jobs;
    std::map<int, Work> m_work;  // by job id
    QProgressBar* m_bar;
    QToolButton* m_cancel;
};

}  // namespace fsc
