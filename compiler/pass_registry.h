#pragma once
// Passes by their stable kebab-case names. Built-in passes register in
// passes/builtin_passes.cpp; the pipelines file (pipelines.cpp) names them in order.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/pass.h"

namespace fsc {

struct PassInfo {
    std::string name;
    std::string description;
    std::function<std::unique_ptr<Pass>()> create;
};

class PassRegistry {
public:
    void add(std::function<std::unique_ptr<Pass>()> create);
    const PassInfo* find(const std::string& name) const;
    const std::vector<PassInfo>& passes() const { return m_passes; }
    // Every built-in pass.
    static const PassRegistry& builtin();

private:
    std::vector<PassInfo> m_passes;
};

void registerBuiltinPasses(PassRegistry& registry);

}  // namespace fsc
