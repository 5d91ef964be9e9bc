#pragma once
// Data-parallel kernel loops on OpenMP's thread team. oneDNN (the BLAS and convolution
// library) runs on the same team, so our loops and its calls never compete for cores
// with a second set of spinning threads. An automatic pool that finds a core taken by another
// program runs oneDNN on the free cores' team and its own loops on every core, through
// helper threads that join a loop only if they run in time (LoopHelpers): the thread that
// shares the taken core then adds what the scheduler gives it and holds nothing up.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "compiler/runtime/cpu_availability.h"
#include "compiler/runtime/loop_helpers.h"

namespace fsc {

class ThreadPool {
public:
    // Total threads including the caller; kAutomatic: every core, fewer while other
    // programs keep cores busy (CpuAvailability, looked at as each run starts).
    static constexpr int kAutomatic = 0;
    explicit ThreadPool(int threads);
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // The threads the current run's loops share their work among.
    int size() const { return m_helpers && m_tolerant ? m_size : m_active; }
    // The OpenMP team's size, the threads oneDNN and OpenMP loops use.
    int teamSize() const { return m_active; }
    bool automatic() const { return m_availability != nullptr; }
    // Calls fn(begin, end) over [0, n) in contiguous chunks, up to four per thread: each
    // thread takes those of its own contiguous share first, then any the others left. Work
    // smaller than `grain` items per thread is not split. Nested calls run inline.
    void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
    // OpenMP's thread count is a per-thread setting: call this on the thread that runs
    // kernels before they reach oneDNN, as a run starts (an automatic pool decides its count here).
    void applyToCallingThread();
    // For tests and benchmarks: loops on the helper threads whatever the free cores.
    void forceHelpers();

private:
    // Our loops on LoopHelpers (made the first time) when forced, or when an automatic pool
    // found a core taken while another waits for no one; on the OpenMP team otherwise.
    void chooseLoops();
    int m_size = 1;    // the most it uses
    int m_active = 1;  // what this run uses
    bool m_tolerant = false;  // loops on LoopHelpers (a core is taken)
    bool m_forced = false;
    std::unique_ptr<CpuAvailability> m_availability;
    std::unique_ptr<LoopHelpers> m_helpers;
    std::mutex m_mutex;
};

}  // namespace fsc
