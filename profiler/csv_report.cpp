#include "profiler/csv_report.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fsc {
namespace {

std::string field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string joined(const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& s : list) out += (out.empty() ? "" : ";") + s;
    return out;
}

Status writeFile(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    if (!out || !(out << text)) return Status(ErrorCode::Io, path.string() + ": cannot write");
    return Status::ok();
}

}  // namespace

std::string kernelCsv(const Trace& trace) {
    std::ostringstream s;
    s << "kind,name,start_us,duration_us,stream,iteration,depth,node,node_name,op,bytes\n";
    for (const Activity& a : trace.activities) {
        if (a.kind == ActivityKind::Range) continue;
        const TraceNode* n = a.node >= 0 ? trace.findNode(a.node) : nullptr;
        s << activityKindName(a.kind) << ',' << field(a.name) << ',' << double(a.startNs) / 1e3 << ','
          << double(a.durationNs()) / 1e3 << ',' << a.stream << ',' << a.iteration << ',' << a.depth << ',' << a.node
          << ',' << field(n ? n->name : "") << ',' << field(n ? n->opType : "") << ',' << a.bytes << '\n';
    }
    return s.str();
}

std::string nodeCsv(const Trace& trace) {
    std::ostringstream s;
    s << "node,name,op,kernel,median_us_per_iteration,p90_us_per_iteration,mean_us_per_iteration,"
         "mean_self_us_per_iteration,launches,share,flops,bytes,"
         "gflops_per_s,gb_per_s,flops_per_byte,origins\n";
    const double iterations = std::max(1, trace.iterations);
    for (const NodeStat& st : computeNodeStats(trace)) {
        const TraceNode* n = trace.findNode(st.node);
        s << st.node << ',' << field(n ? n->name : "") << ',' << field(n ? n->opType : "") << ','
          << field(n ? n->kernelId : "") << ',' << double(st.medianNs) / 1e3 << ',' << double(st.p90Ns) / 1e3 << ','
          << double(st.totalNs) / 1e3 / iterations << ','
          << double(st.selfNs) / 1e3 / iterations << ',' << st.launches << ',' << st.share << ','
          << (n ? n->flops : 0) << ',' << (n ? n->bytes : 0) << ',' << st.flopsPerSecond / 1e9 << ','
          << st.bytesPerSecond / 1e9 << ',' << st.arithmeticIntensity << ',' << field(n ? joined(n->origins) : "") << '\n';
    }
    return s.str();
}

Status writeCsvReports(const Trace& trace, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status(ErrorCode::Io, dir + ": cannot create the folder (" + ec.message() + ")");
    if (Status st = writeFile(std::filesystem::path(dir) / "kernels.csv", kernelCsv(trace)); !st) return st;
    return writeFile(std::filesystem::path(dir) / "nodes.csv", nodeCsv(trace));
}

}  // namespace fsc
