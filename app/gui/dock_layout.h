#pragma once
// The main window's dock layout: it fits the screen the window opens on, the graph gets most
// of it, and what a user arranges is remembered per screen size (a laptop's layout is not a
// monitor's). Also raising a dock, Graph only (F11), Reset layout, and moving the keys
// between panes (F6 / Shift+F6, View > Go to).
#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPointer>

class QDockWidget;
class QMainWindow;
class QMenu;
class QWidget;

namespace fsc {

class DockLayout : public QObject {
    Q_OBJECT
public:
    // `canvas` and `before` are the graph's panes (`before` shown only when comparing).
    DockLayout(QMainWindow& window, QWidget& canvas, QWidget& before);

    // Once the docks are made: the arrangement Reset layout returns to, then this screen
    // size's saved layout, or the window fitted to the screen with the docks small.
    void keepDefaultAndRestore();
    void save() const;
    void shown();  // the window's showEvent: default dock sizes, once it is laid out
    void reset();  // View > Reset layout
    // Every dock hidden (the graph, or both panes of a comparison, take the window), or the
    // docks hidden that way shown again.
    void setGraphOnly(bool on);
    // Shows and raises the dock named `name` (its objectName); a dock below the canvas still
    // at its small starting height grows to a third of the window, since the user now asks
    // to read it. False when there is no such dock.
    bool raiseDock(const QString& name);
    // The panes F6 / Shift+F6 move between, in reading order: the canvas (both panes when
    // comparing), then the docks on screen (the front tab of each).
    QList<QWidget*> panes() const;
    void focusPane(int direction);  // +1 next, -1 previous, wrapping around
    void addPaneNavigation(QMenu* view);

private:
    void restore();
    void applyDefaultDockSizes();
    QString screenKey() const;

    QMainWindow& m_window;
    QWidget& m_canvas;
    QWidget& m_before;
    QByteArray m_defaultState;
    QList<QDockWidget*> m_hiddenForGraph;  // what setGraphOnly(true) hid
    QPointer<QDockWidget> m_dockToGrow;     // raised, to be grown once laid out (raiseDock)
    bool m_defaultSizesPending = false;
};

}  // namespace fsc
