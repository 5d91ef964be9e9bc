#pragma once
// Fusescope's main window at this stage: a model summary and the plain node list.
// The explorer (canvas, passes, diff) replaces the central table in a later step.
#include <QMainWindow>

#include <memory>

#include "core/graph.h"

class QLabel;
class QProgressBar;
class QToolButton;
class QTableView;

namespace fsc {

class ModelLoader;
class NodeTableModel;
class SummaryView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // The bundled sample, opened when the GUI starts without a file.
    static constexpr const char* kSamplePath = ":/models/sample.onnx";

    explicit MainWindow(QWidget* parent = nullptr);

    void openModel(const QString& path);
    void cancelLoading();
    const Model* model() const { return m_model.get(); }
    NodeTableModel* nodeTable() const { return m_nodeTable; }
    bool loading() const;

signals:
    void modelShown(QString path);
    void loadFailed(QString message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void showModel(std::shared_ptr<const Model> model, const QString& path);
    void showError(const QString& message);

    std::shared_ptr<const Model> m_model;
    ModelLoader* m_loader;
    NodeTableModel* m_nodeTable;
    QTableView* m_nodeView;
    SummaryView* m_summary;
    QLabel* m_status;
    QProgressBar* m_progress;
    QToolButton* m_cancel;
};

}  // namespace fsc
