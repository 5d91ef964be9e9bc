// The runtime with nothing above it: this test links fsc_runtime and fsc_core only, so a
// runtime file that called into a backend (or the passes) would fail to link here. It runs
// graphs through execution providers of its own: a host provider with Add and Neg, and a
// pretend device (host memory behind the Device interface) whose capability table claims Neg.
// Lowering must offer nodes to the device first, fall back to the host with the reason, copy
// values across with counted transfers, and refuse options without a host provider. The
// pool's thread count is OpenMP's before any kernel is made.
#include <QtTest>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "compiler/runtime/capability_table.h"
#include "compiler/runtime/device.h"
#include "compiler/runtime/execution_provider.h"
#include "compiler/runtime/executor.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"

using namespace fsc;

namespace {

// out = f(a[, b]) element by element, on whichever side the context's tensors live (the
// pretend device's memory is host memory, so one loop serves both providers).
KernelFactory elementwise(bool binary, float (*f)(float, float)) {
    return functionKernel([binary, f](KernelContext& ctx) -> Status {
        const RtTensor* a = ctx.input(0);
        const RtTensor* b = binary ? ctx.input(1) : a;
        if (!a || !b || a->dims != b->dims) return Status(ErrorCode::Unsupported, ctx.where() + ": same shapes only");
        auto out = ctx.output(0, DType::Float32, a->dims);
        if (!out) return out.status();
        for (int64_t i = 0; i < a->numel(); ++i) (*out)->as<float>()[i] = f(a->as<float>()[i], b->as<float>()[i]);
        return Status::ok();
    });
}

// OpenMP's team size as the last Neg kernel was made: oneDNN's primitives, some made with
// their kernels, keep the size they see then.
int g_teamAtKernelCreation = 0;

KernelRegistry kernelsFor(Backend backend, const std::set<std::string>& ops) {
    KernelRegistry r;
    auto add = [&](const std::string& op, KernelFactory factory) {
        if (!ops.count(op)) return;
        KernelDef def;
        def.op = op;
        def.backend = backend;
        def.variant = backend == Backend::Cpu ? "host" : "pretend";
        def.factory = std::move(factory);
        r.add(std::move(def));
    };
    add("Add", elementwise(true, [](float x, float y) { return x + y; }));
    add("Neg", [negate = elementwise(false, [](float x, float) { return -x; })](const KernelInit& init) {
        g_teamAtKernelCreation = omp_get_max_threads();
        return negate(init);
    });
    return r;
}

class HostProvider : public ExecutionProvider {
public:
    Backend backend() const override { return Backend::Cpu; }
    const KernelRegistry& kernels() const override { return m_kernels; }

private:
    KernelRegistry m_kernels = kernelsFor(Backend::Cpu, {"Add", "Neg"});
};

// Device memory that is host memory, counting what crosses; no capture.
class PretendDevice : public Device {
public:
    std::string name() const override { return "pretend device"; }
    bool simulated() const override { return true; }
    DeviceMemoryInfo memory() const override { return {}; }
    Result<void*> allocate(size_t bytes) override {
        ++allocations;
        return std::malloc(bytes);
    }
    void release(void* ptr) override { std::free(ptr); }
    Result<void*> workspace(size_t) override { return Status(ErrorCode::Unsupported, "no workspace"); }
    Status copyToDevice(void* dst, const void* src, size_t bytes) override {
        ++uploads;
        std::memcpy(dst, src, bytes);
        return Status::ok();
    }
    Status copyToHost(void* dst, const void* src, size_t bytes) override {
        ++downloads;
        std::memcpy(dst, src, bytes);
        return Status::ok();
    }
    Status copyOnDevice(void* dst, const void* src, size_t bytes) override {
        std::memcpy(dst, src, bytes);
        return Status::ok();
    }
    Status fill(void* dst, int byte, size_t bytes) override {
        std::memset(dst, byte, bytes);
        return Status::ok();
    }
    Status synchronize() override { return Status::ok(); }
    Status beginCapture() override { return Status(ErrorCode::Unsupported, "no capture"); }
    Result<int> endCapture() override { return Status(ErrorCode::Unsupported, "no capture"); }
    Status replay(int) override { return Status(ErrorCode::Unsupported, "no capture"); }
    void dropGraph(int) override {}
    int allocations = 0, uploads = 0, downloads = 0;
};

class PretendDeviceProvider : public ExecutionProvider {
public:
    PretendDeviceProvider() : m_device(std::make_shared<PretendDevice>()) {
        // It has kernels for Add and Neg but claims only Neg.
        m_table = *CapabilityTable::parse("Neg float32\n", "pretend capabilities");
    }
    Backend backend() const override { return Backend::Cuda; }
    const KernelRegistry& kernels() const override { return m_kernels; }
    const CapabilityTable* capabilities() const override { return &m_table; }
    std::shared_ptr<Device> device() const override { return m_device; }
    PretendDevice& pretend() const { return *m_device; }

private:
    std::shared_ptr<PretendDevice> m_device;
    KernelRegistry m_kernels = kernelsFor(Backend::Cuda, {"Add", "Neg"});
    CapabilityTable m_table;
};

// y = -(x + x), then z = y + y: Neg between two Adds.
Model addNegAdd() {
    GraphBuilder g;
    ValueId x = g.input("x", DType::Float32, Shape({Dim::known(4)}));
    ValueId sum = g.op("Add", {x, x}, "sum");
    ValueId neg = g.op("Neg", {sum}, "neg");
    g.output(g.op("Add", {neg, neg}, "z"));
    Model m = g.buildModel();
    fillUnknownTypes(*m.graph);
    return m;
}

RtTensor fourFloats() {
    RtTensor t = allocateTensor(DType::Float32, {4});
    for (int i = 0; i < 4; ++i) t.as<float>()[i] = float(i) - 1.5f;
    return t;
}

}  // namespace

