#pragma once
// Kernel registry: (domain, op, opset range) -> factory, backend and variant. Kernel ids
// read `<op>.<dtype>.<variant>`, e.g. `Conv.float32.im2col_sgemm`.
#include <map>
#include <string>
#include <vector>

#include "compiler/runtime/kernel.h"

namespace fsc {

enum class Backend { Cpu, Cuda };
const char* backendName(Backend backend);

struct KernelDef {
    std::string domain;  // "" for ai.onnx
    std::string op;
    int64_t minOpset = 1;
    int64_t maxOpset = 1 << 30;
    std::string variant = "ref";
    Backend backend = Backend::Cpu;
    // float16/bfloat16 inputs are widened to float32 around the kernel and float32
    // outputs narrowed back (the kernel itself only knows float32).
    bool halfViaFloat = true;
    // Inputs a device kernel reads on the host (shape operands such as Reshape's target):
    // the executor keeps them in host memory for it.
    std::vector<int> hostInputs;
    KernelFactory factory;
};

// How a def differs from the defaults, e.g. {.variant = "openblas"}.
struct KernelDefOptions {
    std::string variant = "ref";
    bool halfViaFloat = true;
    int64_t minOpset = 1;
};

class KernelRegistry {
public:
    void add(KernelDef def);
    // A CPU kernel for an ai.onnx op.
    void add(const std::string& op, KernelFactory factory, const KernelDefOptions& options = {});
    // The def for an op at an opset, or null.
    const KernelDef* find(const std::string& domain, const std::string& op, int64_t opset,
                          Backend backend) const;
    std::vector<std::string> ops(Backend backend) const;  // "Conv", "com.microsoft.Gelu"
    // Every def, for a registry built from another (a provider wrapping another's kernels).
    std::vector<KernelDef> defs() const;

private:
    std::map<std::pair<std::string, std::string>, std::vector<KernelDef>> m_defs;
};

}  // namespace fsc
