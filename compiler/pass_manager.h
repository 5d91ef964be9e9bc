#pragma once
// Runs a pipeline of passes over a model, keeping a snapshot of the graph after every
// pass, the time each took, its counters, change records and rejections. The result is
// immutable: the GUI steps through it, the CLI prints and dumps it.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/fused_domain.h"
#include "compiler/graph_snapshot.h"
#include "compiler/pass.h"
#include "compiler/rewriter.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct PassReport {
    std::string name;
    std::string description;
    double milliseconds = 0;
    size_t nodesBefore = 0;
    size_t nodesAfter = 0;
    PassCounters counters;
    std::vector<ChangeRecord> changes;
    std::vector<Rejection> rejections;
    std::shared_ptr<const GraphSnapshot> snapshot;  // the graph after this pass
};

struct CompileTrace {
    std::shared_ptr<const GraphSnapshot> imported;  // before the first pass
    std::vector<PassReport> passes;
    double totalMilliseconds = 0;
};

struct CompileOptions {
    bool verifyEachPass = false;  // run the verifier after each pass (tests, --verify)
    bool keepSnapshots = true;
    const std::atomic<bool>* cancel = nullptr;
    // Called before each pass: index, count, name.
    std::function<void(size_t, size_t, const std::string&)> progress;
};

struct CompileResult {
    Model model;  // the compiled model (the custom domain declared when used)
    CompileTrace trace;
};

// Compiles a copy of `model` with the named passes (from PassRegistry::builtin()). A pass
// that fails, or a graph the verifier rejects, is an error naming the pass.
Result<CompileResult> compileModel(const Model& model, const std::vector<std::string>& passes,
                                   const CompileOptions& options = {});
// The same with pass objects made by the caller (a pass configured differently from its
// registered default, such as a precision pass with its own keep-in-float32 list).
Result<CompileResult> compileModel(const Model& model, std::vector<std::unique_ptr<Pass>> passes,
                                   const CompileOptions& options = {});

}  // namespace fsc
