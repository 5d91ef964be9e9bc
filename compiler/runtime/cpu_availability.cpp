#include "compiler/runtime/cpu_availability.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fsc {

CpuAvailability::CpuAvailability()
    : m_cores(int(std::max(1u, std::thread::hardware_concurrency()))), m_last(take()), m_answer(m_cores) {}

namespace {
int64_t steadyMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

CpuAvailability::Sample CpuAvailability::take() {
    Sample s;
    s.atMs = steadyMs();
    std::ifstream stat("/proc/stat");
    std::string cpu;
    uint64_t v[8] = {};
    if (!(stat >> cpu) || cpu != "cpu") return s;
    for (uint64_t& x : v)
        if (!(stat >> x)) return s;
    // user nice system idle iowait irq softirq steal
    s.totalTicks = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    s.busyTicks = s.totalTicks - v[3] - v[4];
    for (std::string line; std::getline(stat, line);)
        if (line.rfind("procs_running ", 0) == 0) {
            s.othersRunnable = std::max(0, std::atoi(line.c_str() + 14) - 1);
            break;
        }
    std::ifstream self("/proc/self/stat");
    std::string line;
    if (!std::getline(self, line)) return s;
    // Fields after the command name (which may hold spaces) in parentheses: utime and stime
    // are the 14th and 15th fields overall, the 12th and 13th after the closing parenthesis.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) return s;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 1; i <= 13 && rest >> field; ++i) {
        if (i == 12) utime = std::stoull(field);
        if (i == 13) stime = std::stoull(field);
    }
    s.selfTicks = utime + stime;
    s.valid = true;
    return s;
}

int CpuAvailability::freeCoresNow() {
    if (m_cores == 1) return 1;
    m_last = take();
    std::this_thread::sleep_for(std::chrono::milliseconds(kFirstLookMs));
    m_last.atMs -= kMinWindowMs;  // let this window count, short as it is
    return freeCores();
}

int CpuAvailability::freeCores() {
    // Inside the window the answer stands: reading /proc costs more than a small model's run
    // (the sample model: 0.095 ms a run with the reads, 0.074 without).
    if (m_last.valid && steadyMs() - m_last.atMs < kMinWindowMs) return m_answer;
    Sample now = take();
    if (!now.valid || !m_last.valid) {
        m_last = now;
        return m_answer = m_cores;
    }
    if (now.atMs - m_last.atMs < kMinWindowMs) return m_answer;
    const double total = double(now.totalTicks - m_last.totalTicks);
    if (total <= 0) return m_answer;
    const double busy = double(now.busyTicks - m_last.busyTicks);
    const double self = double(now.selfTicks - m_last.selfTicks);
    // Others' busy time as a share of every core's time, in cores.
    const double others = std::clamp((busy - self) / total, 0.0, 1.0) * m_cores;
    // The fewer of the two looks: one may have caught a helper of ours running.
    m_othersRunnable = std::min(now.othersRunnable, m_last.othersRunnable);
    m_last = now;
    m_answer = std::clamp(int(std::lround(m_cores - others)), 1, m_cores);
    return m_answer;
}

}  // namespace fsc
