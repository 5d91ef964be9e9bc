#include "compiler/runtime/thread_pool.h"

#include <omp.h>

#include <algorithm>

namespace fsc {

ThreadPool::ThreadPool(int threads) : m_size(std::max(1, threads)) {}

void ThreadPool::parallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    const int chunks =
        int(std::min<int64_t>(m_size, std::max<int64_t>(1, n / std::max<int64_t>(1, grain))));
    if (chunks <= 1 || omp_in_parallel()) {
        fn(0, n);
        return;
    }
#pragma omp parallel num_threads(chunks)
    {
        const int index = omp_get_thread_num();
        const int count = omp_get_num_threads();  // may be fewer than asked
        const int64_t begin = n * index / count;
        const int64_t end = n * (index + 1) / count;
        if (begin < end) fn(begin, end);
    }
}

void ThreadPool::applyToCallingThread() const { omp_set_num_threads(m_size); }

}  // namespace fsc
