#pragma once
// Data-parallel kernel loops on OpenMP's thread team. oneDNN (the BLAS and convolution
// library) runs on the same team, so our loops and its calls never compete for cores
// with a second set of spinning threads.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "compiler/runtime/cpu_availability.h"

namespace fsc {

class ThreadPool {
public:
    // Total threads including the caller; kAutomatic: every core, fewer while other
    // programs keep cores busy (CpuAvailability, looked at as each run starts).
    static constexpr int kAutomatic = 0;
    explicit ThreadPool(int threads);
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // The threads the current run uses.
    int size() const { return m_active; }
    bool automatic() const { return m_availability != nullptr; }
    // Calls fn(begin, end) over [0, n) in contiguous chunks, up to four per thread: each
    // thread takes those of its own contiguous share first, then any the others left. Work
    // smaller than `grain` items per thread is not split. Nested calls run inline.
    void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
    // OpenMP's thread count is a per-thread setting: call this on the thread that runs
    // kernels before they reach oneDNN, as a run starts (an automatic pool decides its count here).
    void applyToCallingThread();

private:
    int m_size = 1;    // the most it uses
    int m_active = 1;  // what this run uses
    std::unique_ptr<CpuAvailability> m_availability;
    std::mutex m_mutex;
};

}  // namespace fsc
