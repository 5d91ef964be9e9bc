#pragma once
// What the walkthrough's chapters do in the window: Help > Walkthrough opens its dock wide
// enough to read, and a chapter's button shows what the chapter talks about (the model
// summary, a run, the next pass's graph, the fused node on the canvas, a dock).
#include <QObject>
#include <QString>

namespace fsc {

class MainWindow;
class WalkthroughDock;

class WalkthroughGuide : public QObject {
    Q_OBJECT
public:
    WalkthroughGuide(MainWindow& window, WalkthroughDock& dock);
    // The dock shown and raised, on `chapter` (0: the one open, or 1).
    void show(int chapter = 0);

private:
    void act(int chapter, const QString& argument);  // a chapter's button
    void revealNodeNamed(const QString& name);       // on the step shown, once laid out

    MainWindow& m_window;
    WalkthroughDock& m_dock;
};

}  // namespace fsc
