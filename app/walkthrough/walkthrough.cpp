#include "app/walkthrough/walkthrough.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "app/walkthrough/walkthrough_chapters.h"
#include "app/walkthrough/walkthrough_figures.h"
#include "profiler/xml_escape.h"

namespace fsc {
const std::vector<ChapterEntry>& walkthroughContents() {
    static const std::vector<ChapterEntry> contents = {
        {1, "From framework to ONNX to IR"},
        {2, "Eager vs compiled"},
        {3, "The passes, one by one"},
        {4, "Fusion"},
        {5, "Lowering and kernels"},
        {6, "Memory planning"},
        {7, "Graph breaks"},
        {8, "Quantization"},
        {9, "Tensor vs pipeline parallelism"},
        {10, "Benchmarking honestly"},
    };
    return contents;
}

Result<WalkthroughChapter> walkthroughChapter(int id, const WalkthroughInput& input) {
    const auto& contents = walkthroughContents();
    auto entry = std::find_if(contents.begin(), contents.end(), [id](const ChapterEntry& e) { return e.id == id; });
    if (entry == contents.end())
        return Status(ErrorCode::InvalidArgument, "there is no chapter " + std::to_string(id) + " (1 to 10)");
    if (!input.session.model() || !input.session.compiledResult())
        return Status(ErrorCode::InvalidArgument, "the walkthrough needs a model opened and compiled");
    using ChapterFunction = WalkthroughChapter (*)(const WalkthroughInput&);
    static const ChapterFunction functions[] = {modelChapter,        eagerChapter,   passesChapter, fusionChapter,
                                                loweringChapter,     memoryChapter,  breaksChapter, quantizationChapter,
                                                parallelChapter,     benchmarkingChapter};
    WalkthroughChapter chapter = functions[id - 1](input);
    if (cancelled(input)) return Status(ErrorCode::Cancelled, "the walkthrough was cancelled");
    chapter.id = id;
    chapter.title = entry->title;
    addPrediction(chapter);
    return chapter;
}

nlohmann::json walkthroughJson(const std::vector<WalkthroughChapter>& chapters, const std::string& model) {
    nlohmann::json j;
    j["schema"] = kWalkthroughSchema;
    j["model"] = model;
    j["chapters"] = nlohmann::json::array();
    for (const WalkthroughChapter& c : chapters) {
        nlohmann::json cj = {{"id", c.id}, {"title", c.title}, {"paragraphs", c.paragraphs}, {"figures", c.figures}};
        if (!c.question.empty()) cj["question"] = c.question, cj["answer"] = c.answer;
        if (!c.notApplicable.empty()) cj["not_applicable"] = c.notApplicable;
        if (!c.timingWarning.empty()) cj["timing_warning"] = c.timingWarning;
        j["chapters"].push_back(std::move(cj));
    }
    return j;
}

std::string walkthroughChapterHtml(const WalkthroughChapter& c, const std::function<std::string(size_t)>& chartImage) {
    std::ostringstream out;
    out << "<h2 id=\"chapter-" << c.id << "\">" << c.id << ". " << escapeXml(c.title) << "</h2>\n";
    if (!c.question.empty()) {
        // A page can hide the answer until asked (<details>); the dock's viewer has no such
        // element, so it shows both, the answer in italics after the question.
        out << "<p class=\"predict\"><b>Predict first:</b> " << escapeXml(c.question) << "</p>\n";
        if (chartImage)
            out << "<p class=\"answer\"><i>On this model: " << escapeXml(c.answer) << "</i></p>\n";
        else
            out << "<details class=\"answer\"><summary>Reveal this model's answer</summary><p>" << escapeXml(c.answer)
                << "</p></details>\n";
    }
    for (const std::string& p : c.paragraphs) out << "<p>" << escapeXml(p) << "</p>\n";
    if (!c.notApplicable.empty()) out << "<p class=\"na\">" << escapeXml(c.notApplicable) << "</p>\n";
    out << "<h3>This model</h3>\n";
    if (!c.timingWarning.empty()) out << "<p class=\"warning\">Warning: " << escapeXml(c.timingWarning) << "</p>\n";
    writeFiguresHtml(out, c.figures);
    for (size_t i = 0; i < c.charts.size(); ++i) {
        const std::string picture = chartImage ? "<img src=\"" + escapeXml(chartImage(i)) + "\">" : c.charts[i].svg;
        out << "\n<figure>" << picture << "<figcaption>" << escapeXml(c.charts[i].caption) << "</figcaption></figure>";
    }
    out << "\n";
    return out.str();
}

std::string walkthroughHtml(const std::vector<WalkthroughChapter>& chapters, const std::string& model) {
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Walkthrough: " << escapeXml(model)
        << "</title>\n<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.45}"
           "table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #ccc;padding:2px 6px;"
           "text-align:left;vertical-align:top;font-size:90%;overflow-wrap:break-word}th{background:#f2f2f2;overflow-wrap:normal}"
           "h2{border-bottom:1px solid #ddd;margin-top:2em}.na{color:#a33}.warning{color:#8a5a00;background:#fff6e0;padding:.3em .5em}figure{margin:1em 0}"
           ".predict{background:#eef4ff;padding:.4em .6em;margin-bottom:0}.answer{background:#f6f9ff;padding:.2em .6em .4em;margin-top:0}"
           "summary{cursor:pointer;color:#2a5db0}td{font-variant-numeric:tabular-nums}.n{white-space:nowrap}"
           "@page{size:A4;margin:14mm}@media screen{.answers{display:none}}@media print{body{max-width:none;margin:0}th,td{font-size:8pt;padding:1px 3px}"
           "details.answer{display:none}h2{break-after:avoid}figure,tr{break-inside:avoid}.answers{break-before:page}}"
           "figcaption{color:#555;font-size:90%}pre{background:#f7f7f7;padding:.5em;overflow:auto;font-size:85%}</style></head><body>\n"
        << "<h1>From model to kernels: " << escapeXml(model) << "</h1>\n<ol>";
    for (const WalkthroughChapter& c : chapters)
        out << "<li value=\"" << c.id << "\"><a href=\"#chapter-" << c.id << "\">" << escapeXml(c.title) << "</a></li>";
    out << "</ol>\n";
    for (const WalkthroughChapter& c : chapters) out << walkthroughChapterHtml(c);
    // On paper a <details> stays shut: the answers go to the end, as in a textbook.
    out << "<section class=\"answers\"><h2>Answers</h2><ol>";
    for (const WalkthroughChapter& c : chapters)
        if (!c.answer.empty()) out << "<li value=\"" << c.id << "\">" << escapeXml(c.answer) << "</li>";
    out << "</ol></section>\n</body></html>\n";
    return out.str();
}

}  // namespace fsc
