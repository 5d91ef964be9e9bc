#include "compiler/runtime/capability_table.h"

#include "core/parse_int.h"

#include "core/comma_list.h"

#include <fstream>
#include <optional>
#include <sstream>

namespace fsc {


namespace {

std::string key(const std::string& domain, const std::string& op) {
    return domain.empty() || domain == "ai.onnx" ? op : domain + "::" + op;
}

// The dtype whose dump name is `name` (float32, int64, ...).
std::optional<DType> dtypeNamed(const std::string& name) {
    for (int32_t i = 1; i <= 22; ++i)
        if (auto t = dtypeFromOnnx(i); t && dtypeName(*t) == name) return t;
    return std::nullopt;
}

}  // namespace

Result<CapabilityTable> CapabilityTable::parse(const std::string& text, const std::string& source) {
    CapabilityTable table;
    table.m_name = source;
    std::istringstream lines(text);
    int lineNo = 0;
    for (std::string line; std::getline(lines, line);) {
        ++lineNo;
        if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        std::istringstream words(line);
        std::string op, dtypes;
        if (!(words >> op)) continue;
        const std::string where = source + ":" + std::to_string(lineNo) + ": ";
        if (!(words >> dtypes)) return Status(ErrorCode::InvalidArgument, where + op + " has no dtype column");
        OpCapability cap;
        if (dtypes == "*") cap.anyDType = true;
        else if (dtypes != "-")
            for (const std::string& name : splitCommaList(dtypes)) {
                auto t = dtypeNamed(name);
                if (!t) return Status(ErrorCode::InvalidArgument, where + "unknown dtype '" + name + "'");
                cap.dtypes.insert(*t);
            }
        for (std::string flag; words >> flag;) {
            if (flag == "data-dependent-shape") cap.dataDependentShape = true;
            else if (flag == "host-control-flow") cap.hostControlFlow = true;
            else if (flag.rfind("shape-input=", 0) == 0) {
                for (const std::string& k : splitCommaList(flag.substr(12))) {
                    const auto input = parseInt64(k);
                    if (!input || *input < 0 || *input > 64)
                        return Status(ErrorCode::InvalidArgument, where + "shape-input needs input numbers, not '" + k + "'");
                    cap.shapeInputs.insert(int(*input));
                }
            } else {
                return Status(ErrorCode::InvalidArgument, where + "unknown flag '" + flag + "'");
            }
        }
        const auto sep = op.find("::");
        const std::string k = sep == std::string::npos ? op : key(op.substr(0, sep), op.substr(sep + 2));
        if (!table.m_ops.emplace(k, cap).second) return Status(ErrorCode::InvalidArgument, where + op + " is listed twice");
    }
    return table;
}

Result<CapabilityTable> CapabilityTable::load(const std::string& path) {
    std::ifstream in(path);
    if (!in) return Status(ErrorCode::NotFound, path + ": cannot open the capability table");
    std::stringstream text;
    text << in.rdbuf();
    return parse(text.str(), path);
}

const OpCapability* CapabilityTable::find(const std::string& domain, const std::string& op) const {
    auto it = m_ops.find(key(domain, op));
    return it == m_ops.end() ? nullptr : &it->second;
}

std::vector<std::string> CapabilityTable::entries() const {
    std::vector<std::string> names;
    for (const auto& [key, cap] : m_ops) {
        std::string name = key;
        if (const size_t at = name.find("::"); at != std::string::npos) name.replace(at, 2, ".");
        names.push_back(name);
    }
    return names;
}

}  // namespace fsc
