#pragma once
// The pass stepper's list: the imported graph, then one row per pass of a compile trace
// with its node counts, delta, time, changes and rejections, and once an ablation has run,
// each pass's effect. Row r's graph is the snapshot after that step (row 0: as imported).
#include <QAbstractTableModel>
#include <QMap>
#include <QString>

#include <memory>

#include "compiler/pass_manager.h"

namespace fsc {

class PassListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Step, Nodes, Delta, Milliseconds, Changes, Rejected, Effect, ColumnCount };

    // What leaving a pass out did (an ablation's verdict), by pass name; a new trace clears it.
    struct PassEffectText {
        QString verdict, details;
        int sign = 0;  // +1 the pass paid, -1 it cost, 0 within noise or not timed
    };
    void setEffects(QMap<QString, PassEffectText> effects);
    bool hasEffects() const { return !m_effects.isEmpty(); }

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
    QMap<QString, PassEffectText> m_effects;
};

}  // namespace fsc