class TestRuntimeAlone : public QObject {
    Q_OBJECT
private slots:
    void hostProviderRunsEveryNode() {
        ExecutorOptions options;
        options.host = std::make_shared<HostProvider>();
        auto exec = Executor::create(addNegAdd(), options);
        QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
        for (const PlanStep& step : (*exec)->plan().steps) {
            QVERIFY(!step.onDevice);
            QCOMPARE(QString::fromStdString(step.kernelId).endsWith(".host"), true);
        }
        auto out = (*exec)->run({fourFloats()});
        QVERIFY2(out, out ? "" : out.status().message().c_str());
        for (int i = 0; i < 4; ++i) QCOMPARE((*out)[0].as<float>()[i], -4.f * (float(i) - 1.5f));
        QCOMPARE((*exec)->lastTransfers().copies, 0);
    }

    void kernelsAreMadeWithThePoolsThreadCount() {
        for (int threads : {1, 2}) {
            omp_set_num_threads(3 - threads);
            ExecutorOptions options;
            options.host = std::make_shared<HostProvider>();
            options.threads = threads;
            auto exec = Executor::create(addNegAdd(), options);
            QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
            QCOMPARE(g_teamAtKernelCreation, threads);
        }
    }

    void deviceProviderTakesWhatItClaims() {
        auto device = std::make_shared<PretendDeviceProvider>();
        ExecutorOptions options;
        options.host = std::make_shared<HostProvider>();
        options.device = device;
        options.cudaGraphs = false;
        auto exec = Executor::create(addNegAdd(), options);
        QVERIFY2(exec, exec ? "" : exec.status().message().c_str());
        const auto& steps = (*exec)->plan().steps;
        QCOMPARE(steps.size(), size_t(3));
        // Add is not in the table, although the provider has a kernel for it.
        QVERIFY(!steps[0].onDevice);
        QVERIFY2(steps[0].fallbackReason.find("is not in the CUDA capability table") != std::string::npos,
                 steps[0].fallbackReason.c_str());
        QVERIFY(steps[1].onDevice);
        QVERIFY(steps[1].fallbackReason.empty());
        QCOMPARE(QString::fromStdString(steps[1].kernelId), QStringLiteral("Neg.float32.pretend"));
        QVERIFY(!steps[2].onDevice);
        QCOMPARE((*exec)->device(), device->device().get());

        auto out = (*exec)->run({fourFloats()});
        QVERIFY2(out, out ? "" : out.status().message().c_str());
        for (int i = 0; i < 4; ++i) QCOMPARE((*out)[0].as<float>()[i], -4.f * (float(i) - 1.5f));
        // The sum goes to the device for Neg and its result comes back for the last Add.
        const TransferStats& moved = (*exec)->lastTransfers();
        QCOMPARE(moved.copies, 2);
        QCOMPARE(moved.hostToDeviceBytes, int64_t(16));
        QCOMPARE(moved.deviceToHostBytes, int64_t(16));
        QVERIFY(device->pretend().uploads >= 1 && device->pretend().downloads >= 1);
    }

    void aDeviceWithoutMemoryIsRefused() {
        struct NoDevice : HostProvider {
            Backend backend() const override { return Backend::Cuda; }
        };
        ExecutorOptions options;
        options.host = std::make_shared<HostProvider>();
        options.device = std::make_shared<NoDevice>();
        auto exec = Executor::create(addNegAdd(), options);
        QVERIFY(!exec);
        QCOMPARE(QString::fromStdString(exec.status().message()),
                 QStringLiteral("the cuda execution provider has no device"));
    }

    void optionsWithoutAHostAreRefused() {
        auto exec = Executor::create(addNegAdd(), ExecutorOptions{});
        QVERIFY(!exec);
        QVERIFY(exec.status().message().find("host execution provider") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestRuntimeAlone)
#include "tst_runtime_alone.moc"
