#pragma once
// Imports a model off the GUI thread and hands the result back on it. A bad file gives
// failed(message); the window that asked keeps whatever it showed before.
#include <QObject>
#include <QString>

#include <memory>

#include "core/graph.h"

namespace fsc {

class ModelLoader : public QObject {
    Q_OBJECT
public:
    explicit ModelLoader(QObject* parent = nullptr);
    ~ModelLoader() override;

    // Loads a file, or a Qt resource path (":/...") for the bundled sample.
    void load(const QString& path);
    bool busy() const { return m_busy; }
    // Abandons the load under way: its result is dropped when it arrives, and a new load
    // may start at once. (Parsing itself cannot be interrupted.)
    void cancel();

signals:
    void loaded(std::shared_ptr<const fsc::Model> model, QString path);
    void failed(QString message);
    void cancelled(QString path);

private:
    bool m_busy = false;
    quint64 m_generation = 0;  // bumped by cancel(): results of older loads are dropped
    QString m_path;
    QList<class QThread*> m_threads;
};

}  // namespace fsc
