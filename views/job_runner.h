#pragma once
// The GUI's one way to do long work off the GUI thread. A job runs on a thread of its own,
// reports progress, can be cancelled, and hands its result back on the GUI thread. Jobs
// belong to a channel (an owner object and a name, such as a canvas's "layout"): starting a
// job replaces the channel's previous one, which is cancelled and whose result is dropped,
// so a view never shows the answer to a question no longer asked. A result is also dropped
// when its owner has been destroyed. The status bar watches the runner (started, progressed,
// ended) and its Cancel calls cancelAll().
#include <QObject>
#include <QPointer>
#include <QString>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

class QThread;

namespace fsc {

class JobRunner : public QObject {
    Q_OBJECT
public:
    // What a job's work sees on its thread.
    class Control {
    public:
        bool cancelled() const { return m_cancel->load(); }
        // For engine calls that take a cancel flag (compile, profile, calibration).
        const std::atomic<bool>* cancelFlag() const { return m_cancel.get(); }
        void progress(size_t done, size_t total) const;  // any thread; shown as a percentage

    private:
        friend class JobRunner;
        std::shared_ptr<std::atomic<bool>> m_cancel;
        std::function<void(int)> m_report;
    };

    struct Options {
        // Wait for the channel's previous job to end before starting (jobs that share state,
        // such as the canvas's layout cache). The previous one is cancelled either way.
        bool afterPrevious = false;
        // Work that cannot stop midway (parsing a file): cancelling drops its result at once
        // and frees the channel; `onDropped` then runs on the GUI thread.
        bool dropOnCancel = false;
        std::function<void()> onDropped;
    };

    explicit JobRunner(QObject* parent = nullptr);
    ~JobRunner() override;  // shutdown()

    // Runs `work(const Control&)` on its own thread, then `deliver(result)` on this object's
    // thread, unless a newer job of (owner, channel) started or `owner` is gone. A job
    // cancelled by the user still delivers: its work returns what it has (usually a
    // Cancelled status) and the owner says so. Returns the job's id, or -1 after shutdown().
    template <class Work, class Deliver>
    int start(QObject* owner, const QString& channel, const QString& label, Work work, Deliver deliver,
              Options options = {}) {
        using R = std::invoke_result_t<Work&, const Control&>;
        auto result = std::make_shared<std::optional<R>>();
        return startErased(
            owner, channel, label, [work = std::move(work), result](const Control& c) mutable { result->emplace(work(c)); },
            [deliver = std::move(deliver), result]() mutable { deliver(std::move(**result)); }, std::move(options));
    }

    // The user's cancel: the work sees cancelled(); it still delivers unless dropOnCancel.
    void cancel(int id);
    void cancel(const QObject* owner, const QString& channel);
    void cancelAll();
    // The owner's own: the channel's job is cancelled and its result dropped (the question
    // changed, e.g. another node was selected, or a view left the graph it was working on).
    void discard(const QObject* owner, const QString& channel);
    // A job of the channel has started and not yet delivered or been dropped.
    bool busy(const QObject* owner, const QString& channel) const;
    bool busy() const { return !m_jobs.empty(); }
    // Cancels everything, waits for every thread and refuses new jobs; results are dropped.
    void shutdown();

signals:
    void started(int id, QString label);
    void progressed(int id, int percent);
    void ended(int id);  // delivered, dropped, or replaced: the status bar stops showing it

private:
    using Channel = std::pair<const QObject*, QString>;
    struct Job;
    int startErased(QObject* owner, const QString& channel, const QString& label,
                    std::function<void(const Control&)> work, std::function<void()> deliver, Options options);
    void launch(const std::shared_ptr<Job>& job);
    void finished(const std::shared_ptr<Job>& job);  // its work returned (GUI thread)
    void threadEnded(const std::shared_ptr<Job>& job);
    void drop(const std::shared_ptr<Job>& job);      // ends it without delivering
    void cancelJob(const std::shared_ptr<Job>& job, bool userCancel);

    std::map<int, std::shared_ptr<Job>> m_jobs;        // started, not yet ended
    std::map<Channel, int> m_newest;                    // the job whose result a channel wants
    std::map<Channel, std::shared_ptr<Job>> m_waiting;  // afterPrevious jobs not yet launched
    std::map<Channel, int> m_threadsRunning;            // per channel, for afterPrevious
    std::map<QThread*, std::shared_ptr<Job>> m_threads;
    int m_nextId = 1;
    bool m_shutDown = false;
};

}  // namespace fsc
