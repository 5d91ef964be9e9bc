#pragma once
// The run store: profiled runs in one SQLite file (.fsdb) that outlives the process, opens
// anywhere (the GUI reads files made by the CLI on a GPU server) and can be queried by
// hand. Schema in docs/run_store.md; a newer schema version than this build knows is
// refused rather than misread.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "profiler/trace.h"

struct sqlite3;

namespace fsc {

struct RunSummary {
    int64_t id = 0;
    std::string model;
    std::string pipeline;
    std::string backend;
    std::string device;
    std::string startedAt;
    int iterations = 0;
    double medianMs = -1;  // per iteration, profiled
};

// One node's time in two runs, matched by node name (plan ids differ between pipelines).
struct NodeDelta {
    std::string name;
    std::string opType;
    double aMs = -1, bMs = -1;  // per iteration; -1 where the node is absent from a run
    double deltaMs() const { return (bMs < 0 ? 0 : bMs) - (aMs < 0 ? 0 : aMs); }
};

// The SQLite library the run store is written with, e.g. "3.40.1".
std::string sqliteLibraryVersion();

class RunStore {
public:
    static constexpr int kSchemaVersion = 1;

    // Creates the file (and the schema) when missing.
    static Result<std::unique_ptr<RunStore>> open(const std::string& path);
    // For reading only: a missing file is an error, and nothing is created or written.
    static Result<std::unique_ptr<RunStore>> openExisting(const std::string& path);
    ~RunStore();
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    // Stores the whole trace (nodes, activities, stats, memory, passes) in one transaction.
    Result<int64_t> addRun(const Trace& trace);
    Result<std::vector<RunSummary>> runs() const;
    Result<Trace> loadTrace(int64_t runId) const;
    // Per node, b's time less a's, largest change first.
    Result<std::vector<NodeDelta>> compareRuns(int64_t a, int64_t b) const;
    const std::string& path() const { return m_path; }

private:
    RunStore(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    Status exec(const std::string& sql) const;
    Status error(const std::string& what) const;
    sqlite3* m_db;
    std::string m_path;
};

}  // namespace fsc
