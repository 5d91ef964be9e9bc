// Device activity without a GPU: recorded CUPTI-style records go through the same
// correlation (external ids pushed per plan node), buffering (the thread handover, bounded
// and counted), CUDA Graph replay mapping, memory and NVTX range code as a GPU run's, and
// come out as a Trace whose node stats are checked. CUPTI itself, here without a device,
// must refuse to start with a reason rather than crash.
#include <QTest>

#include <thread>

#include "profiler/activity_source.h"
#include "profiler/cupti/cupti_source.h"
#include "profiler/cupti/nvtx_range.h"
#include "profiler/device_trace.h"
#include "profiler/trace.h"

using namespace fsc;

namespace {

DeviceRecord kernelRecord(const std::string& name, uint64_t start, uint64_t end, uint32_t stream = 7) {
    DeviceRecord r;
    r.kind = DeviceRecordKind::Kernel;
    r.name = name;
    r.startNs = start;
    r.endNs = end;
    r.stream = stream;
    r.grid[0] = 128, r.block[0] = 256, r.registers = 32;
    return r;
}

DeviceRecord memoryRecord(DeviceRecordKind kind, uint64_t at, uint64_t bytes) {
    DeviceRecord r;
    r.kind = kind;
    r.startNs = r.endNs = at;
    r.bytes = bytes;
    return r;
}

Trace planOfThree() {
    Trace t;
    t.backend = "cuda";
    for (int id : {0, 1, 2}) {
        TraceNode n;
        n.id = id;
        n.name = "node" + std::to_string(id);
        n.flops = 1e6;
        n.bytes = 1e4;
        t.nodes.push_back(n);
    }
    return t;
}

}  // namespace

class TestDeviceTrace : public QObject {
    Q_OBJECT
private slots:
    void externalIdsRoundTrip() {
        for (ExternalId e : {ExternalId{-1, 0, 0}, ExternalId{0, 0, 0}, ExternalId{123456789, 999, 3}, ExternalId{7, 65535, 255}}) {
            const ExternalId back = ExternalId::decode(e.encode());
            QCOMPARE(back.node, e.node);
            QCOMPARE(back.iteration, e.iteration);
            QCOMPARE(back.depth, e.depth);
        }
        QCOMPARE(ExternalId{}.encode(), uint64_t(0));  // "no node" is CUPTI's "no id"
    }

    void kernelsAreTiedToThePlanNodeThatLaunchedThem() {
        // A backend's two iterations over three nodes: each node pushes its id around its
        // launches; node 1 launches two kernels; an input copy runs outside every node.
        RecordedActivitySource source;
        QVERIFY(source.start());
        uint64_t clock = 1'000'000;
        DeviceRecord copy;
        copy.kind = DeviceRecordKind::Memcpy;
        copy.name = "HtoD";
        copy.startNs = clock, copy.endNs = clock + 500, copy.bytes = 4096;
        source.launch(copy);
        clock += 1000;
        for (int iteration = 0; iteration < 2; ++iteration)
            for (int node = 0; node < 3; ++node) {
                source.pushExternalId(ExternalId{node, iteration, 0}.encode());
                const int kernels = node == 1 ? 2 : 1;
                for (int k = 0; k < kernels; ++k) {
                    source.launch(kernelRecord("k" + std::to_string(node), clock, clock + 100 * uint64_t(node + 1)));
                    clock += 1000;
                }
                source.popExternalId();
            }
        QCOMPARE(source.currentExternalId(), uint64_t(0));
        source.launch(kernelRecord("stray", clock, clock + 50));  // nobody's

        std::vector<DeviceRecord> records;
        int64_t dropped = 0;
        QVERIFY(source.drain(records, dropped));
        // CUPTI hands buffers over in any order: correlations after the kernels they name.
        std::stable_partition(records.begin(), records.end(), [](const DeviceRecord& r) { return r.kind != DeviceRecordKind::Correlation; });
        Trace trace = planOfThree();
        DeviceTraceBuilder builder;
        builder.add(std::vector<DeviceRecord>(records.begin(), records.begin() + long(records.size() / 2)));
        builder.add(std::vector<DeviceRecord>(records.begin() + long(records.size() / 2), records.end()));
        builder.addDropped(3);
        const DeviceTraceCounts counts = builder.finish(trace);
        QCOMPARE(counts.kernels, int64_t(9));
        QCOMPARE(counts.copies, int64_t(1));
        QCOMPARE(counts.unattributed, int64_t(1));  // the stray kernel, reported
        QCOMPARE(trace.droppedRecords, int64_t(3));
        QCOMPARE(trace.activities.front().startNs, int64_t(0));  // times from the first record
        QCOMPARE(trace.activities.front().kind, ActivityKind::Memcpy);
        QCOMPARE(trace.activities.front().name, std::string("memcpy HtoD"));
        QVERIFY(std::is_sorted(trace.activities.begin(), trace.activities.end(),
                               [](const Activity& a, const Activity& b) { return a.startNs < b.startNs; }));
        int secondIteration = 0;
        for (const Activity& a : trace.activities) {
            if (a.kind != ActivityKind::Kernel || a.node < 0) continue;
            QCOMPARE(a.name, "k" + std::to_string(a.node));  // each kernel went to the node that launched it
            QCOMPARE(a.stream, 7);
            QCOMPARE(a.grid[0], 128);
            secondIteration += a.iteration == 1;
        }
        QCOMPARE(secondIteration, 4);
        // Node stats from device records: node 1 launched 2 kernels of 200 ns per iteration.
        const std::vector<NodeStat> stats = computeNodeStats(trace);
        QCOMPARE(stats.size(), size_t(3));
        QCOMPARE(stats[0].node, int64_t(1));
        QCOMPARE(stats[0].launches, int64_t(4));
        QCOMPARE(stats[0].totalNs, int64_t(800));
        QCOMPARE(stats[1].node, int64_t(2));
        QCOMPARE(stats[1].totalNs, int64_t(600));
    }

