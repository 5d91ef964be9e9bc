#include "profiler/run_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

namespace fsc {
namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS models (
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, node_count INTEGER);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, model_id INTEGER NOT NULL REFERENCES models(id),
  pipeline TEXT, backend TEXT, device TEXT, started_at TEXT,
  iterations INTEGER, warmup INTEGER, unprofiled_ms REAL, profiled_ms REAL,
  dropped_records INTEGER NOT NULL DEFAULT 0, inputs TEXT);
CREATE TABLE IF NOT EXISTS compile_passes (
  run_id INTEGER NOT NULL REFERENCES runs(id), position INTEGER NOT NULL, name TEXT,
  nodes_before INTEGER, nodes_after INTEGER, ms REAL, changes INTEGER, rejections INTEGER,
  PRIMARY KEY (run_id, position));
CREATE TABLE IF NOT EXISTS nodes (
  run_id INTEGER NOT NULL REFERENCES runs(id), node_id INTEGER NOT NULL, name TEXT,
  op_type TEXT, kernel_id TEXT, origins TEXT, flops REAL, bytes REAL,
  PRIMARY KEY (run_id, node_id));
CREATE TABLE IF NOT EXISTS activities (
  run_id INTEGER NOT NULL REFERENCES runs(id), kind TEXT, name TEXT, start_ns INTEGER,
  end_ns INTEGER, stream INTEGER, node_id INTEGER, iteration INTEGER, depth INTEGER,
  bytes INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER,
  block_y INTEGER, block_z INTEGER, registers INTEGER, shared_bytes INTEGER);
CREATE INDEX IF NOT EXISTS activities_by_run ON activities (run_id, start_ns);
CREATE TABLE IF NOT EXISTS node_stats (
  run_id INTEGER NOT NULL REFERENCES runs(id), node_id INTEGER NOT NULL, total_ns INTEGER,
  self_ns INTEGER, launches INTEGER, share REAL, flops_per_s REAL, bytes_per_s REAL,
  flops_per_byte REAL, PRIMARY KEY (run_id, node_id));
CREATE TABLE IF NOT EXISTS memory_events (
  run_id INTEGER NOT NULL REFERENCES runs(id), source TEXT NOT NULL, time_ns INTEGER,
  bytes INTEGER, label TEXT);
CREATE TABLE IF NOT EXISTS run_device (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id), peak_flops_per_s REAL, peak_bytes_per_s REAL,
  peaks_source TEXT);
CREATE TABLE IF NOT EXISTS planned_buffers (
  run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT, offset_bytes INTEGER, bytes INTEGER,
  first_step INTEGER, last_step INTEGER);
)sql";

// A prepared statement that finalizes itself.
class Statement {
public:
    Statement(sqlite3* db, const char* sql) { m_ok = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr) == SQLITE_OK; }
    ~Statement() { sqlite3_finalize(m_stmt); }
    bool ok() const { return m_ok; }
    Statement& bind(int i, int64_t v) { sqlite3_bind_int64(m_stmt, i, v); return *this; }
    Statement& bind(int i, double v) { sqlite3_bind_double(m_stmt, i, v); return *this; }
    Statement& bind(int i, const std::string& v) {
        sqlite3_bind_text(m_stmt, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    int step() { return sqlite3_step(m_stmt); }
    // For INSERTs run many times.
    bool run() {
        const int rc = sqlite3_step(m_stmt);
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
        return rc == SQLITE_DONE;
    }
    int64_t integer(int col) const { return sqlite3_column_int64(m_stmt, col); }
    double real(int col) const { return sqlite3_column_double(m_stmt, col); }
    std::string text(int col) const {
        const unsigned char* t = sqlite3_column_text(m_stmt, col);
        return t ? reinterpret_cast<const char*>(t) : "";
    }

private:
    sqlite3_stmt* m_stmt = nullptr;
    bool m_ok = false;
};

}  // namespace

std::string sqliteLibraryVersion() { return sqlite3_libversion(); }

