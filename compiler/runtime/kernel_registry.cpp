#include "compiler/runtime/kernel_registry.h"

#include <set>

namespace fsc {

const char* backendName(Backend backend) { return backend == Backend::Cuda ? "cuda" : "cpu"; }

void KernelRegistry::add(KernelDef def) {
    m_defs[{def.domain, def.op}].push_back(std::move(def));
}

void KernelRegistry::add(const std::string& op, KernelFactory factory,
                         const KernelDefOptions& options) {
    KernelDef def;
    def.op = op;
    def.factory = std::move(factory);
    def.variant = options.variant;
    def.halfViaFloat = options.halfViaFloat;
    def.minOpset = options.minOpset;
    add(std::move(def));
}

const KernelDef* KernelRegistry::find(const std::string& domain, const std::string& op,
                                      int64_t opset, Backend backend) const {
    auto it = m_defs.find({domain == "ai.onnx" ? "" : domain, op});
    if (it == m_defs.end()) return nullptr;
    for (const KernelDef& def : it->second)
        if (def.backend == backend && opset >= def.minOpset && opset <= def.maxOpset) return &def;
    return nullptr;
}

std::vector<std::string> KernelRegistry::ops(Backend backend) const {
    std::set<std::string> names;
    for (const auto& [key, defs] : m_defs)
        for (const KernelDef& def : defs)
            if (def.backend == backend)
                names.insert(key.first.empty() ? key.second : key.first + "." + key.second);
    return {names.begin(), names.end()};
}

std::vector<KernelDef> KernelRegistry::defs() const {
    std::vector<KernelDef> all;
    for (const auto& [key, list] : m_defs) all.insert(all.end(), list.begin(), list.end());
    return all;
}

}  // namespace fsc
