#include "profiler/cupti/cupti_source.h"

#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace fsc {
namespace {

// The CUPTI functions used, resolved from the library at run time.
struct Api {
    CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*registerCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
    CUptiResult (*flushAll)(uint32_t) = nullptr;
    CUptiResult (*nextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
    CUptiResult (*droppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
    CUptiResult (*pushExternal)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
    CUptiResult (*popExternal)(CUpti_ExternalCorrelationKind, uint64_t*) = nullptr;
    CUptiResult (*resultString)(CUptiResult, const char**) = nullptr;
    CUptiResult (*version)(uint32_t*) = nullptr;
    CUptiResult (*registerTimestamp)(CUpti_TimestampCallbackFunc) = nullptr;  // optional
    CUptiResult (*enableHardwareTrace)(uint8_t) = nullptr;                      // optional (CUDA 12.8+)
    // Optional: graph nodes' owners, so replayed CUDA Graphs are profiled (else node by node).
    CUptiResult (*subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) = nullptr;
    CUptiResult (*enableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) = nullptr;
    CUptiResult (*graphNodeId)(CUgraphNode, uint64_t*) = nullptr;
    std::string whyMissing;
};

const Api& api() {
    static const Api loaded = [] {
        Api a;
        std::vector<std::string> names;
        if (const char* path = std::getenv("FUSESCOPE_CUPTI")) names.push_back(path);
        for (const char* n : {"libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                              "libcupti.so"})
            names.push_back(n);
        void* lib = nullptr;
        std::string lastError;
        for (const std::string& name : names) {
            if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
            if (const char* e = dlerror()) lastError = e;
        }
        if (!lib) {
            a.whyMissing = "CUPTI (libcupti.so.13) could not be loaded (" + lastError +
                           "): install the CUDA toolkit, add its lib64 (or the nvidia/cuda_cupti/lib folder of a "
                           "PyTorch install) to LD_LIBRARY_PATH, or set FUSESCOPE_CUPTI";
            return a;
        }
        auto load = [&](auto& fn, const char* symbol) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
            return fn != nullptr;
        };
        const bool ok = load(a.enable, "cuptiActivityEnable") && load(a.disable, "cuptiActivityDisable") &&
                        load(a.registerCallbacks, "cuptiActivityRegisterCallbacks") && load(a.flushAll, "cuptiActivityFlushAll") &&
                        load(a.nextRecord, "cuptiActivityGetNextRecord") && load(a.droppedRecords, "cuptiActivityGetNumDroppedRecords") &&
                        load(a.pushExternal, "cuptiActivityPushExternalCorrelationId") &&
                        load(a.popExternal, "cuptiActivityPopExternalCorrelationId") && load(a.resultString, "cuptiGetResultString") &&
                        load(a.version, "cuptiGetVersion");
        load(a.registerTimestamp, "cuptiActivityRegisterTimestampCallback");
        load(a.enableHardwareTrace, "cuptiActivityEnableHWTrace");
        if (!(load(a.subscribe, "cuptiSubscribe") && load(a.unsubscribe, "cuptiUnsubscribe") &&
              load(a.enableCallback, "cuptiEnableCallback") && load(a.graphNodeId, "cuptiGetGraphNodeId")))
            a.subscribe = nullptr;
        if (!ok) {
            a.enable = nullptr;
            a.whyMissing = "the CUPTI library found lacks the activity functions Fusescope needs";
            return a;
        }
        // Records are read with this header's layouts (CUDA 13); later versions only append.
        uint32_t version = 0;
        if (a.version(&version) != CUPTI_SUCCESS || version < CUPTI_API_VERSION) {
            a.enable = nullptr;
            a.whyMissing = "CUPTI API version " + std::to_string(version) + " is older than the " + std::to_string(CUPTI_API_VERSION) +
                           " Fusescope was built with: use the CUDA 13 toolkit's libcupti (FUSESCOPE_CUPTI)";
        }
        return a;
    }();
    return loaded;
}

std::string cuptiError(CUptiResult r, const char* what) {
    const char* text = nullptr;
    if (api().resultString) api().resultString(r, &text);
    return std::string("CUPTI: ") + what + " failed: " + (text ? text : "error " + std::to_string(int(r)));
}

// The host's steady clock, so device records and the host's own timings (CPU fallback
// steps, iteration ranges) share one time base; CUPTI maps GPU timestamps onto it.
uint64_t CUPTIAPI steadyTimestamp() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

constexpr size_t kBufferBytes = size_t(8) << 20;
std::atomic<RecordQueue*> g_queue{nullptr};  // the recording source's; CUPTI's callbacks have no user data

DeviceRecord decode(const CUpti_Activity* record) {
    DeviceRecord out;
    switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            out.kind = DeviceRecordKind::Kernel;
            out.name = k->name ? k->name : "kernel";
            out.startNs = k->start, out.endNs = k->end;
            out.stream = k->streamId;
            out.correlationId = k->correlationId;
            out.graphNodeId = k->graphNodeId;
            out.grid[0] = k->gridX, out.grid[1] = k->gridY, out.grid[2] = k->gridZ;
            out.block[0] = k->blockX, out.block[1] = k->blockY, out.block[2] = k->blockZ;
            out.registers = k->registersPerThread;
            out.sharedBytes = k->staticSharedMemory + k->dynamicSharedMemory;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
            out.kind = DeviceRecordKind::Memcpy;
            static const char* kinds[] = {"", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
            out.name = c->copyKind < std::size(kinds) ? kinds[c->copyKind] : "";
            out.startNs = c->start, out.endNs = c->end;
            out.stream = c->streamId;
            out.correlationId = c->correlationId;
            out.bytes = c->bytes;
            out.graphNodeId = c->graphNodeId;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
            out.kind = DeviceRecordKind::Memset;
            out.startNs = m->start, out.endNs = m->end;
            out.stream = m->streamId;
            out.correlationId = m->correlationId;
            out.bytes = m->bytes;
            out.graphNodeId = m->graphNodeId;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY2: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(record);
            out.kind = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? DeviceRecordKind::Release
                                                                                               : DeviceRecordKind::Allocation;
            out.startNs = out.endNs = m->timestamp;
            out.stream = m->streamId;
            out.correlationId = m->correlationId;
            out.bytes = m->bytes;
            out.address = m->address;
            out.name = m->name ? m->name : "";
            break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
            out.kind = DeviceRecordKind::Correlation;
            out.correlationId = e->correlationId;
            out.externalId = e->externalId;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MARKER: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
            out.kind = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? DeviceRecordKind::RangeEnd : DeviceRecordKind::RangeStart;
            out.startNs = out.endNs = m->timestamp;
            out.rangeId = m->id;
            out.name = m->name ? m->name : "";
            break;
        }
        default: out.kind = DeviceRecordKind::Correlation, out.correlationId = 0, out.externalId = 0; break;  // ignored kinds
    }
    return out;
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext context, uint32_t streamId, uint8_t* buffer, size_t, size_t validSize) {
    std::vector<DeviceRecord> batch;
    CUpti_Activity* record = nullptr;
    while (api().nextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
        DeviceRecord decoded = decode(record);
        if (decoded.kind == DeviceRecordKind::Correlation && decoded.correlationId == 0) continue;
        batch.push_back(std::move(decoded));
    }
    size_t dropped = 0;
    api().droppedRecords(context, streamId, &dropped);
    if (RecordQueue* queue = g_queue.load()) {
        queue->push(std::move(batch));
        if (dropped) queue->addDropped(int64_t(dropped));
    }
    std::free(buffer);
}

// CUPTI writes an external correlation record only in front of an API record, so the
// runtime and driver API kinds must be on for kernels to reach their plan node (their own
// records are dropped in decode). cuBLAS, cuDNN and NVRTC's kernels launch through the driver.
const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                     CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_MARKER,
                                     CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

class CuptiActivitySource : public ActivitySource {
public:
    ~CuptiActivitySource() override { stop(); }

    Status start() override {
        if (!api().enable) return Status(ErrorCode::Unsupported, api().whyMissing);
        RecordQueue* expected = nullptr;
        if (!g_queue.compare_exchange_strong(expected, &m_queue))
            return Status(ErrorCode::InvalidArgument, "CUPTI is already recording for another profile in this process");
        if (CUptiResult r = api().registerCallbacks(bufferRequested, bufferCompleted); r != CUPTI_SUCCESS) return fail(r, "registering buffers");
        // Before any kind is enabled, as CUPTI asks; an older CUPTI keeps its own clock.
        if (api().registerTimestamp) api().registerTimestamp(steadyTimestamp);
        // FUSESCOPE_CUPTI_HW_TRACE=1: kernel timestamps from the GPU's hardware event system
        // instead of instrumented launches, which cost 3-10 us a kernel in replayed graphs.
        // CUPTI offers it on Blackwell only, and it has not run under Fusescope yet, so it
        // is asked for; where the driver refuses, the usual tracing runs.
        if (api().enableHardwareTrace && std::getenv("FUSESCOPE_CUPTI_HW_TRACE"))
            m_hardwareTrace = api().enableHardwareTrace(1) == CUPTI_SUCCESS;
        for (CUpti_ActivityKind kind : kKinds)
            if (CUptiResult r = api().enable(kind); r != CUPTI_SUCCESS) return fail(r, "enabling activity records");
        m_started = true;
        subscribeToGraphNodes();
        return Status::ok();
    }
    void pushExternalId(uint64_t id) override {
        if (!m_started) return;
        api().pushExternal(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
        std::lock_guard lock(m_graphMutex);
        m_pushed.push_back(id);
    }
    void popExternalId() override {
        uint64_t last = 0;
        if (!m_started) return;
        api().popExternal(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
        std::lock_guard lock(m_graphMutex);
        if (!m_pushed.empty()) m_pushed.pop_back();
    }
    bool attributesGraphReplays() const override { return m_subscriber != nullptr; }
    Status drain(std::vector<DeviceRecord>& out, int64_t& dropped) override {
        if (!m_started) return Status(ErrorCode::InvalidArgument, "CUPTI is not recording");
        // Forced: hands over buffers still being filled too (the device is synchronised first by the caller).
        if (CUptiResult r = api().flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
            return Status(ErrorCode::Internal, cuptiError(r, "flushing activity buffers"));
        m_queue.take(out, dropped);
        return Status::ok();
    }
    void stop() override {
        if (!m_started) return;
        if (m_subscriber) api().unsubscribe(m_subscriber);
        m_subscriber = nullptr;
        api().flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        for (CUpti_ActivityKind kind : kKinds) api().disable(kind);
        if (m_hardwareTrace) api().enableHardwareTrace(0);
        m_hardwareTrace = false;
        m_started = false;
        RecordQueue* mine = &m_queue;
        g_queue.compare_exchange_strong(mine, nullptr);
    }

private:
    // Graph nodes made under capture, and their copies in an instantiated graph (whose ids
    // replayed kernels carry), belong to the plan node whose id was pushed at the time. Only
    // one subscriber per process is allowed (Nsight Systems may hold it): without it,
    // profiled runs go node by node.
    void subscribeToGraphNodes() {
        if (!api().subscribe) return;
        CUpti_SubscriberHandle handle = nullptr;
        if (api().subscribe(&handle, onResource, this) != CUPTI_SUCCESS) return;
        auto enable = [&](CUpti_CallbackId id) {
            return api().enableCallback(1, handle, CUPTI_CB_DOMAIN_RESOURCE, id) == CUPTI_SUCCESS;
        };
        if (!enable(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) || !enable(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)) {
            api().unsubscribe(handle);
            return;
        }
        m_subscriber = handle;
    }
    static void CUPTIAPI onResource(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
        if (domain != CUPTI_CB_DOMAIN_RESOURCE || !data) return;
        const auto* resource = static_cast<const CUpti_ResourceData*>(data);
        const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
        if (!graph) return;
        auto* source = static_cast<CuptiActivitySource*>(self);
        if (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) source->graphNodeMade(graph->node, nullptr);
        else if (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) source->graphNodeMade(graph->node, graph->originalNode);
    }
    void graphNodeMade(CUgraphNode node, CUgraphNode original) {
        uint64_t nodeId = 0, originalId = 0;
        if (api().graphNodeId(node, &nodeId) != CUPTI_SUCCESS) return;
        if (original && api().graphNodeId(original, &originalId) != CUPTI_SUCCESS) return;
        DeviceRecord record;
        {
            std::lock_guard lock(m_graphMutex);
            uint64_t owner = 0;
            if (original) {
                auto found = m_graphOwners.find(originalId);
                if (found != m_graphOwners.end()) owner = found->second;
            } else if (!m_pushed.empty()) {
                owner = m_pushed.back();
            }
            if (!owner) return;
            m_graphOwners[nodeId] = owner;
            record.kind = DeviceRecordKind::GraphNode;
            record.graphNodeId = nodeId;
            record.externalId = owner;
        }
        m_queue.push({record});
    }

    Status fail(CUptiResult r, const char* what) {
        for (CUpti_ActivityKind kind : kKinds) api().disable(kind);
        RecordQueue* mine = &m_queue;
        g_queue.compare_exchange_strong(mine, nullptr);
        std::string message = cuptiError(r, what);
        // CUPTI's codes rarely say the usual causes; name them.
        if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) dlclose(driver);
        else message += " (no CUDA driver, libcuda.so.1, on this machine)";
        if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
            message += " (profiling is restricted to administrators: run as root or set NVreg_RestrictProfilingToAdminUsers=0)";
        return Status(ErrorCode::Unsupported, message);
    }
    RecordQueue m_queue;
    bool m_started = false;
    bool m_hardwareTrace = false;  // FUSESCOPE_CUPTI_HW_TRACE took effect
    CUpti_SubscriberHandle m_subscriber = nullptr;
    std::mutex m_graphMutex;  // CUPTI calls onResource on the thread that made the node
    std::vector<uint64_t> m_pushed;
    std::unordered_map<uint64_t, uint64_t> m_graphOwners;  // graph node id -> external id
};

}  // namespace

std::unique_ptr<ActivitySource> makeCuptiActivitySource() {
    return std::make_unique<CuptiActivitySource>();
}

}  // namespace fsc