Result<std::unique_ptr<RunStore>> RunStore::open(const std::string& path) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return Status(ErrorCode::Io, path + ": cannot open the run store (" + why + ")");
    }
    std::unique_ptr<RunStore> store(new RunStore(db, path));
    sqlite3_busy_timeout(db, 5000);
    if (Status s = store->exec(kSchema); !s) return Status(ErrorCode::InvalidModel, path + ": not a Fusescope run store (" + s.message() + ")");
    Statement version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (!version.ok()) return store->error("reading the schema version");
    if (version.step() == SQLITE_ROW) {
        const int found = std::atoi(version.text(0).c_str());
        if (found > kSchemaVersion)
            return Status(ErrorCode::Unsupported, path + ": run store schema " + std::to_string(found) +
                                                      " is newer than this Fusescope reads (" + std::to_string(kSchemaVersion) + ")");
    } else if (Status s = store->exec("INSERT INTO meta VALUES ('schema_version', '" + std::to_string(kSchemaVersion) + "')"); !s) {
        return s;
    }
    return store;
}

Result<std::unique_ptr<RunStore>> RunStore::openExisting(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return Status(ErrorCode::Io, path + ": no such run store (profile --store writes one)");
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return Status(ErrorCode::Io, path + ": cannot open the run store (" + why + ")");
    }
    std::unique_ptr<RunStore> store(new RunStore(db, path));
    sqlite3_busy_timeout(db, 5000);
    Statement version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (!version.ok() || version.step() != SQLITE_ROW)
        return Status(ErrorCode::InvalidModel, path + ": not a Fusescope run store");
    const int found = std::atoi(version.text(0).c_str());
    if (found > kSchemaVersion)
        return Status(ErrorCode::Unsupported, path + ": run store schema " + std::to_string(found) +
                                                  " is newer than this Fusescope reads (" + std::to_string(kSchemaVersion) + ")");
    return store;
}

RunStore::~RunStore() {
    sqlite3_close(m_db);
}

Status RunStore::exec(const std::string& sql) const {
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return Status::ok();
    std::string why = message ? message : "unknown error";
    sqlite3_free(message);
    return Status(ErrorCode::Io, m_path + ": " + why);
}

Status RunStore::error(const std::string& what) const {
    return Status(ErrorCode::Io, m_path + ": " + what + ": " + sqlite3_errmsg(m_db));
}

