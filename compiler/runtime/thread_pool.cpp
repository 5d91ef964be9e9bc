#include "compiler/runtime/thread_pool.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

namespace fsc {

namespace {
constexpr int64_t kPiecesPerThread = 4;
}  // namespace

ThreadPool::ThreadPool(int threads) : m_size(std::max(1, threads)), m_active(m_size) {
    if (threads == kAutomatic) {
        m_availability = std::make_unique<CpuAvailability>();
        m_size = m_availability->cores();
        m_active = m_availability->freeCoresNow();
    }
}

void ThreadPool::parallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    const int64_t grains = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
    const int threads = int(std::min<int64_t>(m_active, grains));
    if (threads <= 1 || omp_in_parallel()) {
        fn(0, n);
        return;
    }
    // More pieces than threads, taken in turn: a thread whose core another program holds does
    // fewer of them instead of holding up the region with a fixed share.
    const int64_t pieces = std::min<int64_t>(grains, int64_t(threads) * kPiecesPerThread);
    std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(threads)
    {
        for (int64_t p = next.fetch_add(1, std::memory_order_relaxed); p < pieces;
             p = next.fetch_add(1, std::memory_order_relaxed)) {
            const int64_t begin = n * p / pieces, end = n * (p + 1) / pieces;
            if (begin < end) fn(begin, end);
        }
    }
}

void ThreadPool::applyToCallingThread() {
    if (m_availability) {
        std::lock_guard lock(m_mutex);
        m_active = std::min(m_size, m_availability->freeCores());
    }
    omp_set_num_threads(m_active);
}

}  // namespace fsc
