#include "app/cli/summary_text.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/units.h"

namespace fsc::cli {

std::string summaryToText(const ModelSummary& s, const std::string& file) {
    std::ostringstream os;
    os << file << "\n";
    os << "  IR version    " << s.irVersion << "\n";
    os << "  opsets        ";
    for (size_t i = 0; i < s.opsets.size(); ++i)
        os << (i ? ", " : "") << (s.opsets[i].first.empty() ? "ai.onnx" : s.opsets[i].first) << " "
           << s.opsets[i].second;
    os << "\n  producer      " << (s.producerName.empty() ? "(none)" : s.producerName) << " "
       << s.producerVersion << "\n";
    for (const auto& p : s.inputs) os << "  input         " << p.name << "  " << p.type.toString() << "\n";
    for (const auto& p : s.outputs) os << "  output        " << p.name << "  " << p.type.toString() << "\n";
    os << "  nodes         " << s.nodeCount << " top level, " << s.totalNodeCount
       << " including subgraphs\n";
    os << "  parameters    " << groupedDigits(uint64_t(s.parameterCount)) << " (" << bytesText(double(s.parameterBytes)) << ") in "
       << s.initializerCount << " initializers and " << s.constantNodeCount << " Constant nodes\n";
    os << "  subgraphs     " << s.subgraphCount << " (max depth " << s.maxSubgraphDepth << ")\n";
    if (s.functionCount) os << "  functions     " << s.functionCount << "\n";
    std::vector<std::pair<std::string, size_t>> ops(s.opHistogram.begin(), s.opHistogram.end());
    std::stable_sort(ops.begin(), ops.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    os << "  op types      " << ops.size() << "\n";
    for (const auto& [op, count] : ops) os << "    " << count << "\t" << op << "\n";
    os << "  unknown shapes " << s.unknownShapeValues.size() << " (" << s.unknownRankValues << " of unknown rank, "
       << s.unnamedDimValues << " with an unnamed dim)\n";
    const size_t shown = std::min<size_t>(s.unknownShapeValues.size(), 20);
    for (size_t i = 0; i < shown; ++i) os << "    " << s.unknownShapeValues[i] << "\n";
    if (shown < s.unknownShapeValues.size())
        os << "    ... and " << s.unknownShapeValues.size() - shown << " more (see --json)\n";
    for (const auto& w : s.warnings) os << "  warning: " << w << "\n";
    return os.str();
}

}  // namespace fsc::cli
