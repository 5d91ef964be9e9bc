#pragma once
// A fixed set of worker threads for data-parallel kernel loops. The calling thread takes
// part, so a pool of size 1 runs everything inline with no synchronisation.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fsc {

class ThreadPool {
public:
    explicit ThreadPool(int threads);  // total threads including the caller; >= 1
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return m_size; }
    // Calls fn(begin, end) over [0, n) in contiguous chunks. Work smaller than `grain`
    // items per thread is not split. Not re-entrant: nested calls run inline.
    void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

private:
    void workerLoop(int index);

    int m_size = 1;
    std::vector<std::thread> m_workers;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_done;
    const std::function<void(int64_t, int64_t)>* m_task = nullptr;
    int64_t m_n = 0;
    int m_chunks = 0;
    uint64_t m_generation = 0;
    int m_pending = 0;
    bool m_stop = false;
    bool m_busy = false;
};

}  // namespace fsc