Result<int64_t> RunStore::addRun(const Trace& trace) {
    if (Status s = exec("BEGIN IMMEDIATE"); !s) return s;
    auto fail = [&](const std::string& what) -> Result<int64_t> {
        Status s = error(what);
        exec("ROLLBACK");
        return s;
    };
    {
        Statement model(m_db, "INSERT INTO models (path, node_count) VALUES (?, ?) "
                              "ON CONFLICT(path) DO UPDATE SET node_count = excluded.node_count");
        if (!model.ok() || !model.bind(1, trace.model).bind(2, int64_t(trace.nodes.size())).run()) return fail("storing the model");
    }
    int64_t modelId = 0;
    {
        Statement find(m_db, "SELECT id FROM models WHERE path = ?");
        find.bind(1, trace.model);
        if (!find.ok() || find.step() != SQLITE_ROW) return fail("finding the model");
        modelId = find.integer(0);
    }
    {
        Statement run(m_db, "INSERT INTO runs (model_id, pipeline, backend, device, started_at, iterations, warmup, "
                            "unprofiled_ms, profiled_ms, dropped_records, inputs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        run.bind(1, modelId).bind(2, trace.pipeline).bind(3, trace.backend).bind(4, trace.device).bind(5, trace.startedAt);
        run.bind(6, int64_t(trace.iterations)).bind(7, int64_t(trace.warmup)).bind(8, trace.unprofiledMs);
        run.bind(9, trace.profiledMs).bind(10, trace.droppedRecords).bind(11, nlohmann::json(trace.inputs).dump());
        if (!run.ok() || !run.run()) return fail("storing the run");
    }
    const int64_t runId = sqlite3_last_insert_rowid(m_db);
    {
        Statement pass(m_db, "INSERT INTO compile_passes VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < trace.passes.size(); ++i) {
            const PassSummary& p = trace.passes[i];
            pass.bind(1, runId).bind(2, int64_t(i)).bind(3, p.name).bind(4, p.nodesBefore).bind(5, p.nodesAfter);
            pass.bind(6, p.milliseconds).bind(7, p.changes).bind(8, p.rejections);
            if (!pass.run()) return fail("storing the compile passes");
        }
    }
    {
        Statement node(m_db, "INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (const TraceNode& n : trace.nodes) {
            node.bind(1, runId).bind(2, n.id).bind(3, n.name).bind(4, n.opType).bind(5, n.kernelId);
            node.bind(6, nlohmann::json(n.origins).dump()).bind(7, n.flops).bind(8, n.bytes);
            if (!node.run()) return fail("storing node '" + n.name + "'");
        }
    }
    {
        Statement act(m_db, "INSERT INTO activities VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const Activity& a : trace.activities) {
            act.bind(1, runId).bind(2, std::string(activityKindName(a.kind))).bind(3, a.name).bind(4, a.startNs);
            act.bind(5, a.endNs).bind(6, int64_t(a.stream)).bind(7, a.node).bind(8, int64_t(a.iteration));
            act.bind(9, int64_t(a.depth)).bind(10, a.bytes);
            for (int i = 0; i < 3; ++i) act.bind(11 + i, int64_t(a.grid[i])).bind(14 + i, int64_t(a.block[i]));
            act.bind(17, int64_t(a.registers)).bind(18, int64_t(a.sharedBytes));
            if (!act.run()) return fail("storing the activities");
        }
    }
    {
        Statement stat(m_db, "INSERT INTO node_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const NodeStat& s : computeNodeStats(trace)) {
            stat.bind(1, runId).bind(2, s.node).bind(3, s.totalNs).bind(4, s.selfNs).bind(5, s.launches);
            stat.bind(6, s.share).bind(7, s.flopsPerSecond).bind(8, s.bytesPerSecond).bind(9, s.arithmeticIntensity);
            if (!stat.run()) return fail("storing the node stats");
        }
    }
    {
        Statement mem(m_db, "INSERT INTO memory_events VALUES (?, ?, ?, ?, ?)");
        for (const auto& [samples, source] : {std::pair{&trace.plannedMemory, "planned"}, std::pair{&trace.measuredMemory, "measured"}})
            for (const MemorySample& m : *samples) {
                mem.bind(1, runId).bind(2, std::string(source)).bind(3, m.timeNs).bind(4, m.bytes).bind(5, m.label);
                if (!mem.run()) return fail("storing the memory timeline");
            }
    }
    {
        Statement buffer(m_db, "INSERT INTO planned_buffers VALUES (?, ?, ?, ?, ?, ?)");
        for (const PlannedBuffer& b : trace.plannedBuffers) {
            buffer.bind(1, runId).bind(2, b.name).bind(3, b.offset).bind(4, b.bytes).bind(5, b.firstStep).bind(6, b.lastStep);
            if (!buffer.run()) return fail("storing the memory plan");
        }
    }
    {
        Statement device(m_db, "INSERT INTO run_device VALUES (?, ?, ?, ?)");
        device.bind(1, runId).bind(2, trace.peakFlopsPerSecond).bind(3, trace.peakBytesPerSecond).bind(4, trace.peaksSource);
        if (!device.run()) return fail("storing the device's peaks");
    }
    if (Status s = exec("COMMIT"); !s) return fail("committing the run");
    return runId;
}

Result<std::vector<RunSummary>> RunStore::runs() const {
    Statement q(m_db, "SELECT runs.id, models.path, pipeline, backend, device, started_at, iterations, profiled_ms "
                      "FROM runs JOIN models ON models.id = runs.model_id ORDER BY runs.id");
    if (!q.ok()) return error("listing runs");
    std::vector<RunSummary> out;
    while (q.step() == SQLITE_ROW)
        out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5), int(q.integer(6)), q.real(7)});
    return out;
}

