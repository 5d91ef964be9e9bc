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

signals:
    void loaded(std::shared_ptr<const fsc::Model> model, QString path);
    void failed(QString message);

private:
    bool m_busy = false;
    class QThread* m_thread = nullptr;
};

}  // namespace fsc
