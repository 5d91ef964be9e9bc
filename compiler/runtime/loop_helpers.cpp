#include "compiler/runtime/loop_helpers.h"

#include <omp.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace fsc {

namespace {
thread_local bool t_insideLoop = false;

// A helper keeps looking for the next loop this long before it sleeps until the next run
// wakes it: the gaps between our loops are microseconds, a oneDNN layer between them longer.
constexpr auto kHelperSpin = std::chrono::microseconds(50);
// The caller looks this long for its joined helpers to finish before it sleeps: sleeping
// leaves its core free for a helper the scheduler stopped mid-piece.
constexpr auto kCallerSpin = std::chrono::microseconds(20);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Spins until done() or `limit` passes; true when done() answered.
template <typename Done>
bool spinUntil(Done done, std::chrono::microseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (int i = 0;; ++i) {
        if (done()) return true;
        relax();
        if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return false;
    }
}

// Sleeps while `word` holds `seen`. Not std::atomic::wait: libstdc++ 12's notify skips the wake
// when its waiter count reads zero, which a platform wait never raises (GCC bug 106772), so a
// helper slept through the destructor's notify.
void sleepWhile(const std::atomic<uint32_t>& word, uint32_t seen) {
    syscall(SYS_futex, reinterpret_cast<const uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}
void wakeAll(std::atomic<uint32_t>& word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

struct InsideLoop {
    InsideLoop() { t_insideLoop = true; }
    ~InsideLoop() { t_insideLoop = false; }
};
}  // namespace

bool LoopHelpers::insideLoop() { return t_insideLoop; }

LoopHelpers::LoopHelpers(int helpers) {
    // Helpers keep off the core the caller runs on: one sharing it would only take turns with
    // the caller, and its turns would stall the caller's loops (MobileNetV2 QDQ with one core
    // taken: 4.0 ms with the helper on the other core, 5.4 on the caller's, 4.6 at one thread).
    const int callerCpu = sched_getcpu();
    cpu_set_t home;
    m_keepOff = callerCpu >= 0 && sched_getaffinity(0, sizeof home, &home) == 0 && CPU_ISSET(callerCpu, &home) &&
                CPU_COUNT(&home) >= 2;
    if (m_keepOff) {
        CPU_CLR(callerCpu, &home);
        m_home = home;
    }
    m_threads.reserve(size_t(std::max(0, helpers)));
    for (int i = 0; i < helpers; ++i) {
        m_threads.emplace_back([this] { helperMain(); });
        if (m_keepOff) pthread_setaffinity_np(m_threads.back().native_handle(), sizeof m_home, &m_home);
    }
}

void LoopHelpers::wake() {
    m_generation.fetch_add(1, std::memory_order_seq_cst);
    wakeAll(m_generation);
}

void LoopHelpers::callHelpersHere() {
    const int here = sched_getcpu();
    if (!m_keepOff || here < 0) return;
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(here, &only);
    for (std::thread& t : m_threads) pthread_setaffinity_np(t.native_handle(), sizeof only, &only);
}

void LoopHelpers::sendHelpersHome() {
    for (std::thread& t : m_threads) pthread_setaffinity_np(t.native_handle(), sizeof m_home, &m_home);
}

LoopHelpers::~LoopHelpers() {
    m_stop.store(true, std::memory_order_seq_cst);
    m_generation.fetch_add(1, std::memory_order_seq_cst);
    wakeAll(m_generation);
    for (std::thread& t : m_threads) t.join();
}

bool LoopHelpers::run(int maxHelpers, const std::function<void(int)>& body) {
    std::unique_lock lock(m_caller, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    m_body = &body;
    m_maxHelpers = std::min(maxHelpers, helpers());
    const uint32_t generation = m_generation.load(std::memory_order_relaxed) + 1;
    // Open admission for this generation before the helpers see it.
    m_admission.store(uint64_t(generation) << 32, std::memory_order_release);
    m_generation.store(generation, std::memory_order_seq_cst);
    // No wake-up call here: a helper asleep (none came for 50 us, as when oneDNN runs a layer)
    // would arrive late and be waited for mid-piece, and the call itself costs microseconds
    // (mobilenet_v2, one core taken: 7.35-7.47 ms waking helpers for every loop, 7.03-7.28
    // waking them as a run starts, 7.09-7.38 at one thread).

    // A library's OpenMP region inside the body runs on this thread alone, as on a helper.
    const int teamOutside = omp_get_max_threads();
    omp_set_num_threads(1);
    {
        InsideLoop inside;
        body(0);
    }
    omp_set_num_threads(teamOutside);

    // The caller's body returns only when no piece is left to take: close admission, then
    // wait for those who joined (each may still be in its last piece).
    const uint64_t before = m_admission.fetch_or(kClosed, std::memory_order_acq_rel);
    if (active(before) != 0) {
        auto allLeft = [this] { return active(m_admission.load(std::memory_order_acquire)) == 0; };
        if (!spinUntil(allLeft, kCallerSpin)) {
            // A helper the scheduler stopped mid-piece: it waits for its turn on a core another
            // program holds, while the caller's core is about to idle. Moved here, it finishes
            // at once.
            callHelpersHere();
            for (;;) {
                const uint32_t seen = m_lastLeft.load(std::memory_order_acquire);
                if (allLeft()) break;
                sleepWhile(m_lastLeft, seen);
            }
            sendHelpersHome();
        }
    }
    m_body = nullptr;
    return true;
}

void LoopHelpers::helperMain() {
    omp_set_num_threads(1);
    uint32_t seen = m_generation.load(std::memory_order_acquire);
    for (;;) {
        // The generation first: a helper that starts after the destructor's bump reads that
        // generation as its own, and then finds the stop flag set before it.
        auto next = [&] {
            return m_generation.load(std::memory_order_seq_cst) != seen || m_stop.load(std::memory_order_seq_cst);
        };
        if (!spinUntil(next, kHelperSpin))
            while (!next()) sleepWhile(m_generation, seen);
        if (m_stop.load(std::memory_order_acquire)) return;
        seen = m_generation.load(std::memory_order_acquire);

        // Join only the loop of this generation, and only while it is open.
        uint64_t s = m_admission.load(std::memory_order_acquire);
        bool joined = false;
        while ((s >> 32) == seen && !(s & kClosed))
            if (m_admission.compare_exchange_weak(s, s + kActive + kTicket, std::memory_order_acq_rel,
                                                  std::memory_order_acquire)) {
                joined = true;
                break;
            }
        if (!joined) continue;
        const int ticket = int(tickets(s));
        if (ticket < m_maxHelpers) {
            InsideLoop inside;
            (*m_body)(ticket + 1);
        }
        const uint64_t prev = m_admission.fetch_sub(kActive, std::memory_order_acq_rel);
        if (active(prev) == 1 && (prev & kClosed)) {
            m_lastLeft.fetch_add(1, std::memory_order_release);
            wakeAll(m_lastLeft);
        }
    }
}

}  // namespace fsc
