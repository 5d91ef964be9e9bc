#include "compiler/runtime/thread_pool.h"

#include <algorithm>

namespace fsc {

ThreadPool::ThreadPool(int threads) : m_size(std::max(1, threads)) {
    for (int i = 1; i < m_size; ++i) m_workers.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_workers) t.join();
}

static void runChunk(const std::function<void(int64_t, int64_t)>& fn, int64_t n, int chunks,
                     int index) {
    const int64_t begin = n * index / chunks;
    const int64_t end = n * (index + 1) / chunks;
    if (begin < end) fn(begin, end);
}

void ThreadPool::parallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    const int chunks =
        int(std::min<int64_t>(m_size, std::max<int64_t>(1, n / std::max<int64_t>(1, grain))));
    {
        std::unique_lock lock(m_mutex);
        if (chunks <= 1 || m_busy) {
            lock.unlock();
            fn(0, n);
            return;
        }
        m_busy = true;
        m_task = &fn;
        m_n = n;
        m_chunks = chunks;
        m_pending = chunks - 1;
        ++m_generation;
    }
    m_wake.notify_all();
    runChunk(fn, n, chunks, 0);
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [this] { return m_pending == 0; });
    m_task = nullptr;
    m_busy = false;
}

void ThreadPool::workerLoop(int index) {
    uint64_t seen = 0;
    for (;;) {
        const std::function<void(int64_t, int64_t)>* task;
        int64_t n;
        int chunks;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop) return;
            seen = m_generation;
            task = m_task;
            n = m_n;
            chunks = m_chunks;
        }
        if (index < chunks) {
            runChunk(*task, n, chunks, index);
            std::lock_guard lock(m_mutex);
            if (--m_pending == 0) m_done.notify_one();
        }
    }
}

}  // namespace fsc
