#include "core/einsum_equation.h"

#include <algorithm>
#include <map>

namespace fsc {
namespace {

bool isLabel(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool validTerm(const std::string& term) {
    const size_t dots = term.find("...");
    if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos) return false;
    for (size_t i = 0; i < term.size(); ++i) {
        if (i == dots) {
            i += 2;
            continue;
        }
        if (!isLabel(term[i])) return false;
    }
    return true;
}

// "ab...c" with `broadcast` labels for its dots, the last `broadcast` of the `widest`.
std::string expand(const std::string& term, size_t broadcast, size_t widest) {
    const size_t dots = term.find("...");
    if (dots == std::string::npos) return term;
    std::string fill;
    for (size_t k = widest - broadcast; k < widest; ++k) fill += char('0' + k);
    return term.substr(0, dots) + fill + term.substr(dots + 3);
}

size_t namedLabels(const std::string& term) {
    return term.find("...") == std::string::npos ? term.size() : term.size() - 3;
}

}  // namespace

std::optional<EinsumEquation> parseEinsumEquation(std::string_view text) {
    std::string eq;
    for (char c : text)
        if (c != ' ') eq += c;
    EinsumEquation out;
    const size_t arrow = eq.find("->");
    if (arrow != std::string::npos) {
        out.output = eq.substr(arrow + 2);
        out.explicitOutput = true;
        if (!validTerm(out.output)) return std::nullopt;
    }
    const std::string lhs = eq.substr(0, arrow);
    if (lhs.empty()) return std::nullopt;
    size_t start = 0;
    while (true) {
        const size_t comma = lhs.find(',', start);
        out.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!validTerm(out.inputs.back())) return std::nullopt;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

std::optional<EinsumLabels> labelEinsum(const EinsumEquation& equation, const std::vector<size_t>& ranks) {
    if (ranks.size() != equation.inputs.size()) return std::nullopt;
    std::vector<size_t> broadcast(ranks.size(), 0);
    size_t widest = 0;
    for (size_t i = 0; i < ranks.size(); ++i) {
        const std::string& term = equation.inputs[i];
        const size_t named = namedLabels(term);
        const bool dots = named != term.size();
        if (ranks[i] < named || (!dots && ranks[i] != named)) return std::nullopt;
        broadcast[i] = ranks[i] - named;
        widest = std::max(widest, broadcast[i]);
    }
    if (widest > 10) return std::nullopt;
    EinsumLabels labels;
    for (size_t i = 0; i < ranks.size(); ++i) labels.inputs.push_back(expand(equation.inputs[i], broadcast[i], widest));
    std::map<char, int> uses;
    for (const std::string& term : labels.inputs)
        for (char c : term) ++uses[c];
    if (equation.explicitOutput) {
        // NumPy refuses broadcast dims that the output does not name with "...".
        if (equation.output.find("...") == std::string::npos && widest > 0) return std::nullopt;
        labels.output = expand(equation.output, widest, widest);
        for (char c : labels.output)
            if (!uses.count(c)) return std::nullopt;
    } else {
        for (size_t k = 0; k < widest; ++k) labels.output += char('0' + k);
        for (const auto& [c, n] : uses)
            if (n == 1 && isLabel(c)) labels.output += c;
    }
    return labels;
}

std::optional<Shape> einsumShape(const EinsumLabels& labels, const std::vector<const Shape*>& inputs) {
    if (inputs.size() != labels.inputs.size()) return std::nullopt;
    std::map<char, Dim> size;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i] || !inputs[i]->rankKnown() || inputs[i]->rank() != labels.inputs[i].size()) return std::nullopt;
        for (size_t d = 0; d < labels.inputs[i].size(); ++d) {
            const Dim& dim = (*inputs[i])[d];
            auto [it, added] = size.emplace(labels.inputs[i][d], dim);
            if (added || dim == it->second || (dim.isKnown() && dim.size() == 1)) continue;
            Dim& have = it->second;
            if (have.isKnown() && have.size() == 1) have = dim;
            else if (dim.isKnown() && have.isKnown()) return std::nullopt;  // 3 against 4
            else if (dim.isKnown()) have = dim;  // a number says more than a name
            else if (!have.isKnown() && !(have == dim)) have = Dim();
        }
    }
    std::vector<Dim> dims;
    for (char c : labels.output) dims.push_back(size.at(c));
    return Shape(std::move(dims));
}

}  // namespace fsc
