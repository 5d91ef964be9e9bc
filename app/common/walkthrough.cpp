#include "app/common/walkthrough.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "app/common/walkthrough_chapters.h"
#include "profiler/xml_escape.h"

namespace fsc {
namespace {

// Strings as they are, fractions to four significant digits, large numbers whole.
std::string scalarText(const nlohmann::json& j) {
    if (j.is_string()) return j.get<std::string>();
    if (!j.is_number_float()) return j.dump();
    const double v = j.get<double>();
    char text[64];
    std::snprintf(text, sizeof text, std::fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
    return text;
}

// Figures as HTML: an object as a two-column table, an array of objects as one table with a
// column per key, anything else as text.
void writeFigures(std::ostringstream& out, const nlohmann::json& j) {
    if (j.is_object()) {
        out << "<table>";
        for (const auto& [key, value] : j.items()) {
            out << "<tr><th>" << escapeXml(key) << "</th><td>";
            writeFigures(out, value);
            out << "</td></tr>";
        }
        out << "</table>";
    } else if (j.is_array() && !j.empty() && j.front().is_object()) {
        std::vector<std::string> columns;
        for (const auto& row : j)
            for (const auto& [key, value] : row.items())
                if (std::find(columns.begin(), columns.end(), key) == columns.end()) columns.push_back(key);
        out << "<table><tr>";
        for (const std::string& col : columns) out << "<th>" << escapeXml(col) << "</th>";
        out << "</tr>";
        for (const auto& row : j) {
            out << "<tr>";
            for (const std::string& col : columns) {
                out << "<td>";
                if (row.contains(col)) writeFigures(out, row[col]);
                out << "</td>";
            }
            out << "</tr>";
        }
        out << "</table>";
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) out << (i ? ", " : "") << escapeXml(scalarText(j[i]));
    } else if (j.is_string() && j.get<std::string>().find('\n') != std::string::npos) {
        out << "<pre>" << escapeXml(j.get<std::string>()) << "</pre>";  // source code
    } else {
        out << escapeXml(scalarText(j));
    }
}

}  // namespace

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
    return chapter;
}

nlohmann::json walkthroughJson(const std::vector<WalkthroughChapter>& chapters, const std::string& model) {
    nlohmann::json j;
    j["schema"] = kWalkthroughSchema;
    j["model"] = model;
    j["chapters"] = nlohmann::json::array();
    for (const WalkthroughChapter& c : chapters) {
        nlohmann::json cj = {{"id", c.id}, {"title", c.title}, {"paragraphs", c.paragraphs}, {"figures", c.figures}};
        if (!c.notApplicable.empty()) cj["not_applicable"] = c.notApplicable;
        if (!c.timingWarning.empty()) cj["timing_warning"] = c.timingWarning;
        j["chapters"].push_back(std::move(cj));
    }
    return j;
}

std::string walkthroughChapterHtml(const WalkthroughChapter& c, const std::function<std::string(size_t)>& chartImage) {
    std::ostringstream out;
    out << "<h2 id=\"chapter-" << c.id << "\">" << c.id << ". " << escapeXml(c.title) << "</h2>\n";
    for (const std::string& p : c.paragraphs) out << "<p>" << escapeXml(p) << "</p>\n";
    if (!c.notApplicable.empty()) out << "<p class=\"na\">" << escapeXml(c.notApplicable) << "</p>\n";
    out << "<h3>This model</h3>\n";
    if (!c.timingWarning.empty()) out << "<p class=\"warning\">Warning: " << escapeXml(c.timingWarning) << "</p>\n";
    writeFigures(out, c.figures);
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
           "text-align:left;vertical-align:top;font-size:90%;overflow-wrap:anywhere}th{background:#f2f2f2}"
           "h2{border-bottom:1px solid #ddd;margin-top:2em}.na{color:#a33}.warning{color:#8a5a00;background:#fff6e0;padding:.3em .5em}figure{margin:1em 0}"
           "figcaption{color:#555;font-size:90%}pre{background:#f7f7f7;padding:.5em;overflow:auto;font-size:85%}</style></head><body>\n"
        << "<h1>From model to kernels: " << escapeXml(model) << "</h1>\n<ol>";
    for (const WalkthroughChapter& c : chapters)
        out << "<li value=\"" << c.id << "\"><a href=\"#chapter-" << c.id << "\">" << escapeXml(c.title) << "</a></li>";
    out << "</ol>\n";
    for (const WalkthroughChapter& c : chapters) out << walkthroughChapterHtml(c);
    out << "</body></html>\n";
    return out.str();
}

}  // namespace fsc
