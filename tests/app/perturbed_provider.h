#pragma once
// A planted numeric error for numeric bisection's tests: a provider with another's kernels
// where the kernels of the chosen ops scale their first float32 output by (1 + error), on
// the host or on a device (read back, scaled, written again). Bisection must name the group
// that holds such a kernel as the first jump.
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/runtime/execution_provider.h"
#include "compiler/runtime/device.h"
#include "compiler/runtime/first_output_context.h"
#include "compiler/runtime/kernel.h"

namespace fsc::test {

class ScaledOutputKernel : public Kernel {
public:
    ScaledOutputKernel(std::unique_ptr<Kernel> inner, float factor) : m_inner(std::move(inner)), m_factor(factor) {}
    int inPlaceInput() const override { return m_inner->inPlaceInput(); }
    Status compute(KernelContext& ctx) override {
        FirstOutputContext recording(ctx);
        FSC_RETURN_IF_ERROR(m_inner->compute(recording));
        RtTensor* out = recording.first();
        if (!out || out->dtype != DType::Float32) return Status::ok();
        std::vector<float> host(size_t(out->numel()));
        const size_t bytes = host.size() * sizeof(float);
        if (out->onDevice) {
            FSC_RETURN_IF_ERROR(ctx.device()->synchronize());
            FSC_RETURN_IF_ERROR(ctx.device()->copyToHost(host.data(), out->data, bytes));
        } else {
            std::copy(out->as<float>(), out->as<float>() + host.size(), host.begin());
        }
        for (float& v : host) v *= m_factor;
        if (out->onDevice) return ctx.device()->copyToDevice(out->data, host.data(), bytes);
        std::copy(host.begin(), host.end(), out->as<float>());
        return Status::ok();
    }

private:
    std::unique_ptr<Kernel> m_inner;
    float m_factor;
};

class PerturbedProvider : public ExecutionProvider {
public:
    // `perturbed(init)`: whether the kernel made for that node gets the error.
    PerturbedProvider(std::shared_ptr<const ExecutionProvider> base, std::function<bool(const KernelInit&)> perturbed,
                      float error)
        : m_base(std::move(base)) {
        for (KernelDef def : m_base->kernels().defs()) {
            KernelFactory inner = def.factory;
            def.factory = [inner, perturbed, error](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
                auto kernel = inner(init);
                if (!kernel || !perturbed(init)) return kernel;
                return std::unique_ptr<Kernel>(std::make_unique<ScaledOutputKernel>(std::move(*kernel), 1.0f + error));
            };
            m_kernels.add(std::move(def));
        }
    }
    Backend backend() const override { return m_base->backend(); }
    const KernelRegistry& kernels() const override { return m_kernels; }
    const CapabilityTable* capabilities() const override { return m_base->capabilities(); }
    std::shared_ptr<Device> device() const override { return m_base->device(); }

private:
    std::shared_ptr<const ExecutionProvider> m_base;
    KernelRegistry m_kernels;
};

}  // namespace fsc::test
