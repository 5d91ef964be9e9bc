// The job runner: results on the GUI thread, a newer job of a channel drops the older one's
// result, cancel reaches the work, dropOnCancel frees the channel at once, afterPrevious
// jobs run one at a time, a destroyed owner gets nothing, and progress reaches the watcher.
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <thread>

#include "views/job_runner.h"

using namespace fsc;

namespace {

// Work that waits until `release` is set or it is cancelled; returns its tag, or -1 cancelled.
auto waitingWork(std::shared_ptr<std::atomic<bool>> release, int tag) {
    return [release, tag](const JobRunner::Control& c) {
        while (!release->load() && !c.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return c.cancelled() ? -1 : tag;
    };
}

}  // namespace

class TestJobRunner : public QObject {
    Q_OBJECT
private slots:
    void deliversOnTheGuiThread() {
        JobRunner runner;
        QObject owner;
        QThread* deliveredOn = nullptr;
        auto workedOn = std::make_shared<std::atomic<QThread*>>(nullptr);
        int value = 0;
        runner.start(
            &owner, QStringLiteral("sum"), QStringLiteral("Adding"),
            [workedOn](const JobRunner::Control&) {
                workedOn->store(QThread::currentThread());
                return 41 + 1;
            },
            [&](int result) {
                value = result;
                deliveredOn = QThread::currentThread();
            });
        QVERIFY(runner.busy(&owner, QStringLiteral("sum")));
        QTRY_COMPARE(value, 42);
        QCOMPARE(deliveredOn, qApp->thread());
        QVERIFY(workedOn->load() != qApp->thread());
        QVERIFY(!runner.busy(&owner, QStringLiteral("sum")));
        QVERIFY(!runner.busy());
    }

    void aNewerJobDropsTheOlderResult() {
        JobRunner runner;
        QObject owner;
        QSignalSpy ended(&runner, &JobRunner::ended);
        std::vector<int> delivered;
        auto release = std::make_shared<std::atomic<bool>>(false);
        const int first = runner.start(&owner, QStringLiteral("c"), QStringLiteral("first"),
                                       waitingWork(release, 1), [&](int r) { delivered.push_back(r); });
        // The first one ends (for the status bar) as soon as it is replaced.
        runner.start(&owner, QStringLiteral("c"), QStringLiteral("second"), [](const JobRunner::Control&) { return 2; },
                     [&](int r) { delivered.push_back(r); });
        QCOMPARE(ended.count(), 1);
        QCOMPARE(ended.first().first().toInt(), first);
        QTRY_VERIFY(!runner.busy());
        QTest::qWait(20);
        QCOMPARE(delivered, std::vector<int>{2});
        // Another channel of the same owner is independent.
        int other = 0;
        runner.start(&owner, QStringLiteral("d"), QString(), [](const JobRunner::Control&) { return 3; },
                     [&](int r) { other = r; });
        QTRY_COMPARE(other, 3);
    }

    void theUsersCancelReachesTheWorkAndStillDelivers() {
        JobRunner runner;
        QObject owner;
        auto release = std::make_shared<std::atomic<bool>>(false);
        int delivered = 0;
        runner.start(&owner, QStringLiteral("c"), QStringLiteral("long"), waitingWork(release, 1),
                     [&](int r) { delivered = r == -1 ? 99 : r; });
        runner.cancelAll();
        QTRY_COMPARE(delivered, 99);  // the owner hears that it stopped
    }

    void dropOnCancelFreesTheChannelAtOnce() {
        JobRunner runner;
        QObject owner;
        auto release = std::make_shared<std::atomic<bool>>(false);
        int delivered = 0, dropped = 0;
        JobRunner::Options options;
        options.dropOnCancel = true;
        options.onDropped = [&] { ++dropped; };
        // Work that cannot stop midway: it ignores the flag until released.
        const int id = runner.start(
            &owner, QStringLiteral("load"), QStringLiteral("Loading"),
            [release](const JobRunner::Control&) {
                while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                return 1;
            },
            [&](int r) { delivered = r; }, options);
        runner.cancel(id);
        QCOMPARE(dropped, 1);
        QVERIFY(!runner.busy(&owner, QStringLiteral("load")));
        runner.start(&owner, QStringLiteral("load"), QString(), [](const JobRunner::Control&) { return 2; },
                     [&](int r) { delivered = r; });
        release->store(true);
        QTRY_COMPARE(delivered, 2);
        QTest::qWait(20);
        QCOMPARE(delivered, 2);
    }

    void afterPreviousJobsNeverOverlap() {
        JobRunner runner;
        QObject owner;
        auto running = std::make_shared<std::atomic<int>>(0);
        auto most = std::make_shared<std::atomic<int>>(0);
        JobRunner::Options options;
        options.afterPrevious = true;
        int delivered = 0;
        for (int i = 1; i <= 5; ++i)
            runner.start(
                &owner, QStringLiteral("layout"), QString(),
                [running, most, i](const JobRunner::Control& c) {
                    *most = std::max(most->load(), ++*running);
                    for (int k = 0; k < 20 && !c.cancelled(); ++k)
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    --*running;
                    return i;
                },
                [&](int r) { delivered = r; }, options);
        QTRY_COMPARE(delivered, 5);
        QCOMPARE(most->load(), 1);
        QVERIFY(!runner.busy());
    }

    void aDestroyedOwnerGetsNothing() {
        JobRunner runner;
        auto owner = std::make_unique<QObject>();
        auto release = std::make_shared<std::atomic<bool>>(false);
        bool delivered = false;
        runner.start(owner.get(), QStringLiteral("c"), QString(), waitingWork(release, 1), [&](int) { delivered = true; });
        owner.reset();
        release->store(true);
        QTRY_VERIFY(!runner.busy());
        QVERIFY(!delivered);
    }

    void progressReachesTheWatcherAndShutdownWaits() {
        auto runner = std::make_unique<JobRunner>();
        QSignalSpy spy(runner.get(), &JobRunner::progressed);
        QObject owner;
        auto release = std::make_shared<std::atomic<bool>>(false);
        auto finishedWork = std::make_shared<std::atomic<bool>>(false);
        runner->start(
            &owner, QStringLiteral("c"), QString(),
            [release, finishedWork](const JobRunner::Control& c) {
                c.progress(1, 4);
                c.progress(1, 4);  // unchanged: not sent twice
                c.progress(3, 4);
                while (!release->load() && !c.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                finishedWork->store(true);
                return 0;
            },
            [](int) {});
        QTRY_COMPARE(spy.count(), 2);
        QCOMPARE(spy.at(0).at(1).toInt(), 25);
        QCOMPARE(spy.at(1).at(1).toInt(), 75);
        runner.reset();  // cancels and waits: the work has returned
        QVERIFY(finishedWork->load());
    }
};

QTEST_MAIN(TestJobRunner)
#include "tst_job_runner.moc"
