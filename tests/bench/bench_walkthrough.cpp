// The walkthrough's cost per chapter: seconds to compute each of the ten chapters on a
// model (import and O2 compile first), the total against the 60 s budget the issue sets for
// a BERT-base encoder on a 2-core machine, and the total as a number of the compiled
// model's own inferences, timed in this process (the reference).
// usage: bench_walkthrough MODEL.onnx [--chapters 1,2,...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "compiler/target.h"
#include "app/common/session.h"
#include "compiler/runtime/thread_pool.h"
#include "app/walkthrough/walkthrough.h"
#include "compiler/pipelines.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "core/comma_list.h"

using namespace fsc;

namespace {

template <typename F>
double seconds(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    std::string model;
    std::vector<int> chapters;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--chapters" && i + 1 < argc) {
            for (const std::string& c : splitCommaList(argv[++i])) chapters.push_back(std::atoi(c.c_str()));
        } else {
            model = a;
        }
    }
    if (model.empty()) {
        std::fprintf(stderr, "usage: bench_walkthrough MODEL.onnx [--chapters 1,2,...]\n");
        return 64;
    }
    if (chapters.empty())
        for (const ChapterEntry& e : walkthroughContents()) chapters.push_back(e.id);
    Session session;
    double setup = seconds([&] {
        if (Status s = session.open(model); !s) std::fprintf(stderr, "error: %s\n", s.message().c_str()), std::exit(2);
        if (Status s = session.compile({.passes = *pipelinePasses("O2")}); !s)
            std::fprintf(stderr, "error: %s\n", s.message().c_str()), std::exit(2);
    });
    // The reference: one warmed inference of the compiled model on every core.
    auto exec = Executor::create(*session.compiledModel(), cpuExecutorOptions(ThreadPool::kAutomatic));
    auto feeds = exec ? buildFeeds(**exec, FeedOptions{}) : Result<Feeds>(exec.status());
    double inference = 0;
    if (feeds) {
        for (int i = 0; i < 2; ++i) (void)(*exec)->run(feeds->tensors);
        std::vector<double> runs;
        for (int i = 0; i < 5; ++i) runs.push_back(seconds([&] { (void)(*exec)->run(feeds->tensors); }));
        std::sort(runs.begin(), runs.end());
        inference = runs[runs.size() / 2];
    }
    std::printf("%-34s %9s\n", "step", "seconds");
    std::printf("%-34s %9.2f\n", "import + O2 compile", setup);
    double total = setup;
    const WalkthroughInput input{.session = session, .pipelineName = "O2"};
    for (int id : chapters) {
        std::string title;
        bool applies = true;
        const double s = seconds([&] {
            auto c = walkthroughChapter(id, input);
            if (!c) std::fprintf(stderr, "chapter %d: %s\n", id, c.status().message().c_str()), std::exit(2);
            title = c->title;
            applies = c->notApplicable.empty();
        });
        total += s;
        std::printf("%2d. %-30s %9.2f%s\n", id, title.substr(0, 30).c_str(), s, applies ? "" : "  (does not apply)");
    }
    std::printf("%-34s %9.2f  (%.2fx the 60 s budget", "total", total, total / 60.0);
    if (inference > 0) std::printf("; %.0f inferences of %.1f ms", total / inference, inference * 1e3);
    std::printf(")\n");
    return 0;
}
