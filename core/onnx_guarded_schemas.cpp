#include "core/onnx_guarded_schemas.h"

#include <onnx/defs/shape_inference.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace fsc {
namespace {

const onnx::TensorShapeProto* inputShape(onnx::InferenceContext& ctx, size_t i) {
    if (i >= ctx.getNumInputs()) return nullptr;
    const onnx::TypeProto* t = ctx.getInputType(i);
    if (!t || t->value_case() != onnx::TypeProto::kTensorType || !t->tensor_type().has_shape())
        return nullptr;
    return &t->tensor_type().shape();
}

// libonnx 1.12's ConvTranspose rule takes the kernel's rank from W and then indexes it,
// and the dilations, by X's spatial rank, and reads W's channel dim unchecked: a W whose
// rank differs from X's reads past the end (found by the importer fuzzer).
void checkConvTranspose(onnx::InferenceContext& ctx) {
    const onnx::TensorShapeProto* x = inputShape(ctx, 0);
    const onnx::TensorShapeProto* w = inputShape(ctx, 1);
    if (!x || !w || x->dim_size() < 2) return;  // ONNX's rule returns early itself
    if (w->dim_size() < 2)
        fail_shape_inference("ConvTranspose: W has rank ", w->dim_size(), ", fewer than 2");
    if (!ctx.getAttribute("kernel_shape") && w->dim_size() != x->dim_size())
        fail_shape_inference("ConvTranspose: W has rank ", w->dim_size(), " for an X of rank ",
                             x->dim_size());
}

// libonnx 1.12's rule for RNN, GRU and LSTM before opset 7 reads X's first two dims without
// checking its rank: an X of rank 1 reads past the end (found by the importer fuzzer). Every
// version's X is [seq_length, batch_size, input_size].
void checkRecurrent(onnx::InferenceContext& ctx) {
    const onnx::TensorShapeProto* x = inputShape(ctx, 0);
    if (x && x->dim_size() != 3) fail_shape_inference("X has rank ", x->dim_size(), ", not 3");
}

using Check = void (*)(onnx::InferenceContext&);

Check checkFor(const onnx::OpSchema& schema) {
    if (!schema.domain().empty()) return nullptr;
    if (schema.Name() == "ConvTranspose") return &checkConvTranspose;
    if (schema.Name() == "RNN" || schema.Name() == "GRU" || schema.Name() == "LSTM") return &checkRecurrent;
    return nullptr;
}

class GuardedRegistry final : public onnx::ISchemaRegistry {
public:
    explicit GuardedRegistry(std::set<std::string> withheld) : withheld_(std::move(withheld)) {}
    const onnx::OpSchema* GetSchema(const std::string& key, const int maxInclusiveVersion,
                                    const std::string& domain) const override {
        if ((domain.empty() || domain == "ai.onnx") && withheld_.count(key)) return nullptr;
        const onnx::OpSchema* schema =
            onnx::OpSchemaRegistry::Instance()->GetSchema(key, maxInclusiveVersion, domain);
        if (!schema) return nullptr;
        const Check check = checkFor(*schema);
        if (!check) return schema;
        std::lock_guard lock(mutex_);
        auto& guarded = guarded_[schema];
        if (!guarded) {
            guarded = std::make_unique<onnx::OpSchema>(*schema);
            guarded->TypeAndShapeInferenceFunction(
                [check, inner = schema->GetTypeAndShapeInferenceFunction()](onnx::InferenceContext& ctx) {
                    check(ctx);
                    if (inner) inner(ctx);
                });
        }
        return guarded.get();
    }

private:
    const std::set<std::string> withheld_;
    mutable std::mutex mutex_;
    mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

}  // namespace

std::unique_ptr<onnx::ISchemaRegistry> guardedSchemaRegistry(std::set<std::string> withheld) {
    return std::make_unique<GuardedRegistry>(std::move(withheld));
}

int newestKnownOpset() {
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    const auto it = ranges.find(onnx::ONNX_DOMAIN);
    return it == ranges.end() ? 0 : it->second.second;
}

}  // namespace fsc
