#pragma once
// Help > Walkthrough: the ten chapters of the model-to-GPU walkthrough on the model shown,
// each computed when it is opened (a background job: the status bar shows its progress and
// its Cancel stops it) and kept until the next compile. A chapter's button shows its figures
// in the app (steps the passes, picks a fused node, brings a dock forward); the window acts
// on actionRequested(). The same chapters export as the handout page.
#include <QWidget>

#include <map>
#include <memory>

#include "app/common/session.h"
#include "app/walkthrough/walkthrough.h"

class QComboBox;
class QLabel;
class QPushButton;
class QTextBrowser;

namespace fsc {

class JobRunner;

class WalkthroughDock : public QWidget {
    Q_OBJECT
public:
    WalkthroughDock(JobRunner& jobs, QWidget* parent = nullptr);

    // A new compile to walk through (a copy of the session: the chapters' jobs read it while
    // the window moves on). Chapters computed for the last one are forgotten.
    void setSession(const Session& session, const QString& pipelineName);
    // Opens chapter `id` (1..10), computing it when it is not yet.
    void showChapter(int id);
    int shownChapter() const { return m_shown; }
    // Every chapter to one self-contained page, in the background; exported() follows.
    void exportHtml(const QString& path);
    QTextBrowser* page() const { return m_page; }
    QPushButton* actionButton() const { return m_action; }

signals:
    void chapterShown(int id, bool computed);  // computed: false when it failed or was cancelled
    void exported(bool ok, const QString& message);
    // The chapter's button: 3 steps the canvas on, 4 picks `argument` (a fused node) on the
    // compiled graph, 2/6/7/10 bring their dock forward or run the graph shown.
    void actionRequested(int chapter, const QString& argument);

private:
    void render(const WalkthroughChapter& chapter);
    void computeChapter(int id);

    JobRunner& m_jobs;
    QComboBox* m_contents;
    QTextBrowser* m_page;
    QPushButton* m_action;
    QLabel* m_state;
    std::shared_ptr<const Session> m_session;
    QString m_pipeline;
    std::map<int, WalkthroughChapter> m_chapters;  // computed for this session
    int m_shown = 0;
    // The compiled model's one latency measurement, shared by this compile's chapters.
    std::shared_ptr<CompiledLatency> m_latency = std::make_shared<CompiledLatency>();
    int m_generation = 0;  // bumped by setSession: a chapter of an older compile is dropped
};

}  // namespace fsc
