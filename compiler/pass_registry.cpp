#include "compiler/pass_registry.h"

namespace fsc {

void PassRegistry::add(std::function<std::unique_ptr<Pass>()> create) {
    auto probe = create();
    m_passes.push_back({probe->name(), probe->description(), std::move(create)});
}

const PassInfo* PassRegistry::find(const std::string& name) const {
    for (const PassInfo& p : m_passes)
        if (p.name == name) return &p;
    return nullptr;
}

const PassRegistry& PassRegistry::builtin() {
    static const PassRegistry registry = [] {
        PassRegistry r;
        registerBuiltinPasses(r);
        return r;
    }();
    return registry;
}

}  // namespace fsc