    void graphReplaysMapKernelsThroughTheirGraphNodes() {
        // A CUDA Graph launch carries one correlation (its iteration); its kernels name
        // their graph node, which the backend mapped to plan nodes at capture.
        std::vector<DeviceRecord> records;
        DeviceRecord launch;
        launch.kind = DeviceRecordKind::Correlation;
        launch.correlationId = 42;
        launch.externalId = ExternalId{-1, 5, 0}.encode();
        records.push_back(launch);
        for (uint64_t g = 1; g <= 3; ++g) {
            DeviceRecord k = kernelRecord("graph_k", 100 * g, 100 * g + 40);
            k.correlationId = 42;
            k.graphNodeId = 1000 + g;
            records.push_back(k);
        }
        // Node 1001 mapped by the record the activity source made at capture (after the
        // kernels: records come in any order), 1002 directly.
        DeviceRecord made;
        made.kind = DeviceRecordKind::GraphNode;
        made.graphNodeId = 1001;
        made.externalId = ExternalId{2, 0, 0}.encode();
        records.push_back(made);
        DeviceTraceBuilder builder;
        builder.mapGraphNode(1002, ExternalId{0, 0, 0});
        // 1003 unmapped: unattributed, still drawn.
        builder.add(records);
        Trace trace = planOfThree();
        const DeviceTraceCounts counts = builder.finish(trace);
        QCOMPARE(counts.kernels, int64_t(3));
        QCOMPARE(counts.unattributed, int64_t(1));
        QCOMPARE(trace.activities[0].node, int64_t(2));
        QCOMPARE(trace.activities[1].node, int64_t(0));
        QCOMPARE(trace.activities[2].node, int64_t(-1));
        for (const Activity& a : trace.activities) QCOMPARE(a.iteration, 5);
    }

