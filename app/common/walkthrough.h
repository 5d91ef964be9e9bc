#pragma once
// The walkthrough: the model-to-GPU pipeline explained chapter by chapter on the loaded
// model, each chapter a few plain paragraphs and the model's own figures. The figures come
// from the functions the other commands report with (inspect's summary, compile's pass
// records), computed on the session when the chapter is asked for: never canned, and never
// a second computation that could drift from what `inspect` or `compile --json` say.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/common/session.h"
#include "core/status.h"

namespace fsc {

inline constexpr const char* kWalkthroughSchema = "fusescope.walkthrough/1";

struct WalkthroughChapter {
    int id = 0;
    std::string title;
    std::vector<std::string> paragraphs;  // the explanation, plain text
    nlohmann::json figures;               // this model's numbers
    // Empty when the chapter applies; else why it shows nothing here and what model would.
    std::string notApplicable;
};

struct ChapterEntry {
    int id;
    const char* title;
    bool written;  // false: planned, not in this build yet
};
// All ten chapters in order, written or not.
const std::vector<ChapterEntry>& walkthroughContents();

// What a chapter is computed from: the session (a model open and compiled) and the name
// its pipeline is reported under.
struct WalkthroughInput {
    const Session& session;
    std::string pipelineName;
};
// Chapter `id` on the session's model. An unknown or unwritten id is an InvalidArgument.
Result<WalkthroughChapter> walkthroughChapter(int id, const WalkthroughInput& input);

// {"schema": ..., "model": ..., "chapters": [{"id", "title", "paragraphs", "figures"
// (, "not_applicable")}]}.
nlohmann::json walkthroughJson(const std::vector<WalkthroughChapter>& chapters, const std::string& model);
// One self-contained page (no scripts, no network): the chapters with their figures as tables.
std::string walkthroughHtml(const std::vector<WalkthroughChapter>& chapters, const std::string& model);

}  // namespace fsc
