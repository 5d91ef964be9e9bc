// ThreadPool::parallelFor: every index of [0, n) reaches fn exactly once, in contiguous
// chunks, at any thread count, grain and size, also when one thread stalls in its first
// piece (the others then take the rest of its share) and when called from inside a loop;
// the same on LoopHelpers (the loops of an automatic pool that finds a core taken), where the
// caller finishes a loop alone when no helper comes and waits for a helper that joined.
#include <QtTest>

#include <omp.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "compiler/runtime/cpu_availability.h"
#include "compiler/runtime/loop_helpers.h"
#include "compiler/runtime/thread_pool.h"

using namespace fsc;

namespace {

// How many times each index was visited, and whether every chunk was well formed.
struct Coverage {
    std::vector<std::atomic<int>> visits;
    std::atomic<bool> badChunk{false};
    explicit Coverage(int64_t n) : visits(size_t(n)) {}
    void visit(int64_t begin, int64_t end) {
        if (begin < 0 || end > int64_t(visits.size()) || begin >= end) badChunk = true;
        for (int64_t i = begin; i < end && i < int64_t(visits.size()); ++i) visits[size_t(i)]++;
    }
    bool eachOnce() const {
        for (const auto& v : visits)
            if (v.load() != 1) return false;
        return !badChunk;
    }
};

}  // namespace

class TestThreadPool : public QObject {
    Q_OBJECT
private slots:
    void everyIndexOnce() {
        for (int threads : {1, 2, 3, 4, 7, 80})  // 80: more shares than fit on the stack
            for (int64_t n : {1, 2, 5, 17, 64, 1000, 100003})
                for (int64_t grain : {1, 3, 4096}) {
                    ThreadPool pool(threads);
                    pool.applyToCallingThread();
                    Coverage c(n);
                    pool.parallelFor(n, grain, [&](int64_t b, int64_t e) { c.visit(b, e); });
                    QVERIFY2(
                        c.eachOnce(),
                        qPrintable(
                            QString("threads %1, n %2, grain %3").arg(threads).arg(n).arg(grain)));
                }
    }

    void aStalledThreadsShareIsTakenByTheOthers() {
        ThreadPool pool(4);
        pool.applyToCallingThread();
        const int64_t n = 64;  // 16 pieces of 4, a share of 4 pieces per thread
        Coverage c(n);
        std::atomic<int> sleeper{-1};
        std::atomic<bool> lateChunk{false};
        pool.parallelFor(n, 1, [&](int64_t b, int64_t e) {
            const int self = omp_get_thread_num();
            if (self == sleeper.load()) lateChunk = true;
            if (b == 0) {
                sleeper = self;
                std::this_thread::sleep_for(std::chrono::milliseconds(300));
            }
            c.visit(b, e);
        });
        QVERIFY(c.eachOnce());
        QVERIFY(sleeper.load() >= 0);
        // Whatever share index 0 was in, the other threads emptied it while its thread slept.
        QVERIFY(!lateChunk.load());
    }

    void nestedCallsRunInline() {
        ThreadPool pool(3);
        pool.applyToCallingThread();
        Coverage outer(12);
        std::atomic<int> outerChunks{0};
        std::atomic<int64_t> inner{0};
        pool.parallelFor(12, 1, [&](int64_t b, int64_t e) {
            outer.visit(b, e);
            ++outerChunks;
            Coverage mine(100);
            pool.parallelFor(100, 1, [&](int64_t ib, int64_t ie) {
                mine.visit(ib, ie);
                inner += ie - ib;
            });
            if (!mine.eachOnce()) inner = -1000000;
        });
        QVERIFY(outer.eachOnce());
        QCOMPARE(inner.load(), int64_t(outerChunks.load()) * 100);
    }

