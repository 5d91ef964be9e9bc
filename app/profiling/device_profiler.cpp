#include "app/profiling/device_profiler.h"

#include <atomic>

#include "compiler/backends/cuda/device.h"
#include "profiler/cupti/cupti_source.h"

namespace fsc {

// Turns the simulated device's reports into the records CUPTI would have made, launched
// through a RecordedActivitySource so each is correlated with the node pushed at the time.
class DeviceProfiler::SimulatedFeed : public DeviceObserver {
public:
    explicit SimulatedFeed(RecordedActivitySource& source) : m_source(source) {}
    void onOperation(const DeviceOperation& op) override {
        DeviceRecord r;
        switch (op.kind) {
            case DeviceOpKind::GraphNode: m_source.graphNodeCreated(op.graphNode); return;
            case DeviceOpKind::Kernel: r.kind = DeviceRecordKind::Kernel; break;
            case DeviceOpKind::Memcpy: r.kind = DeviceRecordKind::Memcpy; break;
            case DeviceOpKind::Memset: r.kind = DeviceRecordKind::Memset; break;
            case DeviceOpKind::Allocation: r.kind = DeviceRecordKind::Allocation; break;
            case DeviceOpKind::Release: r.kind = DeviceRecordKind::Release; break;
        }
        r.name = op.name;
        r.startNs = uint64_t(op.startNs);
        r.endNs = uint64_t(op.endNs);
        r.stream = 7;  // the legacy default stream's id in CUPTI's records
        r.bytes = op.bytes;
        r.address = op.address;
        r.graphNodeId = op.graphNode;
        r.grid[0] = int(op.grid), r.grid[1] = r.grid[2] = op.grid ? 1 : 0;
        r.block[0] = int(op.block), r.block[1] = r.block[2] = op.block ? 1 : 0;
        m_source.launch(std::move(r));
    }

private:
    RecordedActivitySource& m_source;
};

std::unique_ptr<DeviceProfiler> DeviceProfiler::forDevice(std::shared_ptr<Device> device) {
    if (device->simulated()) return std::make_unique<DeviceProfiler>(std::move(device), std::make_unique<RecordedActivitySource>());
    return std::make_unique<DeviceProfiler>(std::move(device), makeCuptiActivitySource());
}

DeviceProfiler::DeviceProfiler(std::shared_ptr<Device> device, std::unique_ptr<ActivitySource> source)
    : m_device(std::move(device)), m_source(std::move(source)) {
    if (m_device && m_device->simulated())
        if (auto* recorded = dynamic_cast<RecordedActivitySource*>(m_source.get())) m_feed = std::make_unique<SimulatedFeed>(*recorded);
}

DeviceProfiler::~DeviceProfiler() {
    stop();
}

Status DeviceProfiler::start() {
    FSC_RETURN_IF_ERROR(m_source->start());
    if (m_feed) m_device->setObserver(m_feed.get());
    m_started = true;
    static std::atomic<uint64_t> starts{0};
    m_scope = m_source->attributesGraphReplays() ? ++starts : 0;
    return Status::ok();
}

void DeviceProfiler::pushNode(int64_t node, int iteration, int depth) {
    m_source->pushExternalId(ExternalId{node, iteration, depth}.encode());
}

void DeviceProfiler::popNode() {
    m_source->popExternalId();
}

Status DeviceProfiler::drain() {
    FSC_RETURN_IF_ERROR(m_device->synchronize());
    std::vector<DeviceRecord> records;
    int64_t dropped = 0;
    FSC_RETURN_IF_ERROR(m_source->drain(records, dropped));
    m_builder.add(std::move(records));
    m_builder.addDropped(dropped);
    return Status::ok();
}

void DeviceProfiler::stop() {
    if (!m_started) return;
    if (m_feed) m_device->setObserver(nullptr);
    m_source->stop();
    m_started = false;
    m_scope = 0;
}

DeviceTraceCounts DeviceProfiler::finish(Trace& trace, int64_t originNs) {
    m_builder.setOrigin(uint64_t(originNs));
    return m_builder.finish(trace);
}

}  // namespace fsc
