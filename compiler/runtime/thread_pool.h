#pragma once
// Data-parallel kernel loops on OpenMP's thread team. oneDNN (the BLAS and convolution
// library) runs on the same team, so our loops and its calls never compete for cores
// with a second set of spinning threads.
#include <cstdint>
#include <functional>

namespace fsc {

class ThreadPool {
public:
    explicit ThreadPool(int threads);  // total threads including the caller; >= 1
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return m_size; }
    // Calls fn(begin, end) over [0, n) in contiguous chunks. Work smaller than `grain`
    // items per thread is not split. Nested calls run inline.
    void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
    // OpenMP's thread count is a per-thread setting: call this on the thread that runs
    // kernels before they reach oneDNN.
    void applyToCallingThread() const;

private:
    int m_size = 1;
};

}  // namespace fsc
