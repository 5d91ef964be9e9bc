// A CUDA profile end to end on the simulated device: the device's own records (as CUPTI
// reports them on a GPU) become the timeline, every kernel tied to its plan node through
// the graph nodes of the CUDA Graph it replays, copies to their iteration; and the GPU
// roofs from a device query.
#include <QtTest>

#include <map>
#include <set>

#include "app/profiling/device_peaks.h"
#include "app/profiling/profile_session.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/backends/cuda/simulated_gpu.h"
#include "compiler/pass_manager.h"
#include "compiler/pipelines.h"
#include "core/onnx_import.h"

using namespace fsc;

class TestProfileSession : public QObject {
    Q_OBJECT

    static ProfileRequest sampleRequest(int iterations) {
        auto imported = importModel(FSC_SAMPLE_MODEL);
        if (!imported) qFatal("%s", imported.status().message().c_str());
        auto passes = resolvePipeline("O2", "", {});
        auto compiled = compileModel(*imported, *passes);
        if (!compiled) qFatal("%s", compiled.status().message().c_str());
        ProfileRequest request;
        request.graph = compiled->model.graph;
        request.opsets = compiled->model.opsetImports;
        request.iterations = iterations;
        request.warmup = 1;
        request.target.threads = 1;
        request.model = FSC_SAMPLE_MODEL;
        return request;
    }

private slots:
    void deviceRecordsBecomeTheTimeline() {
        ProfileRequest request = sampleRequest(3);
        request.target.backend = Backend::Cuda;
        request.target.device = makeSimulatedGpu();
        auto trace = profileGraph(request);
        // Profiled runs replay a CUDA Graph as unprofiled ones do (the first run lays out the
        // plan, the next captures): 3 unprofiled replays, then 3 of the graph captured under
        // the profiler, whose graph nodes tie each replayed kernel to its plan node.
        QCOMPARE(dynamic_cast<SimulatedGpu&>(*request.target.device).counters().replays, int64_t(6));
        QVERIFY2(trace.isOk(), trace.isOk() ? "" : trace.status().message().c_str());
        QCOMPARE(QString::fromStdString(trace->backend), QStringLiteral("cuda"));
        std::set<int64_t> nodes;
        for (const TraceNode& n : trace->nodes) nodes.insert(n.id);

        std::map<int, int> kernelsPerIteration;
        std::map<int, std::set<std::string>> copiesPerIteration;
        int gemms = 0;
        for (const Activity& a : trace->activities) {
            if (a.kind == ActivityKind::Range) continue;
            QVERIFY(a.startNs >= 0 && a.endNs >= a.startNs);
            QVERIFY2(a.iteration >= 0 && a.iteration < 3, a.name.c_str());
            if (a.kind == ActivityKind::Kernel) {
                // Every device kernel belongs to a plan node of this trace: none unattributed.
                QVERIFY2(nodes.count(a.node), a.name.c_str());
                QCOMPARE(a.stream, 7);
                QVERIFY(a.grid[0] > 0 || a.name.find("simulated") != std::string::npos);
                ++kernelsPerIteration[a.iteration];
                gemms += a.name == "cublasLt gemm (simulated)";
            } else if (a.kind == ActivityKind::Memcpy) {
                copiesPerIteration[a.iteration].insert(a.name);
            }
        }
        QCOMPARE(int(kernelsPerIteration.size()), 3);
        QVERIFY(kernelsPerIteration[0] > 10);
        QCOMPARE(kernelsPerIteration[1], kernelsPerIteration[0]);
        QCOMPARE(kernelsPerIteration[2], kernelsPerIteration[0]);
        QVERIFY(gemms >= 3 * 6);  // the sample's six projections and the head, per iteration
        // The input goes up and the output comes back in each iteration, outside any node.
        for (int i = 0; i < 3; ++i) {
            QVERIFY(copiesPerIteration[i].count("memcpy HtoD"));
            QVERIFY(copiesPerIteration[i].count("memcpy DtoH"));
        }
        QCOMPARE(trace->droppedRecords, int64_t(0));
        QVERIFY(trace->profiledMs > 0 && trace->unprofiledMs > 0);
        // Planned memory is sampled at the nodes that launched something, in time order.
        QVERIFY(!trace->plannedMemory.empty());
        for (size_t i = 1; i < trace->plannedMemory.size(); ++i)
            QVERIFY(trace->plannedMemory[i].timeNs >= trace->plannedMemory[i - 1].timeNs);
        QVERIFY(!trace->measuredMemory.empty());
        QVERIFY(QString::fromStdString(trace->peaksSource).startsWith(QStringLiteral("the simulated device runs on the CPU")));
    }

    // The CPU backend keeps its host timings: one activity per plan node per iteration.
    void cpuRunsAreTimedOnTheHost() {
        auto trace = profileGraph(sampleRequest(2));
        QVERIFY(trace.isOk());
        int kernels = 0;
        for (const Activity& a : trace->activities) kernels += a.kind == ActivityKind::Kernel && a.depth == 0;
        QCOMPARE(kernels, 2 * int(trace->nodes.size()));
        QCOMPARE(int(trace->plannedMemory.size()), int(trace->nodes.size()));
    }

    void gpuRoofsFromTheDeviceQuery() {
        CudaDeviceInfo h100;
        h100.name = "NVIDIA H100 80GB HBM3";
        h100.computeMajor = 9, h100.computeMinor = 0;
        h100.multiprocessors = 132;
        h100.clockKHz = 1980000;
        h100.memoryClockKHz = 2619000;
        h100.memoryBusWidthBits = 5120;
        const DevicePeaks fp32 = gpuPeaksFromQuery(h100, false);
        QVERIFY(qAbs(fp32.flopsPerSecond / 66.9e12 - 1) < 0.01);  // the data sheet's 67 TFLOP/s
        QVERIFY(qAbs(fp32.bytesPerSecond / 3.35e12 - 1) < 0.01);  // and 3.35 TB/s
        const DevicePeaks half = gpuPeaksFromQuery(h100, true);
        QVERIFY(qAbs(half.flopsPerSecond / 1070e12 - 1) < 0.01);
        QVERIFY(QString::fromStdString(half.source).contains(QStringLiteral("tensor-core")));

        CudaDeviceInfo a100 = h100;
        a100.computeMajor = 8, a100.multiprocessors = 108, a100.clockKHz = 1410000;
        QVERIFY(qAbs(gpuPeaksFromQuery(a100, false).flopsPerSecond / 19.5e12 - 1) < 0.01);

        CudaDeviceInfo unknown = h100;
        unknown.clockKHz = 0;
        const DevicePeaks none = gpuPeaksFromQuery(unknown, false);
        QCOMPARE(none.flopsPerSecond, 0.0);
        QVERIFY(QString::fromStdString(none.source).startsWith(QStringLiteral("no roofs")));
    }
};

QTEST_GUILESS_MAIN(TestProfileSession)
#include "tst_profile_session.moc"
