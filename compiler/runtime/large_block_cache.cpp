#include "compiler/runtime/large_block_cache.h"

#include <bit>
#include <cstdlib>
#include <deque>
#include <mutex>

namespace fsc {

namespace {

struct Held {
    void* block;
    size_t capacity;
};

struct State {
    std::mutex mutex;
    std::deque<Held> held;  // oldest first
    size_t heldBytes = 0;
    size_t reused = 0;
};

State& state() {
    // Never destroyed: a tensor freed by a static's destructor at exit may still give a block.
    static State* s = new State;
    return *s;
}

}  // namespace

size_t LargeBlockCache::capacityFor(size_t bytes) {
    const size_t aligned = (bytes + 63) / 64 * 64;
    if (aligned < kSmallest) return aligned;
    const size_t step = std::bit_floor(aligned) / 8;
    return (aligned + step - 1) / step * step;
}

void* LargeBlockCache::take(size_t bytes) {
    const size_t capacity = capacityFor(bytes);
    if (capacity >= kSmallest) {
        State& s = state();
        std::lock_guard lock(s.mutex);
        for (auto it = s.held.rbegin(); it != s.held.rend();
             ++it) {  // the most recently freed is warmest
            if (it->capacity != capacity) continue;
            void* block = it->block;
            s.heldBytes -= capacity;
            s.held.erase(std::next(it).base());
            ++s.reused;
            return block;
        }
    }
    return std::aligned_alloc(64, capacity);
}

void LargeBlockCache::give(void* block, size_t bytes) {
    if (!block) return;
    const size_t capacity = capacityFor(bytes);
    if (capacity < kSmallest || capacity > kHeldAtMost) {
        std::free(block);
        return;
    }
    State& s = state();
    std::deque<Held> evicted;
    {
        std::lock_guard lock(s.mutex);
        while (s.heldBytes + capacity > kHeldAtMost) {
            evicted.push_back(s.held.front());
            s.heldBytes -= s.held.front().capacity;
            s.held.pop_front();
        }
        s.held.push_back({block, capacity});
        s.heldBytes += capacity;
    }
    for (const Held& h : evicted) std::free(h.block);  // outside the lock: munmap takes a while
}

void LargeBlockCache::releaseHeld() {
    State& s = state();
    std::deque<Held> all;
    {
        std::lock_guard lock(s.mutex);
        all.swap(s.held);
        s.heldBytes = 0;
    }
    for (const Held& h : all) std::free(h.block);
}

LargeBlockCache::Counts LargeBlockCache::counts() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    return {s.held.size(), s.heldBytes, s.reused};
}

}  // namespace fsc
