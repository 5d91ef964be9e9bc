#include "views/job_runner.h"

#include <QThread>

namespace fsc {

struct JobRunner::Job {
    int id = 0;
    Channel channel;
    QPointer<QObject> owner;
    QString label;
    std::function<void(const Control&)> work;
    std::function<void()> deliver;
    Options options;
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<int>> percent = std::make_shared<std::atomic<int>>(-1);
    bool ended = false;  // ended() was emitted (delivered, dropped or replaced)
};

void JobRunner::Control::progress(size_t done, size_t total) const {
    m_report(int(100 * done / std::max<size_t>(1, total)));
}

JobRunner::JobRunner(QObject* parent) : QObject(parent) {}

JobRunner::~JobRunner() {
    shutdown();
}

int JobRunner::startErased(QObject* owner, const QString& channelName, const QString& label,
                           std::function<void(const Control&)> work, std::function<void()> deliver,
                           Options options) {
    if (m_shutDown) return -1;
    auto job = std::make_shared<Job>();
    job->id = m_nextId++;
    job->channel = {owner, channelName};
    job->owner = owner;
    job->label = label;
    job->work = std::move(work);
    job->deliver = std::move(deliver);
    job->options = std::move(options);
    // The channel's previous job answers a question no longer asked.
    if (auto it = m_newest.find(job->channel); it != m_newest.end())
        if (auto previous = m_jobs.find(it->second); previous != m_jobs.end()) {
            previous->second->cancel->store(true);
            drop(previous->second);
        }
    if (auto waiting = m_waiting.find(job->channel); waiting != m_waiting.end()) {
        drop(waiting->second);
        m_waiting.erase(waiting);
    }
    m_newest[job->channel] = job->id;
    m_jobs[job->id] = job;
    emit started(job->id, label);
    if (job->options.afterPrevious && m_threadsRunning[job->channel] > 0)
        m_waiting[job->channel] = job;
    else
        launch(job);
    return job->id;
}

void JobRunner::launch(const std::shared_ptr<Job>& job) {
    Control control;
    control.m_cancel = job->cancel;
    control.m_report = [this, id = job->id, percent = job->percent](int value) {
        if (percent->exchange(value) == value) return;
        QMetaObject::invokeMethod(this, [this, id, value] {
            if (m_jobs.count(id)) emit progressed(id, value);
        });
    };
    QThread* thread = QThread::create([this, job, control] {
        job->work(control);
        QMetaObject::invokeMethod(this, [this, job] { finished(job); });
    });
    m_threads[thread] = job;
    ++m_threadsRunning[job->channel];
    connect(thread, &QThread::finished, this, [this, thread] {
        auto it = m_threads.find(thread);
        if (it == m_threads.end()) return;  // deleted by shutdown()
        auto ended = it->second;
        m_threads.erase(it);
        thread->deleteLater();
        threadEnded(ended);
    });
    thread->start();
}

void JobRunner::finished(const std::shared_ptr<Job>& job) {
    if (job->ended) return;  // dropped or replaced meanwhile
    const bool wanted = m_newest.count(job->channel) && m_newest[job->channel] == job->id;
    if (wanted) m_newest.erase(job->channel);
    drop(job);  // ended before delivering: whoever the result reaches sees the work done
    if (wanted && job->owner) job->deliver();
}

void JobRunner::threadEnded(const std::shared_ptr<Job>& job) {
    if (--m_threadsRunning[job->channel] > 0) return;
    m_threadsRunning.erase(job->channel);
    auto waiting = m_waiting.find(job->channel);
    if (waiting == m_waiting.end() || m_shutDown) return;
    auto next = waiting->second;
    m_waiting.erase(waiting);
    launch(next);
}

void JobRunner::drop(const std::shared_ptr<Job>& job) {
    if (job->ended) return;
    job->ended = true;
    m_jobs.erase(job->id);
    if (auto it = m_newest.find(job->channel); it != m_newest.end() && it->second == job->id)
        m_newest.erase(it);
    emit ended(job->id);
}

void JobRunner::cancelJob(const std::shared_ptr<Job>& job, bool userCancel) {
    job->cancel->store(true);
    if (auto waiting = m_waiting.find(job->channel); waiting != m_waiting.end() && waiting->second == job) {
        m_waiting.erase(waiting);  // never ran: nothing to deliver
        drop(job);
        return;
    }
    if (!userCancel || job->options.dropOnCancel) {
        drop(job);
        if (userCancel && job->options.onDropped) job->options.onDropped();
    }
}

void JobRunner::cancel(int id) {
    if (auto it = m_jobs.find(id); it != m_jobs.end()) cancelJob(it->second, true);
}

void JobRunner::cancel(const QObject* owner, const QString& channel) {
    if (auto it = m_newest.find({owner, channel}); it != m_newest.end()) cancel(it->second);
}

void JobRunner::cancelAll() {
    const auto jobs = m_jobs;  // a cancel may end its job at once
    for (const auto& [id, job] : jobs) cancelJob(job, true);
}

void JobRunner::discard(const QObject* owner, const QString& channel) {
    if (auto it = m_newest.find({owner, channel}); it != m_newest.end())
        if (auto job = m_jobs.find(it->second); job != m_jobs.end()) cancelJob(job->second, false);
    if (auto waiting = m_waiting.find({owner, channel}); waiting != m_waiting.end()) {
        drop(waiting->second);
        m_waiting.erase(waiting);
    }
}

bool JobRunner::busy(const QObject* owner, const QString& channel) const {
    return m_newest.count({owner, channel}) > 0;
}

void JobRunner::shutdown() {
    m_shutDown = true;
    for (const auto& [id, job] : m_jobs) job->cancel->store(true);
    for (const auto& [thread, job] : m_threads) {
        thread->wait();
        delete thread;
    }
    m_threads.clear();
    m_threadsRunning.clear();
    // Deliveries still queued for this object are dropped with it; until then they find
    // their jobs ended.
    const auto jobs = m_jobs;
    for (const auto& [id, job] : jobs) drop(job);
    m_waiting.clear();
}

}  // namespace fsc
