#pragma once
// The pass stepper's list: the imported graph, then one row per pass of a compile trace
// with its node counts, delta, time, changes and rejections. Row r's graph is the snapshot
// after that step (row 0: as imported).
#include <QAbstractTableModel>

#include <memory>

#include "compiler/pass_manager.h"

namespace fsc {

class PassListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Step, Nodes, Delta, Milliseconds, Changes, Rejected, ColumnCount };

    explicit PassListModel(QObject* parent = nullptr);

    void setTrace(std::shared_ptr<const CompileTrace> trace);
    const CompileTrace* trace() const { return m_trace.get(); }
    // The snapshot shown for a row (the imported graph for row 0), or null.
    std::shared_ptr<const GraphSnapshot> snapshotAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const CompileTrace> m_trace;
};

}  // namespace fsc