    void helperLoopsVisitEveryIndexOnce() {
        for (int threads : {2, 3, 5})
            for (int64_t n : {1, 2, 7, 64, 1000, 100003})
                for (int64_t grain : {1, 4096}) {
                    ThreadPool pool(threads);
                    pool.forceHelpers();
                    pool.applyToCallingThread();
                    QCOMPARE(pool.size(), threads);
                    for (int repeat = 0; repeat < 20; ++repeat) {  // helpers awake, asleep, joining late
                        if (repeat % 4 == 0) pool.applyToCallingThread();  // as a run starts: wakes them
                        Coverage c(n);
                        pool.parallelFor(n, grain, [&](int64_t b, int64_t e) { c.visit(b, e); });
                        QVERIFY2(c.eachOnce(), qPrintable(QString("threads %1, n %2, grain %3, repeat %4")
                                                              .arg(threads).arg(n).arg(grain).arg(repeat)));
                    }
                }
    }

    void slotsAreDistinctAndTheCallerRunsSlotZero() {
        LoopHelpers helpers(2);
        // Whether or not helpers join (asleep, awake, late), every slot is distinct and within
        // the limit asked for, and the caller runs slot 0 itself.
        for (int repeat = 0; repeat < 200; ++repeat) {
            if (repeat % 10 == 0) helpers.wake();
            std::atomic<int> slotsSeen{0};
            std::atomic<bool> badSlot{false};
            const bool ran = helpers.run(repeat % 3, [&](int slot) {
                if (slot < 0 || slot > repeat % 3) badSlot = true;
                if (slotsSeen.fetch_or(1 << slot) & (1 << slot)) badSlot = true;
                if (!LoopHelpers::insideLoop()) badSlot = true;
                if (omp_get_max_threads() != 1) badSlot = true;  // a library's OpenMP region stays on one thread
            });
            QVERIFY(ran);
            QVERIFY(slotsSeen.load() & 1);  // the caller always runs slot 0
            QVERIFY(!badSlot.load());
        }
        QVERIFY(!LoopHelpers::insideLoop());
    }

    void theCallerWaitsForAHelperThatJoined() {
        LoopHelpers helpers(1);
        std::atomic<bool> helperDone{false};
        std::atomic<bool> helperJoined{false};
        // The caller's body gives the helper up to 20 ms to join; once it has, the caller's
        // body returns at once, and run() must still return only after the helper's slow body.
        for (int attempt = 0; attempt < 50 && !helperJoined.load(); ++attempt) {
            helpers.wake();
            helpers.run(1, [&](int slot) {
                if (slot == 0) {
                    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
                    while (!helperJoined.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
                } else {
                    helperJoined = true;
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                    helperDone = true;
                }
            });
            if (helperJoined.load()) QVERIFY(helperDone.load());
        }
        QVERIFY(helperJoined.load());
    }

    void runnableThreadsOnEveryCoreLeaveNoCoreForHelpers() {
        // As many spinning threads as cores: whoever's they are, the kernel counts them
        // runnable, and a look then finds no core that waits for no one.
        CpuAvailability availability;
        std::atomic<bool> stop{false};
        std::vector<std::thread> spinners;
        for (int i = 0; i < availability.cores(); ++i)
            spinners.emplace_back([&] {
                while (!stop.load(std::memory_order_relaxed)) {
                }
            });
        availability.freeCoresNow();
        const bool free = availability.aCoreWaitsForNoOne();
        stop = true;
        for (std::thread& t : spinners) t.join();
        QVERIFY(!free);
    }

    void aSecondCallerIsRefusedNotMixedIn() {
        LoopHelpers helpers(1);
        std::atomic<bool> innerRan{false}, innerRefused{false};
        std::thread other;
        helpers.run(0, [&](int) {
            other = std::thread([&] {
                innerRefused = !helpers.run(1, [&](int) { innerRan = true; });
            });
            other.join();
        });
        QVERIFY(innerRefused.load());
        QVERIFY(!innerRan.load());
    }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "tst_thread_pool.moc"
