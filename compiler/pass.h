#pragma once
// What a compiler pass is: a named step that edits a graph only through a Rewriter and
// counts what it did. Most passes are a set of RewritePatterns, each a const match() that
// finds a candidate (or says why a candidate is rejected) kept apart from apply().
#include <any>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/rewriter.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct PassCounters {
    int matched = 0;  // candidates whose match succeeded
    int applied = 0;  // edits made (a match may be applied, or an analysis may count here)
    std::map<std::string, int> rejected;  // reason -> count
    std::map<std::string, double> figures;  // analyses' results (arena bytes, ...)
    int rejectedTotal() const;
};

// A candidate that matched a pattern's shape but failed one of its guards.
struct Rejection {
    std::string pattern;
    NodeId node;
    std::string reason;
};

struct PassContext {
    Rewriter& rewriter;
    PassCounters& counters;
    std::vector<Rejection>& rejections;
    const Model& model;  // opsets, path (the graph is the rewriter's)
    const std::atomic<bool>* cancel = nullptr;
    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
    void reject(const std::string& pattern, NodeId node, const std::string& reason);
};

class Pass {
public:
    virtual ~Pass() = default;
    virtual std::string name() const = 0;         // stable kebab-case, e.g. "conv-bn-fusion"
    virtual std::string description() const = 0;  // one line
    virtual Status run(PassContext& context) = 0;
};

// What a pattern's match() says of one anchor: nothing there, a candidate rejected with a
// reason, or a match carrying the pattern's own typed fields (see TypedPattern).
struct MatchResult {
    enum class Kind { None, Matched, Rejected };
    Kind kind = Kind::None;
    std::any fields;     // the pattern's match type, when matched
    std::string reason;  // why a candidate was rejected
    static MatchResult none() { return {}; }
    static MatchResult rejected(std::string why) { return {Kind::Rejected, {}, std::move(why)}; }
    template <typename Fields>
    static MatchResult matched(Fields fields) {
        return {Kind::Matched, std::any(std::move(fields)), {}};
    }
};

class RewritePattern {
public:
    virtual ~RewritePattern() = default;
    virtual std::string name() const = 0;
    // The op types a match can be anchored at (the pattern's last node); PatternPass asks
    // only anchors of these types.
    virtual std::set<std::string> rootOps() const = 0;
    // Looks at the live node `anchor` without editing.
    virtual MatchResult match(const Rewriter& rewriter, NodeId anchor) const = 0;
    // Rewrites a match (the fields match() returned); returns the reason recorded.
    virtual std::string apply(Rewriter& rewriter, const std::any& fields) const = 0;
};

// A pattern whose match is a struct of its own, with named fields (the nodes it covers,
// the values and numbers the rewrite needs): match() returns MatchResult::matched(Fields{..})
// and rewrite() gets the same struct back.
template <typename Fields>
class TypedPattern : public RewritePattern {
public:
    std::string apply(Rewriter& rewriter, const std::any& fields) const final {
        return rewrite(rewriter, std::any_cast<const Fields&>(fields));
    }

protected:
    virtual std::string rewrite(Rewriter& rewriter, const Fields& match) const = 0;
};

// Runs its patterns over the graph in order, applying each match at once, and sweeps
// again while anything changed (at most `maxSweeps` times). Patterns are indexed by root
// op type: an anchor is offered only to the patterns that can end at its op.
class PatternPass : public Pass {
public:
    PatternPass(std::string name, std::string description,
                std::vector<std::unique_ptr<RewritePattern>> patterns, int maxSweeps = 8);
    std::string name() const override { return m_name; }
    std::string description() const override { return m_description; }
    Status run(PassContext& context) override;

private:
    std::string m_name, m_description;
    std::vector<std::unique_ptr<RewritePattern>> m_patterns;
    std::map<std::string, std::vector<const RewritePattern*>> m_byRootOp;  // in m_patterns' order
    int m_maxSweeps;
};

// The pattern list of a pass with a single pattern.
std::vector<std::unique_ptr<RewritePattern>> onePattern(std::unique_ptr<RewritePattern> pattern);

}  // namespace fsc
