#pragma once
// The main window's menus (File, Edit, View, Run, Help) and its toolbar: each action calls the
// window's public operations or its controllers. The recent files (kept in QSettings) follow
// every model the window shows.
#include <QObject>
#include <QStringList>

class QMenu;

namespace fsc {

class MainWindow;

// The models opened most recently, newest first (at most 10; the bundled sample is not one).
QStringList recentFiles();

class MainMenus : public QObject {
    Q_OBJECT
public:
    explicit MainMenus(MainWindow& window);

private:
    void remember(const QString& path);
    void rebuildRecent();

    MainWindow& m_window;
    QMenu* m_recent = nullptr;
};

}  // namespace fsc
