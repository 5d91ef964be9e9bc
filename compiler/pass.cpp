#include "compiler/pass.h"

namespace fsc {

int PassCounters::rejectedTotal() const {
    int total = 0;
    for (const auto& [reason, count] : rejected) total += count;
    return total;
}

void PassContext::reject(const std::string& pattern, NodeId node, const std::string& reason) {
    ++counters.rejected[reason];
    rejections.push_back({pattern, node, reason});
}

PatternPass::PatternPass(std::string name, std::string description,
                         std::vector<std::unique_ptr<RewritePattern>> patterns, int maxSweeps)
    : m_name(std::move(name)), m_description(std::move(description)),
      m_patterns(std::move(patterns)), m_maxSweeps(maxSweeps) {
    for (const auto& pattern : m_patterns)
        for (const std::string& op : pattern->rootOps()) m_byRootOp[op].push_back(pattern.get());
}

Status PatternPass::run(PassContext& context) {
    Rewriter& rw = context.rewriter;
    for (int sweep = 0; sweep < m_maxSweeps; ++sweep) {
        bool changed = false;
        // Rejections are reported once, from the first sweep; later sweeps would repeat them.
        const bool report = sweep == 0;
        const std::vector<NodeId> order = rw.graph().order();
        for (NodeId anchor : order) {
            if (context.cancelled()) return {ErrorCode::Cancelled, "cancelled"};
            const auto candidates = m_byRootOp.find(rw.graph().node(anchor).opType);
            if (candidates == m_byRootOp.end()) continue;
            for (const RewritePattern* pattern : candidates->second) {
                if (!rw.isLive(anchor)) break;
                MatchResult r = pattern->match(rw, anchor);
                if (r.kind == MatchResult::Kind::Rejected) {
                    if (report) context.reject(pattern->name(), anchor, r.reason);
                    continue;
                }
                if (r.kind != MatchResult::Kind::Matched) continue;
                ++context.counters.matched;
                std::string reason = pattern->apply(rw, r.fields);
                if (rw.commit(pattern->name(), reason)) {
                    ++context.counters.applied;
                    changed = true;
                }
            }
        }
        rw.finish();
        if (!changed) break;
    }
    return Status::ok();
}

std::vector<std::unique_ptr<RewritePattern>> onePattern(std::unique_ptr<RewritePattern> pattern) {
    std::vector<std::unique_ptr<RewritePattern>> patterns;
    patterns.push_back(std::move(pattern));
    return patterns;
}

}  // namespace fsc
