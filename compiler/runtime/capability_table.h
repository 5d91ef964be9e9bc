#pragma once
// Which ops a backend runs on its device, read from a declared table (the CUDA one is
// compiler/backends/cuda/capabilities.txt, built into the binary: cudaCapabilities()). Lowering
// asks it which nodes a device provider claims; graph-break analysis
// asks it where execution must return to the host.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/graph.h"
#include "core/status.h"

namespace fsc {

struct OpCapability {
    bool anyDType = false;
    std::set<DType> dtypes;       // output dtypes the device produces
    std::set<int> shapeInputs;    // inputs the host must know before launching
    bool dataDependentShape = false;
    bool hostControlFlow = false;
};

class CapabilityTable {
public:
    // `source` names the table in errors ("capabilities.txt:12: ...").
    static Result<CapabilityTable> parse(const std::string& text, const std::string& source);
    static Result<CapabilityTable> load(const std::string& path);

    const std::string& name() const { return m_name; }
    // The op's entry, or null when the backend lacks the op.
    const OpCapability* find(const std::string& domain, const std::string& op) const;
    size_t size() const { return m_ops.size(); }
    // Every op, named as KernelRegistry::ops() names them ("Conv", "ai.fusescope.Attention").
    std::vector<std::string> entries() const;

private:
    std::string m_name;
    std::map<std::string, OpCapability> m_ops;  // "op" or "domain::op"
};

}  // namespace fsc
