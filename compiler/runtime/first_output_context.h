#pragma once
// A kernel context that forwards everything to another and remembers output 0: how a kernel
// that wraps another (a fused epilogue, a test's perturbation) finds what the inner one wrote.
#include "compiler/runtime/kernel.h"

namespace fsc {

class FirstOutputContext : public KernelContext {
public:
    explicit FirstOutputContext(KernelContext& inner) : m_inner(inner) {}
    size_t inputCount() const override { return m_inner.inputCount(); }
    const RtTensor* input(size_t i) const override { return m_inner.input(i); }
    bool inputConstant(size_t i) const override { return m_inner.inputConstant(i); }
    size_t outputCount() const override { return m_inner.outputCount(); }
    Result<RtTensor*> output(size_t i, DType dtype, std::vector<int64_t> dims) override {
        auto out = m_inner.output(i, dtype, std::move(dims));
        if (out && i == 0) m_first = *out;
        return out;
    }
    Status outputSequence(size_t i, DType elemType, std::vector<RtTensor> elements) override {
        return m_inner.outputSequence(i, elemType, std::move(elements));
    }
    bool outputWanted(size_t i) const override { return m_inner.outputWanted(i); }
    ThreadPool& pool() override { return m_inner.pool(); }
    const ValueScope* scope() const override { return m_inner.scope(); }
    std::string where() const override { return m_inner.where(); }
    Device* device() override { return m_inner.device(); }
    bool tf32() const override { return m_inner.tf32(); }

    // Output 0 as the inner kernel asked for it, or null when it asked for none.
    RtTensor* first() const { return m_first; }

private:
    KernelContext& m_inner;
    RtTensor* m_first = nullptr;
};

}  // namespace fsc
