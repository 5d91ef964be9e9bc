#include "app/gui/model_loader.h"

#include <QFile>
#include <QThread>

#include "core/onnx_import.h"

namespace fsc {

ModelLoader::ModelLoader(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const fsc::Model>>();
}

ModelLoader::~ModelLoader() {
    for (QThread* thread : m_threads) thread->wait();
}

void ModelLoader::cancel() {
    if (!m_busy) return;
    ++m_generation;
    m_busy = false;
    emit cancelled(m_path);
}

void ModelLoader::load(const QString& path) {
    if (m_busy) return;
    m_busy = true;
    m_path = path;
    const quint64 generation = m_generation;
    QThread* thread = QThread::create([this, path, generation] {
        Result<Model> model = Status(ErrorCode::Internal, "not loaded");
        if (path.startsWith(QLatin1Char(':'))) {
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly)) {
                model = Status(ErrorCode::NotFound, path.toStdString() + ": missing resource");
            } else {
                const QByteArray bytes = file.readAll();
                model = importModelFromBytes(bytes.constData(), static_cast<size_t>(bytes.size()),
                                             path.toStdString());
            }
        } else {
            model = importModel(path.toStdString());
        }
        if (model) {
            auto shared = std::make_shared<const Model>(std::move(*model));
            QMetaObject::invokeMethod(this, [this, shared, path, generation] {
                if (generation != m_generation) return;
                m_busy = false;
                emit loaded(shared, path);
            });
        } else {
            QString message = QString::fromStdString(model.status().message());
            QMetaObject::invokeMethod(this, [this, message, generation] {
                if (generation != m_generation) return;
                m_busy = false;
                emit failed(message);
            });
        }
    });
    m_threads.append(thread);
    connect(thread, &QThread::finished, this, [this, thread] {
        m_threads.removeOne(thread);
        thread->deleteLater();
    });
    thread->start();
}

}  // namespace fsc
