#include "profiler/activity_source.h"

namespace fsc {

void RecordQueue::push(std::vector<DeviceRecord>&& batch) {
    std::lock_guard lock(m_mutex);
    const size_t room = m_records.size() < m_capacity ? m_capacity - m_records.size() : 0;
    if (batch.size() > room) {
        m_dropped += int64_t(batch.size() - room);
        batch.resize(room);
    }
    m_records.insert(m_records.end(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
}

void RecordQueue::addDropped(int64_t records) {
    std::lock_guard lock(m_mutex);
    m_dropped += records;
}

void RecordQueue::take(std::vector<DeviceRecord>& out, int64_t& dropped) {
    std::lock_guard lock(m_mutex);
    out.insert(out.end(), std::make_move_iterator(m_records.begin()), std::make_move_iterator(m_records.end()));
    m_records.clear();
    dropped += m_dropped;
    m_dropped = 0;
}

size_t RecordQueue::size() const {
    std::lock_guard lock(m_mutex);
    return m_records.size();
}

Status RecordedActivitySource::start() {
    if (m_started) return Status(ErrorCode::InvalidArgument, "the activity source is already recording");
    m_started = true;
    return Status::ok();
}

void RecordedActivitySource::launch(DeviceRecord record) {
    record.correlationId = m_nextCorrelation++;
    if (!m_stack.empty()) {
        DeviceRecord correlation;
        correlation.kind = DeviceRecordKind::Correlation;
        correlation.correlationId = record.correlationId;
        correlation.externalId = m_stack.back();
        m_records.push_back(correlation);
    }
    m_records.push_back(std::move(record));
}

void RecordedActivitySource::graphNodeCreated(uint64_t graphNodeId) {
    if (m_stack.empty()) return;
    DeviceRecord node;
    node.kind = DeviceRecordKind::GraphNode;
    node.graphNodeId = graphNodeId;
    node.externalId = m_stack.back();
    m_records.push_back(node);
}

Status RecordedActivitySource::drain(std::vector<DeviceRecord>& out, int64_t& dropped) {
    if (!m_started) return Status(ErrorCode::InvalidArgument, "the activity source was not started");
    out.insert(out.end(), m_records.begin(), m_records.end());
    m_records.clear();
    dropped += m_dropped;
    m_dropped = 0;
    return Status::ok();
}

}  // namespace fsc
