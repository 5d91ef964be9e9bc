#pragma once
// Where device activity comes from: CUPTI on a GPU machine (profiler/cupti/), recorded
// activity in tests. The profiler only talks to this interface, so correlation, buffering
// and statistics are tested without a GPU.
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/status.h"
#include "profiler/device_records.h"

namespace fsc {

class ActivitySource {
public:
    virtual ~ActivitySource() = default;
    // Starts recording kernels, copies, memsets, memory, NVTX ranges and correlations.
    virtual Status start() = 0;
    // Around each plan node's launches: the id its kernels will carry.
    virtual void pushExternalId(uint64_t id) = 0;
    virtual void popExternalId() = 0;
    // Whether work replayed from a CUDA Graph captured while recording reaches its plan node:
    // the source then adds a GraphNode record for each graph node made while an id was pushed
    // (and for each copy of it an instantiated graph makes).
    virtual bool attributesGraphReplays() const { return false; }
    // Waits for the device's records so far and hands them over, with how many were lost.
    virtual Status drain(std::vector<DeviceRecord>& out, int64_t& dropped) = 0;
    virtual void stop() = 0;
};

// The handover between the thread that decodes completed buffers (CUPTI's) and the one
// that drains them. Bounded: records beyond `capacity` are counted as dropped, not kept.
class RecordQueue {
public:
    explicit RecordQueue(size_t capacity = size_t(1) << 24) : m_capacity(capacity) {}
    void push(std::vector<DeviceRecord>&& batch);
    void addDropped(int64_t records);
    // Everything pushed so far, in push order; `dropped` grows by what was lost since.
    void take(std::vector<DeviceRecord>& out, int64_t& dropped);
    size_t size() const;

private:
    mutable std::mutex m_mutex;
    std::vector<DeviceRecord> m_records;
    int64_t m_dropped = 0;
    size_t m_capacity;
};

// Replays recorded activity: records given up front come back from drain() as they are;
// launch() behaves as CUPTI does for a launch made now: the record gets a fresh correlation
// id, and, when an external id is pushed, a Correlation record ties the two.
class RecordedActivitySource : public ActivitySource {
public:
    explicit RecordedActivitySource(std::vector<DeviceRecord> records = {}, int64_t dropped = 0)
        : m_records(std::move(records)), m_dropped(dropped) {}
    void launch(DeviceRecord record);
    // A graph node made now, as CUPTI reports one: a GraphNode record with the id on top.
    void graphNodeCreated(uint64_t graphNodeId);
    Status start() override;
    void pushExternalId(uint64_t id) override { m_stack.push_back(id); }
    void popExternalId() override {
        if (!m_stack.empty()) m_stack.pop_back();
    }
    // The id on top now (0: none): what a launch made now would be correlated with.
    uint64_t currentExternalId() const { return m_stack.empty() ? 0 : m_stack.back(); }
    bool attributesGraphReplays() const override { return true; }
    Status drain(std::vector<DeviceRecord>& out, int64_t& dropped) override;
    void stop() override { m_started = false; }

private:
    std::vector<DeviceRecord> m_records;
    int64_t m_dropped = 0;
    std::vector<uint64_t> m_stack;
    bool m_started = false;
    uint32_t m_nextCorrelation = 1u << 20;
};

}  // namespace fsc
