#include "app/gui/model_loader.h"

#include <QFile>
#include <QThread>

#include "core/onnx_import.h"

namespace fsc {

ModelLoader::ModelLoader(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<const fsc::Model>>();
}

ModelLoader::~ModelLoader() {
    if (m_thread) m_thread->wait();
}

void ModelLoader::load(const QString& path) {
    if (m_busy) return;
    m_busy = true;
    m_thread = QThread::create([this, path] {
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
            QMetaObject::invokeMethod(this, [this, shared, path] {
                m_busy = false;
                emit loaded(shared, path);
            });
        } else {
            QString message = QString::fromStdString(model.status().message());
            QMetaObject::invokeMethod(this, [this, message] {
                m_busy = false;
                emit failed(message);
            });
        }
    });
    connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
    connect(m_thread, &QThread::destroyed, this, [this] { m_thread = nullptr; });
    m_thread->start();
}

}  // namespace fsc