Result<Trace> RunStore::loadTrace(int64_t runId) const {
    Trace t;
    {
        Statement q(m_db, "SELECT models.path, pipeline, backend, device, started_at, iterations, warmup, unprofiled_ms, "
                          "profiled_ms, dropped_records, inputs FROM runs JOIN models ON models.id = runs.model_id WHERE runs.id = ?");
        q.bind(1, runId);
        if (!q.ok()) return error("reading run " + std::to_string(runId));
        if (q.step() != SQLITE_ROW) return Status(ErrorCode::NotFound, m_path + ": no run " + std::to_string(runId));
        t.model = q.text(0), t.pipeline = q.text(1), t.backend = q.text(2), t.device = q.text(3), t.startedAt = q.text(4);
        t.iterations = int(q.integer(5)), t.warmup = int(q.integer(6)), t.unprofiledMs = q.real(7), t.profiledMs = q.real(8);
        t.droppedRecords = q.integer(9);
        const auto inputs = nlohmann::json::parse(q.text(10), nullptr, false);
        if (inputs.is_array())
            for (const auto& i : inputs)
                if (i.is_string()) t.inputs.push_back(i.get<std::string>());
    }
    {
        Statement q(m_db, "SELECT name, nodes_before, nodes_after, ms, changes, rejections FROM compile_passes "
                          "WHERE run_id = ? ORDER BY position");
        q.bind(1, runId);
        while (q.step() == SQLITE_ROW) t.passes.push_back({q.text(0), q.integer(1), q.integer(2), q.real(3), q.integer(4), q.integer(5)});
    }
    {
        Statement q(m_db, "SELECT node_id, name, op_type, kernel_id, origins, flops, bytes FROM nodes WHERE run_id = ? ORDER BY node_id");
        q.bind(1, runId);
        while (q.step() == SQLITE_ROW) {
            TraceNode n{q.integer(0), q.text(1), q.text(2), q.text(3), {}, q.real(5), q.real(6)};
            const auto origins = nlohmann::json::parse(q.text(4), nullptr, false);
            if (origins.is_array())
                for (const auto& o : origins)
                    if (o.is_string()) n.origins.push_back(o.get<std::string>());
            t.nodes.push_back(std::move(n));
        }
    }
    {
        Statement q(m_db, "SELECT kind, name, start_ns, end_ns, stream, node_id, iteration, depth, bytes, grid_x, grid_y, "
                          "grid_z, block_x, block_y, block_z, registers, shared_bytes FROM activities WHERE run_id = ? "
                          "ORDER BY start_ns");
        q.bind(1, runId);
        while (q.step() == SQLITE_ROW) {
            Activity a;
            const std::string kind = q.text(0);
            for (ActivityKind k : {ActivityKind::Kernel, ActivityKind::Memcpy, ActivityKind::Memset, ActivityKind::Range})
                if (kind == activityKindName(k)) a.kind = k;
            a.name = q.text(1), a.startNs = q.integer(2), a.endNs = q.integer(3), a.stream = int(q.integer(4));
            a.node = q.integer(5), a.iteration = int(q.integer(6)), a.depth = int(q.integer(7)), a.bytes = q.integer(8);
            for (int i = 0; i < 3; ++i) a.grid[i] = int(q.integer(9 + i)), a.block[i] = int(q.integer(12 + i));
            a.registers = int(q.integer(15)), a.sharedBytes = int(q.integer(16));
            t.activities.push_back(std::move(a));
        }
    }
    {
        Statement q(m_db, "SELECT source, time_ns, bytes, label FROM memory_events WHERE run_id = ? ORDER BY rowid");
        q.bind(1, runId);
        while (q.step() == SQLITE_ROW)
            (q.text(0) == "planned" ? t.plannedMemory : t.measuredMemory).push_back({q.integer(1), q.integer(2), q.text(3)});
    }
    {
        Statement q(m_db, "SELECT name, offset_bytes, bytes, first_step, last_step FROM planned_buffers WHERE run_id = ? ORDER BY rowid");
        q.bind(1, runId);
        while (q.step() == SQLITE_ROW) t.plannedBuffers.push_back({q.text(0), q.integer(1), q.integer(2), q.integer(3), q.integer(4)});
    }
    {
        Statement q(m_db, "SELECT peak_flops_per_s, peak_bytes_per_s, peaks_source FROM run_device WHERE run_id = ?");
        q.bind(1, runId);
        if (q.step() == SQLITE_ROW) t.peakFlopsPerSecond = q.real(0), t.peakBytesPerSecond = q.real(1), t.peaksSource = q.text(2);
    }
    return t;
}

Result<std::vector<NodeDelta>> RunStore::compareRuns(int64_t a, int64_t b) const {
    // Per-node figures from the stored activities, by the same computation as every report.
    std::map<std::string, NodeDelta> byName;
    for (const auto& [run, side] : {std::pair{a, 0}, std::pair{b, 1}}) {
        auto trace = loadTrace(run);
        if (!trace) return trace.status();
        for (const NodeStat& s : computeNodeStats(*trace)) {
            const TraceNode* n = trace->findNode(s.node);
            if (!n) continue;
            NodeDelta& d = byName[n->name];
            d.name = n->name;
            d.opType = n->opType;
            (side == 0 ? d.aMs : d.bMs) = double(s.medianNs) / 1e6;
        }
    }
    std::vector<NodeDelta> out;
    for (auto& [name, d] : byName) out.push_back(d);
    std::stable_sort(out.begin(), out.end(), [](const NodeDelta& x, const NodeDelta& y) {
        return std::abs(x.deltaMs()) > std::abs(y.deltaMs());
    });
    return out;
}

}  // namespace fsc
