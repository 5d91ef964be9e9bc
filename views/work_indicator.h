#pragma once
// The status bar's report of long work (import, compile, layout, run): a progress bar for
// the newest work under way (busy when it reports no fractions) and one Cancel that stops
// all of it. Hidden while nothing runs.
#include <QWidget>

#include <functional>
#include <map>

class QProgressBar;
class QToolButton;

namespace fsc {

class WorkIndicator : public QWidget {
    Q_OBJECT
public:
    explicit WorkIndicator(QWidget* parent = nullptr);
    // Returns an id for progress() and end(); `cancel` is what Cancel does for this work.
    int begin(const QString& label, std::function<void()> cancel);
    void progress(int id, int percent);  // 0..100
    void end(int id);                    // unknown or ended ids are ignored
    void cancelAll();
    bool busy() const { return !m_work.empty(); }

private:
    void refresh();
    struct Work {
        QString label;
        std::function<void()> cancel;
        int percent = -1;
    };
    std::map<int, Work> m_work;
    int m_next = 0;
    QProgressBar* m_bar;
    QToolButton* m_cancel;
};

}  // namespace fsc
