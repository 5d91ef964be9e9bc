#include "compiler/runtime/thread_pool.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

namespace fsc {

namespace {
constexpr int64_t kPiecesPerThread = 4;

// One thread's contiguous run of pieces [front, back), packed in one word: its owner takes
// them from the front, other threads from the back.
struct alignas(64) Share {
    std::atomic<uint64_t> range{0};
    static uint64_t pack(int64_t front, int64_t back) {
        return uint64_t(front) << 32 | uint64_t(back);
    }
    // The next piece, or -1 when none is left.
    int64_t take(bool owner) {
        uint64_t r = range.load(std::memory_order_relaxed);
        for (;;) {
            const int64_t front = int64_t(r >> 32), back = int64_t(r & 0xffffffffu);
            if (front >= back) return -1;
            const uint64_t taken = owner ? pack(front + 1, back) : pack(front, back - 1);
            if (range.compare_exchange_weak(r, taken, std::memory_order_relaxed))
                return owner ? front : back - 1;
        }
    }
};
constexpr int kMaxShares = 64;
}  // namespace

ThreadPool::ThreadPool(int threads) : m_size(std::max(1, threads)), m_active(m_size) {
    if (threads == kAutomatic) {
        m_availability = std::make_unique<CpuAvailability>();
        m_size = m_availability->cores();
        m_active = m_availability->freeCoresNow();
        chooseLoops();
    }
}

void ThreadPool::parallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    const int64_t grains = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
    const int threads = int(std::min<int64_t>(size(), grains));
    if (threads <= 1 || omp_in_parallel() || LoopHelpers::insideLoop()) {
        fn(0, n);
        return;
    }
    // Each thread first takes the pieces of its own contiguous share, in order, then those
    // left in the others' shares. Idle, every thread works on the same stretch of the
    // tensors as in the kernel before and after (static shares, as oneDNN splits its work):
    // taking pieces in turn from one queue sent half of every layer's inputs from the other
    // core's cache (mnasnet1_0 at two threads: 3.94-4.36 -> 3.55-3.82 ms). A thread whose core
    // another program holds still holds nothing up: its pieces go to the threads that run.
    const int64_t pieces = std::min<int64_t>(grains, int64_t(threads) * kPiecesPerThread);
    Share onStack[kMaxShares];
    std::unique_ptr<Share[]> onHeap;
    Share* shares = threads <= kMaxShares
                        ? onStack
                        : (onHeap = std::make_unique<Share[]>(size_t(threads))).get();
    for (int t = 0; t < threads; ++t)
        shares[t].range.store(Share::pack(pieces * t / threads, pieces * (t + 1) / threads),
                              std::memory_order_relaxed);
    auto work = [&](int self) {
        for (int k = 0; k < threads; ++k)
            for (int64_t p; (p = shares[(self + k) % threads].take(k == 0)) >= 0;) {
                const int64_t begin = n * p / pieces, end = n * (p + 1) / pieces;
                if (begin < end) fn(begin, end);
            }
    };
    if (m_tolerant && m_helpers) {
        // Another thread's loop on the helpers: this one runs alone.
        if (!m_helpers->run(threads - 1, work)) work(0);
        return;
    }
#pragma omp parallel num_threads(threads)
    work(omp_get_thread_num());
}

void ThreadPool::applyToCallingThread() {
    if (m_availability) {
        std::lock_guard lock(m_mutex);
        m_active = std::min(m_size, m_availability->freeCores());
        chooseLoops();
    }
    if (m_tolerant && m_helpers) m_helpers->wake();
    omp_set_num_threads(m_active);
}

void ThreadPool::forceHelpers() {
    std::lock_guard lock(m_mutex);
    m_forced = true;
    chooseLoops();
}

void ThreadPool::chooseLoops() {
    m_tolerant = m_forced || (m_availability && m_active < m_size && m_availability->aCoreWaitsForNoOne());
    if (m_tolerant && !m_helpers) m_helpers = std::make_unique<LoopHelpers>(m_size - 1);
}

}  // namespace fsc
