#include "compiler/pipelines.h"

#include <algorithm>

#include "compiler/pass_registry.h"
#include "compiler/passes/passes.h"
#include "core/comma_list.h"

namespace fsc {

// The pipelines, in order. A step runs at its level and every level above it.
const std::vector<PipelineStep>& pipelineSteps() {
    static const std::vector<PipelineStep> steps = {
        // O1: clean-up; never changes what the graph computes.
        {1, "lower-contrib-ops", "a model saved after ONNX Runtime's optimizer holds its com.microsoft ops; as "
                                 "standard ops they meet the same clean-up and fusions as the export"},
        {1, "eliminate-no-ops", "Identity/Dropout/same-type Cast hide the real edges from every pattern"},
        {1, "fold-shape-computation", "exported transformers compute known shapes at run time; most of their nodes"},
        {1, "fold-constants", "Constant nodes and arithmetic on weights, now that shapes are constants"},
        {1, "eliminate-no-ops", "folding exposes Reshapes to the same shape and Casts to the same type"},
        {1, "cancel-inverse-pairs", "layout shuffles from exporters often undo each other"},
        {1, "eliminate-common-subexpressions", "exporters repeat the same Shape/Gather per use"},
        {1, "eliminate-dead-code", "drops what the steps above left unread"},
        // O2: fusions; each replaces a group of nodes by one op that does the same arithmetic.
        {2, "float16-to-float32", "a float16 model on the CPU, which has no float16 arithmetic: its kernels, "
                                  "fusions and GEMMs are float32's (first, so every fusion below meets float32)"},
        {2, "pad-fusion", "TensorFlow's exports pad explicitly; a Conv or pool pads for free (before "
                          "qdq-folding: a quantized Inception's Pad sits between its DequantizeLinear and pool)"},
        {2, "qdq-folding", "a quantized export's QDQ pairs around Conv/MatMul/Gemm: integer ops on its int8 "
                           "weights (fold-constants before it leaves those weights' DequantizeLinear)"},
        {2, "fold-constants", "the QDQ weights qdq-folding could not make integer, in float after all"},
        {2, "conv-bn-fusion", "inference batch norm is a per-channel affine map: free inside the Conv weights"},
        {2, "rows-gemm-to-matmul", "Hugging Face's GPT-2 writes each linear layer as a Gemm over flattened rows; as "
                                   "a MatMul it meets the product fusions below (before INT8 and tensor-parallel, "
                                   "which take its MatMul)"},
        {2, "split-packed-projection", "a packed QKV projection's copies apart become three products, which "
                                       "the attention and bias fusions then take as any others (after INT8's place)"},
        {2, "scatter-rows", "a graph network's scatter_add expands its row numbers to the updates' size; "
                            "ScatterND of rows needs only the column"},
        {2, "einsum-to-matmul", "torch.einsum's attention and linear layers are matrix products; as MatMul the "
                                "GEMM library runs them and the fusions below see them"},
        {2, "integer-matmul-fusion", "a dynamically quantized MatMul's int32 sums are scaled as they leave the "
                                     "registers (after int8-quantization's and qdq-folding's own MatMulIntegers)"},
        {2, "gelu-fusion", "GELU before activation-fusion, so it can become a MatMul epilogue"},
        {2, "layer-norm-fusion", "older opsets write LayerNorm out as 9 element-wise nodes"},
        {2, "rms-norm-fusion", "after layer-norm-fusion, which claims the centered form"},
        {2, "skip-layer-norm-fusion", "the residual Add is read once more by the norm right after it"},
        {2, "reshape-before-transpose", "a head split after a transpose (PyTorch 2's attention) goes first, so "
                                        "attention-fusion meets the transpose and takes it into the fused op"},
        {2, "attention-fusion", "before matmul-add-fusion, so the mask Add stays with its Softmax"},
        {2, "matmul-add-fusion", "a bias Add after MatMul is a Gemm / epilogue, not a separate pass over memory"},
        {2, "activation-fusion", "activations after Conv/Gemm/MatMul run in the epilogue, while data is in cache"},
        {2, "residual-fusion", "a ResNet block's Add and ReLU after its last Conv, in that Conv's epilogue"},
        {2, "channels-last", "after the named fusions, so a region's convolutions carry their epilogues"},
        {2, "elementwise-fusion", "last: what no named fusion claimed (channels-last's BatchNormalization Mul/Add "
                                  "and the Relu after it, say) runs as one generated loop per group"},
        {2, "reshape-before-transpose", "a detection head's NHWC output split into anchors and classes: "
                                        "the region's edge Transpose moves past the split to meet the head's own"},
        {2, "cancel-inverse-pairs", "a region's edge Transpose meets an exporter's own (TensorFlow's NHWC)"},
        {2, "se-pool-fusion", "after channels-last, whose ReduceMean of a depthwise output it folds in"},
        {2, "eliminate-dead-code", "fusions leave constants and Identity-free shells unread"},
        // O3: memory.
        {3, "schedule-for-memory", "after every fusion, so it orders the nodes that will really run"},
    };
    return steps;
}

bool runsAfterCleanUp(const std::string& pass) {
    if (pass == "conv-bn-fusion" || pass == "pad-fusion") return false;  // they shape what INT8 sees
    if (pass == "qdq-folding") return false;  // an export's own QDQ form, folded before INT8 adds its own
    if (pass == "float16-to-float32") return false;  // INT8 calibrates the float32 graph
    if (pass == "rows-gemm-to-matmul") return false;  // INT8 and tensor-parallel split its MatMul
    if (pass == "fp16-conversion" || pass == "bf16-conversion") return true;
    for (const PipelineStep& step : pipelineSteps())
        if (pass == step.pass) return step.level >= 2;  // the first listing: eliminate-dead-code is O1's
    return false;
}

Result<std::vector<std::string>> pipelinePasses(const std::string& level) {
    if (level.size() != 2 || (level[0] != 'O' && level[0] != 'o') || level[1] < '0' || level[1] > '3')
        return Status(ErrorCode::InvalidArgument,
                      "unknown pipeline '" + level + "' (expected O0, O1, O2 or O3)");
    const int n = level[1] - '0';
    std::vector<std::string> passes;
    for (const PipelineStep& step : pipelineSteps())
        if (step.level <= n) passes.push_back(step.pass);
    return passes;
}

Result<std::vector<std::string>> resolvePipeline(const std::string& level, const std::string& passList,
                                                 const std::vector<std::string>& disabled) {
    std::vector<std::string> passes;
    if (!passList.empty()) {
        passes = splitCommaList(passList);
    } else {
        auto named = pipelinePasses(level.empty() ? "O2" : level);
        if (!named) return named.status();
        passes = std::move(*named);
    }
    const PassRegistry& registry = PassRegistry::builtin();
    for (const auto& list : {passes, disabled})
        for (const std::string& name : list)
            if (!registry.find(name))
                return Status(ErrorCode::InvalidArgument,
                              "unknown pass '" + name + "' (fusescope-cli compile --list-passes)");
    std::vector<std::string> kept;
    for (const std::string& name : passes)
        if (std::find(disabled.begin(), disabled.end(), name) == disabled.end()) kept.push_back(name);
    return kept;
}

namespace {

using PassList = std::vector<std::unique_ptr<Pass>>;

bool isMemoryPass(const std::string& name) { return name == "schedule-for-memory"; }

// Inserts `pass` before the first pass `before` holds for, or at the end; returns where.
template <typename Predicate>
PassList::iterator insertBefore(PassList& list, std::unique_ptr<Pass> pass, Predicate before) {
    auto at = std::find_if(list.begin(), list.end(), [&](const std::unique_ptr<Pass>& p) { return before(p->name()); });
    return list.insert(at, std::move(pass));
}

}  // namespace

std::set<DType> channelsLastTypes(const PipelineSpec& spec) {
    if (spec.channelsLastTypes) return *spec.channelsLastTypes;
    // The CPU's 8-bit ones: a quantized CNN's QLinearConv chain (the CUDA backend runs no
    // integer convolutions).
    if (spec.target.backend != Backend::Cuda) return {DType::Float32, DType::UInt8, DType::Int8};
    std::set<DType> types = {DType::Float16, DType::BFloat16};
    // float32 convolutions that a half precision will narrow. Not TF32 ones: the one H200 run
    // of NHWC float32 under TF32 gave ResNet-50 a wrong output (docs/gpu-runs/2026-12-04-*),
    // and they stay NCHW, as measured right, until a kit run shows the checked engines right.
    if (spec.precision == Precision::Float16 || spec.precision == Precision::BFloat16) types.insert(DType::Float32);
    return types;
}

Result<std::vector<std::unique_ptr<Pass>>> buildPipeline(const PipelineSpec& spec) {
    PassList list;
    // A named pipeline folds an export's QDQ form into integer ops on the CPU only: CUDA has no
    // integer convolutions, and there the float ones between the Q/DQ pairs stay on the device
    // (the pass stays in the list and says so for each op).
    const bool integerOps = spec.customPasses || spec.target.backend != Backend::Cuda;
    for (size_t i = 0; i < spec.passes.size(); ++i) {
        const std::string& name = spec.passes[i];
        const PassInfo* info = PassRegistry::builtin().find(name);
        if (!info) return Status(ErrorCode::InvalidArgument, "unknown pass '" + name + "' (fusescope-cli compile --list-passes)");
        if (name == "channels-last") list.push_back(passes::channelsLast(channelsLastTypes(spec)));
        else if (name == "qdq-folding" && !integerOps)
            list.push_back(passes::foldQdq("the CUDA backend has no integer convolutions; the QDQ form runs in float"));
        else if (name == "lower-contrib-ops" && !spec.customPasses && spec.target.backend != Backend::Cuda)
            // Its kernel runs the same three products and attention loop (BERT-base in that form:
            // the same time lowered or not, docs/benchmarks.md) in 1 node where lowered are 8 or more.
            list.push_back(passes::lowerContribOps("the CPU runs com.microsoft.Attention's kernel as fast as its lowered form"));
        else if (name == "float16-to-float32" && !spec.customPasses && spec.target.backend == Backend::Cuda)
            list.push_back(passes::widenFloat16("the GPU computes in float16 itself"));
        else if (name == "integer-matmul-fusion" && !integerOps)
            list.push_back(passes::fuseIntegerMatMul("the CUDA backend has no MatMulIntegerToFloat kernel"));
        else if (name == "fold-constants")  // a qdq-folding after it takes the QDQ weights as they are
            list.push_back(passes::foldConstants(integerOps && std::find(spec.passes.begin() + ptrdiff_t(i), spec.passes.end(),
                                                                         "qdq-folding") != spec.passes.end()));
        else list.push_back(info->create());
    }
    const std::set<std::string> keep = spec.keepInFloat32 ? *spec.keepInFloat32 : passes::defaultKeepInFloat32();
    switch (spec.precision) {
        case Precision::Float32: break;
        case Precision::Float16: insertBefore(list, passes::convertToFloat16(keep), isMemoryPass); break;
        case Precision::BFloat16: insertBefore(list, passes::convertToBFloat16(keep), isMemoryPass); break;
        case Precision::Int8: {
            auto at = insertBefore(list, passes::quantizeInt8(spec.int8), runsAfterCleanUp);
            list.insert(at + 1, passes::foldQdq());
            break;
        }
    }
    if (spec.tensorParallel > 1)
        insertBefore(list, passes::tensorParallel(spec.tensorParallel),
                     [](const std::string& name) { return runsAfterCleanUp(name) || name == "int8-quantization"; });
    if (spec.pipelineParallel > 1) insertBefore(list, passes::pipelineParallel(spec.pipelineParallel), isMemoryPass);
    return list;
}

}  // namespace fsc
