#include "app/analysis/timed_variant.h"

#include <algorithm>

#include "profiler/cpu_timer.h"

namespace fsc {

Result<TimedVariant> prepareVariant(const Model& model, const Target& target, const FeedOptions& feeds) {
    TimedVariant variant;
    auto exec = Executor::create(model, executorOptions(target));
    if (!exec) return exec.status();
    variant.exec = std::move(*exec);
    auto built = buildFeeds(*variant.exec, feeds);
    if (!built) return built.status();
    variant.feeds = std::move(built->tensors);
    return variant;
}

Result<double> timeOneRun(TimedVariant& variant) {
    std::vector<RtTensor> feeds = variant.feeds;
    Stopwatch watch;
    auto outputs = variant.exec->run(std::move(feeds));
    const double ms = watch.elapsedMs();
    if (!outputs) return outputs.status();
    return ms;
}

Status alternateRounds(const std::vector<TimedVariant*>& variants, int warmup, int rounds, int runsPerRound,
                       const std::atomic<bool>* cancel, const std::function<void(int, int)>& progress, int settle) {
    const int total = int(variants.size()) * (warmup + rounds * (settle + runsPerRound));
    int done = 0;
    auto step = [&](TimedVariant& v, std::vector<double>& into) -> Status {
        if (cancel && cancel->load()) return Status(ErrorCode::Cancelled, "cancelled");
        auto ms = timeOneRun(v);
        if (!ms) return ms.status();
        into.push_back(*ms);
        if (progress) progress(++done, total);
        return Status::ok();
    };
    for (TimedVariant* v : variants)
        for (int i = 0; i < warmup; ++i) FSC_RETURN_IF_ERROR(step(*v, v->warmupMs));
    const size_t n = variants.size();
    for (int r = 0; r < rounds; ++r)
        for (size_t k = 0; k < n; ++k) {
            TimedVariant& v = *variants[(k + size_t(r)) % n];
            std::vector<double> settling, round;
            for (int i = 0; i < settle; ++i) FSC_RETURN_IF_ERROR(step(v, settling));
            for (int i = 0; i < runsPerRound; ++i) FSC_RETURN_IF_ERROR(step(v, round));
            v.samplesMs.insert(v.samplesMs.end(), round.begin(), round.end());
            v.roundMediansMs.push_back(computeStats(round).median);
        }
    return Status::ok();
}

std::vector<double> roundRatios(const std::vector<double>& roundMediansMs, const std::vector<double>& againstRoundMediansMs) {
    std::vector<double> ratios;
    for (size_t r = 0; r < roundMediansMs.size() && r < againstRoundMediansMs.size(); ++r)
        if (againstRoundMediansMs[r] > 0) ratios.push_back(roundMediansMs[r] / againstRoundMediansMs[r]);
    return ratios;
}

RoundRatios summarizeRoundRatios(const std::vector<double>& roundMediansMs,
                                 const std::vector<double>& againstRoundMediansMs) {
    RoundRatios r;
    r.ratios = roundRatios(roundMediansMs, againstRoundMediansMs);
    if (r.ratios.empty()) return r;
    r.lowest = *std::min_element(r.ratios.begin(), r.ratios.end());
    r.highest = *std::max_element(r.ratios.begin(), r.ratios.end());
    r.median = computeStats(r.ratios).median;
    return r;
}

}  // namespace fsc