    void memoryRecordsBecomeTheMeasuredTimelineAndRangesPair() {
        std::vector<DeviceRecord> records{memoryRecord(DeviceRecordKind::Allocation, 100, 1 << 20),
                                          memoryRecord(DeviceRecordKind::Release, 400, 1 << 20),
                                          memoryRecord(DeviceRecordKind::Allocation, 300, 4 << 20),
                                          memoryRecord(DeviceRecordKind::Allocation, 200, 2 << 20)};
        records[2].correlationId = 9;
        DeviceRecord owner;
        owner.kind = DeviceRecordKind::Correlation;
        owner.correlationId = 9;
        owner.externalId = ExternalId{1, 0, 0}.encode();
        records.push_back(owner);
        DeviceRecord start, end, lonely;
        start.kind = DeviceRecordKind::RangeStart, start.rangeId = 1, start.name = "iteration 0", start.startNs = 150;
        end.kind = DeviceRecordKind::RangeEnd, end.rangeId = 1, end.startNs = 350;
        lonely.kind = DeviceRecordKind::RangeEnd, lonely.rangeId = 77, lonely.startNs = 360;
        records.insert(records.end(), {start, end, lonely});
        DeviceTraceBuilder builder;
        builder.add(records);
        Trace trace = planOfThree();
        const DeviceTraceCounts counts = builder.finish(trace);
        // In time order: +1, +2, +4 (node1's), -1 MiB; times from the first record (100 ns).
        QCOMPARE(trace.measuredMemory.size(), size_t(4));
        const int64_t mib = 1 << 20;
        QCOMPARE(trace.measuredMemory[0].bytes, mib);
        QCOMPARE(trace.measuredMemory[1].bytes, 3 * mib);
        QCOMPARE(trace.measuredMemory[2].bytes, 7 * mib);
        QCOMPARE(trace.measuredMemory[2].timeNs, int64_t(200));
        QVERIFY(QString::fromStdString(trace.measuredMemory[2].label).endsWith(QStringLiteral("by node1")));
        QCOMPARE(trace.measuredMemory[3].bytes, 6 * mib);
        QCOMPARE(counts.ranges, int64_t(1));
        QCOMPARE(counts.unmatchedRanges, int64_t(1));
        QCOMPARE(trace.activities.size(), size_t(1));
        QCOMPARE(trace.activities[0].kind, ActivityKind::Range);
        QCOMPARE(trace.activities[0].name, std::string("iteration 0"));
        QCOMPARE(trace.activities[0].durationNs(), int64_t(200));
    }

    void theHandoverIsSafeAcrossThreadsAndCountsWhatItCannotKeep() {
        RecordQueue queue(10'000);
        std::vector<std::thread> producers;
        for (int t = 0; t < 4; ++t)
            producers.emplace_back([&queue] {
                for (int b = 0; b < 50; ++b) queue.push(std::vector<DeviceRecord>(100, kernelRecord("k", 0, 1)));
            });
        std::vector<DeviceRecord> taken;
        int64_t dropped = 0;
        for (int i = 0; i < 20; ++i) queue.take(taken, dropped);  // drained while being filled
        for (auto& p : producers) p.join();
        queue.addDropped(5);  // what CUPTI itself lost
        queue.take(taken, dropped);
        // 20,000 pushed; whatever did not fit was counted, none vanished.
        QCOMPARE(int64_t(taken.size()) + dropped - 5, int64_t(20'000));
        QVERIFY(dropped >= 5);
        QCOMPARE(queue.size(), size_t(0));
    }

    void aRecordedSourceRefusesMisuse() {
        RecordedActivitySource source;
        std::vector<DeviceRecord> out;
        int64_t dropped = 0;
        QVERIFY(!source.drain(out, dropped));
        QVERIFY(source.start());
        QVERIFY(!source.start());
    }

    void cuptiWithoutADeviceSaysWhy() {
        // On this machine there is no GPU (and maybe no libcupti): start() must fail with a
        // message naming CUPTI, never crash; NVTX ranges must be harmless with no tool.
        nvtxPush("test range");
        nvtxPop();
        auto source = makeCuptiActivitySource();
        const Status started = source->start();
        if (started) {
            std::vector<DeviceRecord> out;
            int64_t dropped = 0;
            QVERIFY(source->drain(out, dropped));
            source->stop();
            QSKIP("CUPTI started: this machine has a CUDA driver; the GPU tests cover it");
        }
        QVERIFY2(started.message().find("CUPTI") != std::string::npos, started.message().c_str());
        std::vector<DeviceRecord> out;
        int64_t dropped = 0;
        QVERIFY(!source->drain(out, dropped));
        source->stop();
    }
};

QTEST_APPLESS_MAIN(TestDeviceTrace)
#include "tst_device_trace.moc"
