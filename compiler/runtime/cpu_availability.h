#pragma once
// How many of the machine's cores other programs leave free, from the kernel's counters
// (Linux /proc/stat and /proc/self/stat): the busy time of every core minus this process's
// own, over the interval since the last look. An automatic ThreadPool looks once when it is
// made (oneDNN's primitives keep the team size they were created with) and then as each
// run starts. OpenMP regions (ours and oneDNN's) wait at
// every barrier for each thread of the team; a team larger than the free cores makes each
// region wait for a thread whose core another program holds (resnet50 on two busy cores:
// 85 ms at two threads against 37 ms at one, docs/benchmarks.md 2026-11-28).
#include <cstdint>

namespace fsc {

class CpuAvailability {
public:
    CpuAvailability();
    // Cores free of other programs' work since the previous call that measured (rounded, at
    // least 1, at most `cores()`); calls within `kMinWindowMs` of it answer as it did, as
    // the kernel's tick (10 ms) is too coarse for shorter windows. All cores where /proc is
    // missing or unreadable.
    int freeCores();
    int cores() const { return m_cores; }
    // Whether, at the last two looks, other programs' runnable threads (the kernel's
    // procs_running, less the thread looking) were fewer than the cores: a core then has no
    // one else waiting for it, so a second thread of ours gains there. Every core busy and a
    // core pinned busy can read the same busy time (our one thread holding the other core
    // whole), but only this tells them apart: with every core busy a second thread of ours
    // only takes turns with the spinners, and lost mnasnet1_0 the whole core the scheduler
    // sometimes gives a lone thread (15 against 8 ms).
    bool aCoreWaitsForNoOne() const { return m_othersRunnable < m_cores; }
    // Looks for `kFirstLookMs` (sleeping) and answers: for a pool's first run, whose team size
    // oneDNN's primitives keep from their creation.
    int freeCoresNow();
    static constexpr int64_t kMinWindowMs = 100;
    static constexpr int64_t kFirstLookMs = 60;

private:
    struct Sample {
        int64_t atMs = 0;
        uint64_t busyTicks = 0, totalTicks = 0, selfTicks = 0;
        int othersRunnable = 0;
        bool valid = false;
    };
    static Sample take();
    int m_cores = 1;
    Sample m_last;
    int m_answer;
    int m_othersRunnable = 0;
};

}  // namespace fsc
