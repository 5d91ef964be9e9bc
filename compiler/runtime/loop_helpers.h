#pragma once
// Helper threads that join a loop only if they are running when it starts: the caller never
// waits for a helper that has not begun. An OpenMP region waits at its end for every thread of
// its team, so with one core held by another program each region waited for the thread that
// shared that core (MobileNetV2 QDQ at two threads under one pinned spinning process: 6.5 ms,
// p90 40 ms, against 3.9 ms at one thread). Here a helper the scheduler has not run yet finds
// the loop closed when it wakes, and the threads that did run took its work; a helper that
// stops mid-piece is waited for on the caller's core, which it is moved to while the caller
// sleeps. Otherwise helpers keep off the core the caller ran on when they started.
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fsc {

class LoopHelpers {
public:
    explicit LoopHelpers(int helpers);
    ~LoopHelpers();
    LoopHelpers(const LoopHelpers&) = delete;
    LoopHelpers& operator=(const LoopHelpers&) = delete;

    int helpers() const { return int(m_threads.size()); }
    // Calls body(slot) on the calling thread (slot 0) and on each of up to `maxHelpers` helpers
    // that joins in time (slots 1, 2, ... in the order they join), and returns when every
    // joined call has returned. Bodies must share their work so that the caller alone
    // completes it. Returns false without calling body when another thread is running a loop
    // on these helpers.
    bool run(int maxHelpers, const std::function<void(int)>& body);
    // True on a thread running a body: a loop started there runs inline.
    static bool insideLoop();
    // Wakes sleeping helpers, as a run starts: loops themselves find only the helpers awake.
    void wake();

private:
    void helperMain();
    // While the caller sleeps waiting for a helper, the helpers may run on its core only.
    void callHelpersHere();
    void sendHelpersHome();
    // The admission word: generation << 32 | closed << 31 | active << 16 | tickets.
    static constexpr uint64_t kClosed = uint64_t(1) << 31, kActive = uint64_t(1) << 16, kTicket = 1;
    static uint64_t active(uint64_t s) { return (s >> 16) & 0x7fff; }
    static uint64_t tickets(uint64_t s) { return s & 0xffff; }

    std::vector<std::thread> m_threads;
    bool m_keepOff = false;  // helpers kept to m_home, the cores but the caller's
    cpu_set_t m_home;
    std::mutex m_caller;                      // one loop at a time
    std::atomic<uint32_t> m_generation{0};    // bumped per loop; sleeping helpers wait on it
    std::atomic<uint64_t> m_admission{kClosed};
    std::atomic<uint32_t> m_lastLeft{0};      // bumped when the last joined helper leaves a closed loop
    std::atomic<bool> m_stop{false};
    const std::function<void(int)>* m_body = nullptr;
    int m_maxHelpers = 0;
};

}  // namespace fsc
