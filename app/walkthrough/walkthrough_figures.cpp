#include "app/walkthrough/walkthrough_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "core/units.h"
#include "profiler/xml_escape.h"

namespace fsc {
namespace {

bool endsWith(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Keys written by the schema: lower case words joined by underscores.
bool schemaKey(const std::string& key) {
    return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// Objects whose keys are data (op types, scopes, libraries, reasons, interconnects).
bool keysAreData(const std::string& key) {
    static const std::set<std::string> maps = {"op_histogram", "top_level_scopes", "host_ops", "simulated_us", "rejected"};
    return maps.count(key) || contains(key, "by_");
}

std::string significant(double v, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    return text;
}

// A count or a large figure: whole, with separators; a fraction: three significant digits.
std::string numberText(double v) {
    if (std::fabs(v) >= 1000 || (v == std::floor(v) && std::fabs(v) < 1e15)) {
        const std::string digits = groupedDigits(uint64_t(std::llround(std::fabs(v))));
        return v < 0 ? "-" + digits : digits;
    }
    return significant(v, 3);
}

}  // namespace

std::string figureLabel(const std::string& key) {
    if (!schemaKey(key)) return key;
    if (key == "ms" || key == "us") return "Time";
    std::string words = key;
    for (const char* unit : {"_ms", "_us"})
        if (endsWith(words, unit)) words.resize(words.size() - 3);
    for (const char* unit : {"ms_", "us_"})  // ms_before: the time before
        if (words.rfind(unit, 0) == 0) words = "time_" + words.substr(3);
    static const std::map<std::string, std::string> acronyms = {
        {"ir", "IR"}, {"cpu", "CPU"}, {"gpu", "GPU"}, {"cuda", "CUDA"}, {"onnx", "ONNX"}, {"int8", "INT8"}, {"id", "ID"}};
    std::string label;
    std::istringstream parts(words);
    for (std::string word; std::getline(parts, word, '_');) {
        if (auto it = acronyms.find(word); it != acronyms.end()) word = it->second;
        label += (label.empty() ? "" : " ") + word;
    }
    // A percentile stays as statisticians write it: p50, p90, p99.
    const bool percentile = label.size() > 1 && label[0] == 'p' && std::isdigit(static_cast<unsigned char>(label[1]));
    if (!label.empty() && !percentile) label[0] = char(std::toupper(static_cast<unsigned char>(label[0])));
    return label;
}

std::string figureValueText(const std::string& key, const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
    if (!value.is_number()) return value.dump();
    const double v = value.get<double>();
    if (endsWith(key, "_ms") || key == "ms" || key.rfind("ms_", 0) == 0) return durationText(v);
    if (endsWith(key, "_us") || key == "us" || key.rfind("us_", 0) == 0) return durationText(v / 1000);
    if (endsWith(key, "bytes_per_second")) return bandwidthText(v);
    if (endsWith(key, "gflops_per_second")) return significant(v, 3) + " GFLOP/s";
    if (endsWith(key, "flops_per_second")) return significant(v / 1e9, 3) + " GFLOP/s";
    if (contains(key, "bytes")) return bytesText(v);
    if (contains(key, "share") || contains(key, "fraction") || contains(key, "of_attainable"))
        return significant(v * 100, 3) + "%";
    if (key == "speedup" || contains(key, "vs_") || contains(key, "_over_") || key == "stage_balance")
        return significant(v, 3) + "x";
    if (key == "cosine") return significant(v, 8);
    if (contains(key, "cosine") || contains(key, "difference") || contains(key, "error") || key == "max_abs")
        return significant(v, 3);
    return numberText(v);
}

namespace {

// Escaped text a table cell may wrap inside long names at their separators
// (/layers.11/linear1/MatMul, FusedMatMul.float32.epilogue) and nowhere else, so that
// "compute" never reads "comput e" in a narrow column.
std::string breakableText(const std::string& text) {
    const std::string escaped = escapeXml(text);  // its entities hold no separator
    std::string out;
    for (size_t i = 0; i < escaped.size(); ++i) {
        out += escaped[i];
        const bool separator = escaped[i] == '/' || escaped[i] == '.' || escaped[i] == '_';
        if (separator && i + 1 < escaped.size() && escaped[i + 1] != ' ') out += "<wbr>";
    }
    return out;
}

// Tables and lists longer than this show their first rows or items only.
constexpr size_t kMostRows = 30, kRowsOfALongSeries = 10;

bool emptyFigure(const nlohmann::json& j) {
    return j.is_null() || ((j.is_array() || j.is_object()) && j.empty());
}

void writeValue(std::ostringstream& out, const std::string& key, const nlohmann::json& j, bool dataKeys);

// A table of items leads with their name: the first field that is text in every item, the
// usual names first (a pass table reads "Name, Nodes before, ..." rather than "Applied, ...").
void nameColumnFirst(std::vector<std::string>& columns, const nlohmann::json& items) {
    auto textEverywhere = [&](const std::string& col) {
        return std::all_of(items.begin(), items.end(), [&](const nlohmann::json& row) {
            return row.contains(col) && row[col].is_string();
        });
    };
    auto named = columns.end();
    for (const char* key : {"name", "partition", "precision", "fused_op", "pass", "node", "op"})
        if (named == columns.end() && textEverywhere(key)) named = std::find(columns.begin(), columns.end(), key);
    if (named == columns.end()) named = std::find_if(columns.begin(), columns.end(), textEverywhere);
    if (named != columns.end()) std::rotate(columns.begin(), named, named + 1);
}

// `parentKey`: the key the object sits under; a map of data keys formats its values by it
// ("simulated_us": {"nvlink4": 10.1} reads "10.1 µs").
void writeObject(std::ostringstream& out, const std::string& parentKey, const nlohmann::json& j, bool dataKeys) {
    out << "<table>";
    for (const auto& [key, value] : j.items()) {
        if (key == "schema" || emptyFigure(value)) continue;  // no schema names, no empty fields
        out << "<tr><th>" << escapeXml(dataKeys ? key : figureLabel(key)) << "</th><td>";
        writeValue(out, dataKeys ? parentKey : key, value, !dataKeys && keysAreData(key));
        out << "</td></tr>";
    }
    out << "</table>";
}

void writeValue(std::ostringstream& out, const std::string& key, const nlohmann::json& j, bool dataKeys) {
    if (j.is_object()) {
        writeObject(out, key, j, dataKeys);
    } else if (j.is_array() && !j.empty() && j.front().is_object()) {
        std::vector<std::string> columns;
        for (const auto& row : j)
            for (const auto& [col, value] : row.items())
                if (!emptyFigure(value) && std::find(columns.begin(), columns.end(), col) == columns.end())
                    columns.push_back(col);
        nameColumnFirst(columns, j);
        if (columns.size() > 6 && j.size() < columns.size() && j.size() <= 6) {
            // Many fields of a few items (chapter 9's partitions): one row per field, one column
            // per item, so a narrow dock does not squeeze a dozen headers into letters.
            out << "<table><tr><th>" << escapeXml(figureLabel(columns.front())) << "</th>";
            for (const auto& row : j) {
                out << "<th>";
                if (row.contains(columns.front())) writeValue(out, columns.front(), row[columns.front()], false);
                out << "</th>";
            }
            out << "</tr>";
            for (size_t c = 1; c < columns.size(); ++c) {
                out << "<tr><th>" << escapeXml(figureLabel(columns[c])) << "</th>";
                for (const auto& row : j) {
                    out << "<td>";
                    if (row.contains(columns[c]) && !emptyFigure(row[columns[c]]))
                        writeValue(out, columns[c], row[columns[c]], keysAreData(columns[c]));
                    out << "</td>";
                }
                out << "</tr>";
            }
            out << "</table>";
            return;
        }
        out << "<table><tr>";
        for (const std::string& col : columns) out << "<th>" << escapeXml(figureLabel(col)) << "</th>";
        out << "</tr>";
        // A long series (chapter 6's live bytes at each of hundreds of steps) is drawn by its
        // chart; the page shows its start, the JSON all of it.
        const size_t shown = j.size() > kMostRows ? kRowsOfALongSeries : j.size();
        for (size_t r = 0; r < shown; ++r) {
            const nlohmann::json& row = j[r];
            out << "<tr>";
            for (const std::string& col : columns) {
                out << "<td>";
                if (row.contains(col) && !emptyFigure(row[col])) writeValue(out, col, row[col], keysAreData(col));
                out << "</td>";
            }
            out << "</tr>";
        }
        if (shown < j.size())
            out << "<tr><td colspan=\"" << columns.size() << "\">and " << groupedDigits(j.size() - shown)
                << " more rows (walkthrough --json gives them all)</td></tr>";
        out << "</table>";
    } else if (j.is_array()) {  // a list of names or figures; a long one (a region's nodes) by its start
        const size_t shown = j.size() > kMostRows ? kRowsOfALongSeries : j.size();
        for (size_t i = 0; i < shown; ++i)
            out << (i ? ", " : "") << "<span class=\"n\">" << escapeXml(figureValueText(key, j[i])) << "</span>";
        if (shown < j.size()) out << " and " << groupedDigits(j.size() - shown) << " more (walkthrough --json gives them all)";
    } else if (j.is_string() && j.get<std::string>().find('\n') != std::string::npos) {
        out << "<pre>" << escapeXml(j.get<std::string>()) << "</pre>";  // source code
    } else if (j.is_number()) {  // a figure never wraps inside its digits or from its unit
        out << "<span class=\"n\">" << escapeXml(figureValueText(key, j)) << "</span>";
    } else {
        out << breakableText(figureValueText(key, j));
    }
}

}  // namespace

void writeFiguresHtml(std::ostringstream& out, const nlohmann::json& figures) {
    writeValue(out, std::string(), figures, false);
}

}  // namespace fsc
