// The CUDA backend against the CPU backend, its oracle. Without a GPU (CI) everything runs
// on the simulated device: launches run the kernels' CPU twins over their whole grid, GEMMs
// a reference of cuBLASLt's semantics, and every pointer and extent is checked against its
// allocation. With FUSESCOPE_TEST_DEVICE=gpu (the device kit) the same tests run on the
// first GPU and fail, not skip, when there is none.
#include <QtTest>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"  // op cases list only what they set

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "compiler/target.h"
#include "compiler/backends/cuda/attention_gemms.h"
#include "compiler/backends/cuda/device.h"
#include "compiler/backends/cuda/fused_attention_call.h"
#include "compiler/backends/cuda/gemm_lowering.h"
#include "compiler/backends/cuda/nvrtc_compiler.h"
#include "compiler/backends/cuda/simulated_gpu.h"
#include "compiler/runtime/capability_table.h"
#include "compiler/pass_manager.h"
#include "compiler/pass_test_support.h"
#include "compiler/passes/passes.h"
#include "compiler/pipelines.h"
#include "compiler/quantization/calibration_data.h"
#include "compiler/quantization/int8_options.h"
#include "compiler/runtime/attention_layout.h"
#include "compiler/runtime/executor.h"
#include "compiler/runtime/feeds.h"
#include "compiler/runtime/half.h"
#include "core/graph_builder.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/shape_inference.h"
#include "tensor_compare.h"
#include "test_support.h"

using namespace fsc;

namespace {

bool onGpu() {
    const char* which = std::getenv("FUSESCOPE_TEST_DEVICE");
    return which && std::string(which) == "gpu";
}

std::shared_ptr<CudaDevice> testDevice() {
    if (!onGpu()) return makeSimulatedGpu();
    auto device = openCudaDevice();
    if (!device) qFatal("FUSESCOPE_TEST_DEVICE=gpu but %s", device.status().message().c_str());
    return *device;
}

RtTensor randomInput(DType dtype, const std::vector<int64_t>& dims, std::mt19937_64& rng) {
    std::uniform_real_distribution<float> real(-2.f, 2.f);
    RtTensor t = allocateTensor(dtype, dims);
    for (int64_t i = 0; i < t.numel(); ++i) {
        const float v = real(rng);
        if (dtype == DType::Float32)
            t.as<float>()[i] = v;
        else if (dtype == DType::Float16)
            t.as<uint16_t>()[i] = floatToHalf(v);
        else if (dtype == DType::BFloat16)
            t.as<uint16_t>()[i] = floatToBfloat16(v);
        else if (dtype == DType::Int64)
            t.as<int64_t>()[i] = int64_t(rng() % 7) - 3;
        else if (dtype == DType::Int32)
            t.as<int32_t>()[i] = int32_t(rng() % 7) - 3;
        else if (dtype == DType::Bool)
            t.as<uint8_t>()[i] = uint8_t(rng() % 2);
        else if (dtype == DType::Int8)
            t.as<int8_t>()[i] = int8_t(int(rng() % 256) - 128);
        else if (dtype == DType::UInt8)
            t.as<uint8_t>()[i] = uint8_t(rng() % 256);
    }
    return t;
}

// The CPU's result against the device's (tensor_compare.h).
double worstError(const RtTensor& a, const RtTensor& b) {
    return test::worstRelativeError(a, b);
}

struct Comparison {
    double worst = 0;
    std::string error;
    const Executor* device = nullptr;
};

// `model` on the CUDA backend of `device`.
Result<std::unique_ptr<Executor>> cudaExecutor(const Model& model, std::shared_ptr<CudaDevice> device, bool graphs = true) {
    ExecutorOptions options = cudaExecutorOptions(std::move(device));
    options.cudaGraphs = graphs;
    return Executor::create(model, options);
}

// Runs `model` on the CPU and on the CUDA backend with the same feeds.
Comparison compareBackends(const Model& model, const std::vector<RtTensor>& feeds,
                           std::shared_ptr<CudaDevice> device,
                           std::unique_ptr<Executor>* keep = nullptr, bool graphs = true) {
    Comparison c;
    auto cpu = Executor::create(model, cpuExecutorOptions());
    if (!cpu) return {0, "cpu: " + cpu.status().message()};
    auto cuda = cudaExecutor(model, std::move(device), graphs);
    if (!cuda) return {0, "cuda: " + cuda.status().message()};
    auto expected = (*cpu)->run(feeds);
    if (!expected) return {0, "cpu run: " + expected.status().message()};
    auto got = (*cuda)->run(feeds);
    if (!got) return {0, "cuda run: " + got.status().message()};
    if (got->size() != expected->size()) return {0, "output count differs"};
    for (size_t i = 0; i < got->size(); ++i) {
        const double error = worstError((*expected)[i], (*got)[i]);
        if (!(error <= c.worst)) c.worst = error;
    }
    c.device = cuda->get();
    if (keep) *keep = std::move(*cuda);
    return c;
}

struct OpCase {
    std::string op, domain;
    std::vector<std::vector<int64_t>> shapes;  // inputs fed at run time
    std::vector<Attribute> attrs;
    std::vector<Tensor> constants;  // further inputs, after the fed ones
    int64_t opset = 17;
    DType dtype = DType::Float32;
    DType firstInputType =
        DType::Undefined;  // the first fed input's, when it differs (Where's condition)
    DType feedType(size_t i) const {
        return i == 0 && firstInputType != DType::Undefined ? firstInputType : dtype;
    }
};

// Variances must be positive.
Tensor positiveTensor(std::string name, std::vector<int64_t> dims, uint64_t seed) {
    Tensor t = randomFloatTensor(name, dims, seed, 1.f);
    std::vector<float> v(size_t(t.numElements()));
    std::memcpy(v.data(), t.data(), v.size() * sizeof(float));
    for (float& x : v) x = std::fabs(x) + 0.1f;
    return floatTensor(std::move(name), std::move(dims), v);
}
Tensor halfWeights(std::string name, std::vector<int64_t> dims) {
    Tensor t = randomFloatTensor("f", dims, 30, 0.5f);
    std::string bytes(size_t(t.numElements()) * 2, '\0');
    for (int64_t i = 0; i < t.numElements(); ++i) {
        float f;
        std::memcpy(&f, t.data() + i * 4, 4);
        const uint16_t h = floatToHalf(f);
        std::memcpy(bytes.data() + i * 2, &h, 2);
    }
    const size_t size = bytes.size();
    return Tensor(std::move(name), DType::Float16, std::move(dims), makeBuffer(std::move(bytes)), 0,
                  size);
}

Model opModel(const OpCase& c) {
    GraphBuilder g;
    std::vector<ValueId> ins;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
        std::vector<Dim> dims;
        for (int64_t d : c.shapes[i]) dims.push_back(Dim::known(d));
        ins.push_back(g.input("x" + std::to_string(i), c.feedType(i), Shape(dims)));
    }
    for (const Tensor& t : c.constants) ins.push_back(g.initializer(t));
    auto outs = g.node(c.op, ins, {"y"}, c.attrs, "the_node", c.domain);
    g.output(outs[0]);
    Model m = c.domain.empty() ? test::withInferredTypes(g, c.opset) : g.buildModel(c.opset);
    if (!c.domain.empty()) {
        m.opsetImports.push_back({c.domain, 1});
        fillUnknownTypes(*m.graph);
    }
    return m;
}

// Table entries the host runs by design (shapes and control flow): no device kernel.
const std::set<std::string> kHostByDesign{"Constant", "ConstantOfShape", "If", "Loop", "NonZero", "Scan", "Shape"};

// How KernelRegistry and the capability table name a case's op, and its output's dtype.
std::string caseKey(const OpCase& c) {
    return c.domain.empty() ? c.op : c.domain + "." + c.op;
}
// The dtype the case's output has when the CPU backend runs it: what the op produces,
// whatever the ONNX 1.12 type inference declares (it knows no float16 DequantizeLinear).
DType caseOutputType(const OpCase& c) {
    auto cpu = Executor::create(opModel(c), cpuExecutorOptions());
    if (!cpu) qFatal("case %s: %s", c.op.c_str(), cpu.status().message().c_str());
    std::mt19937_64 rng(11);
    std::vector<RtTensor> feeds;
    for (size_t i = 0; i < c.shapes.size(); ++i) feeds.push_back(randomInput(c.feedType(i), c.shapes[i], rng));
    auto out = (*cpu)->run(feeds);
    if (!out) qFatal("case %s: %s", c.op.c_str(), out.status().message().c_str());
    return (*out)[0].dtype;
}

// The output dtypes the table claims for an op; "any" stands for float32, float16 and int64.
std::set<DType> claimedDTypes(const CapabilityTable& table, const std::string& entry) {
    const size_t dot = entry.rfind('.');
    const OpCapability* cap =
        dot == std::string::npos ? table.find("", entry) : table.find(entry.substr(0, dot), entry.substr(dot + 1));
    if (!cap) return {};
    return cap->anyDType ? std::set<DType>{DType::Float32, DType::Float16, DType::Int64} : cap->dtypes;
}

// A float32 constant in another dtype (integers rounded to nearest).
Tensor convertedConstant(const Tensor& k, DType t) {
    const int64_t n = k.numElements();
    const float* v = k.dataAs<float>();
    const size_t width = size_t(dtypeBits(t) / 8);
    std::string bytes(size_t(n) * width, '\0');
    for (int64_t i = 0; i < n; ++i) {
        char* at = bytes.data() + size_t(i) * width;
        if (t == DType::Float16 || t == DType::BFloat16) {
            const uint16_t h = t == DType::Float16 ? floatToHalf(v[i]) : floatToBfloat16(v[i]);
            std::memcpy(at, &h, 2);
        } else if (t == DType::Int64) {
            const int64_t x = std::llround(v[i]);
            std::memcpy(at, &x, 8);
        } else if (t == DType::Int32) {
            const int32_t x = int32_t(std::lround(v[i]));
            std::memcpy(at, &x, 4);
        } else {
            qFatal("convertedConstant: no conversion to %s", std::string(dtypeName(t)).c_str());
        }
    }
    const size_t size = bytes.size();
    return Tensor(k.name(), t, k.dims(), makeBuffer(std::move(bytes)), 0, size);
}

// A float32 case in another dtype: its float inputs and float constants converted.
OpCase inDType(OpCase c, DType t) {
    if (c.dtype == DType::Float32) c.dtype = t;
    for (Tensor& k : c.constants)
        if (k.dtype() == DType::Float32 && k.name() != "scales" && k.name() != "roi") k = convertedConstant(k, t);
    return c;
}

// Every device kernel's cases: random, odd, broadcast and empty shapes; each claimed
// (op, dtype) of capabilities.txt has at least one (everyClaimedOpAndDtypeHasACase).
struct OpRow {
    std::string name;
    OpCase c;
    double tolerance;
};
std::vector<OpRow> singleOpCases() {
    std::vector<OpRow> rows;
    auto row = [&rows](const char* name, OpCase c, double tol = 1e-5) { rows.push_back({name, std::move(c), tol}); };
    row("add same shape", {"Add", "", {{7, 13}, {7, 13}}});
    row("add broadcast row", {"Add", "", {{2, 3, 37}, {37}}});
    row("mul outer broadcast", {"Mul", "", {{3, 1}, {1, 5}}});
    row("sub scalar", {"Sub", "", {{4, 5}, {}}});
    row("div", {"Div", "", {{33}, {33}}});
    row("pow", {"Pow", "", {{9}, {9}}});
    row("max", {"Max", "", {{2, 9}, {9}}});
    row("empty", {"Add", "", {{0, 5}, {5}}});
    row("rank 8 broadcast", {"Mul", "", {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 2, 1, 2, 1, 2, 1, 3}}});
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "Reciprocal"})
        row(op, {op, "", {{1031}}});
    row("sqrt of |x|", {"Sqrt", "", {{64}}}, 1e-5);  // NaN where x < 0: NaN must match
    row("log", {"Log", "", {{64}}}, 1e-5);
    row("gelu erf", {"Gelu", "", {{5, 17}}, {}, {}, 20});
    row("gelu tanh", {"Gelu", "", {{5, 17}}, {stringAttr("approximate", "tanh")}, {}, 20});
    row("hard swish", {"HardSwish", "", {{100}}});
    row("hard sigmoid",
        {"HardSigmoid", "", {{100}}, {floatAttr("alpha", 0.3f), floatAttr("beta", 0.4f)}});
    row("clip inputs", {"Clip",
                        "",
                        {{50}},
                        {},
                        {floatTensor("lo", {}, {-0.5f}), floatTensor("hi", {}, {0.7f})}});
    row("softmax last axis", {"Softmax", "", {{3, 37}}});
    row("softmax one column", {"Softmax", "", {{5, 1}}});
    row("softmax long rows", {"Softmax", "", {{2, 1000}}});
    row("softmax opset 11 axis 1", {"Softmax", "", {{2, 3, 4}}, {intAttr("axis", 1)}, {}, 11});
    row("log softmax", {"LogSoftmax", "", {{4, 33}}});
    row("layer norm",
        {"LayerNormalization",
         "",
         {{4, 70}},
         {floatAttr("epsilon", 1e-5f)},
         {randomFloatTensor("scale", {70}, 1, 1.f), randomFloatTensor("bias", {70}, 2, 1.f)}});
    row("layer norm two axes", {"LayerNormalization",
                                "",
                                {{3, 4, 5}},
                                {intAttr("axis", 1)},
                                {randomFloatTensor("scale", {4, 5}, 3, 1.f),
                                 randomFloatTensor("bias", {4, 5}, 4, 1.f)}});
    row("matmul 2-D odd", {"MatMul", "", {{3, 5}, {5, 7}}}, 1e-5);
    row("matmul batched A, 2-D B", {"MatMul", "", {{2, 3, 5}, {5, 7}}});
    row("matmul vector A", {"MatMul", "", {{5}, {5, 7}}});
    row("matmul vector B", {"MatMul", "", {{2, 3, 5}, {5}}});
    row("matmul same batch", {"MatMul", "", {{2, 3, 5}, {2, 5, 7}}});
    row("matmul broadcast A", {"MatMul", "", {{3, 4}, {2, 4, 5}}});
    row("matmul mixed broadcast", {"MatMul", "", {{2, 1, 3, 4}, {1, 3, 4, 2}}});
    row("matmul empty k", {"MatMul", "", {{3, 0}, {0, 4}}});
    row("gemm plain", {"Gemm", "", {{4, 6}, {6, 3}}});
    row("gemm transposes, bias row", {"Gemm",
                                      "",
                                      {{6, 4}, {3, 6}},
                                      {intAttr("transA", 1), intAttr("transB", 1)},
                                      {randomFloatTensor("c", {3}, 5, 1.f)}});
    row("gemm column C, alpha beta", {"Gemm",
                                      "",
                                      {{4, 6}, {6, 3}},
                                      {floatAttr("alpha", 0.5f), floatAttr("beta", 0.25f)},
                                      {randomFloatTensor("c", {4, 1}, 6, 1.f)}});
    row("gemm full C",
        {"Gemm", "", {{4, 6}, {6, 3}}, {}, {randomFloatTensor("c", {4, 3}, 7, 1.f)}});
    row("fused matmul relu", {"FusedMatMul",
                              "ai.fusescope",
                              {{5, 8}, {8, 6}},
                              {stringAttr("activation", "Relu")},
                              {randomFloatTensor("bias", {6}, 8, 1.f)}});
    row("fused matmul gelu (separate epilogue)", {"FusedMatMul",
                                                  "ai.fusescope",
                                                  {{5, 8}, {8, 6}},
                                                  {stringAttr("activation", "Gelu")},
                                                  {randomFloatTensor("bias", {6}, 9, 1.f)}});
    // On a GPU this is cuBLASLt's GELU epilogue, which computes tanh with the hardware's
    // approximation: measured on an H200 at 2.9e-5 of the CPU's result (docs/gpu-runs of
    // 2026-11-28), well inside ONNX's own float32 tolerance of 1e-3.
    row("fused matmul gelu tanh",
        {"FusedMatMul", "ai.fusescope", {{5, 8}, {8, 6}}, {stringAttr("activation", "GeluTanh")}},
        1e-4);
    row("fused matmul leaky",
        {"FusedMatMul",
         "ai.fusescope",
         {{5, 8}, {8, 6}},
         {stringAttr("activation", "LeakyRelu"), floatsAttr("activation_params", {0.2f})}});
    row("fused matmul quick gelu",
        {"FusedMatMul",
         "ai.fusescope",
         {{5, 8}, {8, 6}},
         {stringAttr("activation", "Swish"), floatsAttr("activation_params", {1.702f})}});
    row("transpose 3-D", {"Transpose", "", {{2, 3, 5}}, {intsAttr("perm", {2, 0, 1})}});
    row("transpose default", {"Transpose", "", {{4, 7}}});
    row("concat axis 1", {"Concat", "", {{2, 3, 4}, {2, 5, 4}}, {intAttr("axis", 1)}});
    row("concat axis -1", {"Concat", "", {{2, 3}, {2, 1}, {2, 4}}, {intAttr("axis", -1)}});
    row("cast to float16", {"Cast", "", {{33}}, {intAttr("to", int64_t(DType::Float16))}},
        1e-3);
    row("cast to int64", {"Cast", "", {{33}}, {intAttr("to", int64_t(DType::Int64))}});
    row("reshape -1 and 0",
        {"Reshape", "", {{2, 3, 4}}, {}, {int64Tensor("shape", {3}, {0, -1, 2})}});
    row("flatten", {"Flatten", "", {{2, 3, 4}}, {intAttr("axis", 2)}});
    row("unsqueeze", {"Unsqueeze", "", {{3, 4}}, {}, {int64Tensor("axes", {2}, {0, -1})}});
    row("squeeze", {"Squeeze", "", {{3, 1, 4}}, {}, {int64Tensor("axes", {1}, {1})}});
    row("identity", {"Identity", "", {{6}}});
    // Data movement
    row("split equal", {"Split", "", {{2, 6, 3}}, {intAttr("axis", 1)}, {}, 11});
    row("split sizes input", {"Split", "", {{7, 4}}, {}, {int64Tensor("split", {1}, {7})}, 13});
    row("slice steps and negatives",
        {"Slice",
         "",
         {{5, 9, 4}},
         {},
         {int64Tensor("starts", {2}, {1, -2}), int64Tensor("ends", {2}, {4, 0}),
          int64Tensor("axes", {2}, {0, 1}), int64Tensor("steps", {2}, {2, -3})}});
    row("slice empty", {"Slice",
                        "",
                        {{5, 4}},
                        {},
                        {int64Tensor("starts", {1}, {3}), int64Tensor("ends", {1}, {3})}});
    row("expand", {"Expand", "", {{3, 1}}, {}, {int64Tensor("shape", {3}, {2, 3, 4})}});
    row("pad zero, crop", {"Pad", "", {{3, 5}}, {}, {int64Tensor("pads", {4}, {1, -1, 2, 2})}});
    row("pad value", {"Pad",
                      "",
                      {{2, 3}},
                      {},
                      {int64Tensor("pads", {4}, {0, 2, 1, 0}), floatTensor("v", {}, {-1.5f})}});
    row("gather axis 0, negative index",
        {"Gather", "", {{5, 3}}, {}, {int64Tensor("idx", {2, 2}, {0, 4, -1, 2})}});
    row("gather axis 1", {"Gather",
                          "",
                          {{2, 6, 3}},
                          {intAttr("axis", 1)},
                          {int64Tensor("idx", {3}, {5, 0, 5})}});
    OpCase where{
        "Where",
        "",
        {{3, 1}},
        {},
        {randomFloatTensor("x", {3, 4}, 12, 1.f), randomFloatTensor("other", {4}, 13, 1.f)}};
    where.firstInputType = DType::Bool;
    row("where broadcast", where);
    // Reductions, pools, normalisation
    row("reduce mean last", {"ReduceMean", "", {{4, 33}}, {intsAttr("axes", {-1})}});
    row("reduce mean middle, no keepdims",
        {"ReduceMean", "", {{3, 5, 4}}, {intsAttr("axes", {1}), intAttr("keepdims", 0)}});
    row("reduce sum all (input axes)", {"ReduceSum", "", {{3, 5, 4}}, {}, {}, 13});
    row("reduce sum two axes",
        {"ReduceSum", "", {{3, 5, 4}}, {}, {int64Tensor("axes", {2}, {0, 2})}, 13});
    row("reduce max", {"ReduceMax", "", {{6, 7}}, {intsAttr("axes", {0})}});
    row("global average pool", {"GlobalAveragePool", "", {{2, 3, 5, 7}}});
    row("max pool 3x3 s2 p1", {"MaxPool",
                               "",
                               {{1, 2, 9, 9}},
                               {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}),
                                intsAttr("pads", {1, 1, 1, 1})}});
    row("max pool ceil, dilation",
        {"MaxPool",
         "",
         {{1, 2, 10, 10}},
         {intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {3, 3}),
          intsAttr("dilations", {2, 2}), intAttr("ceil_mode", 1)}});
    row("average pool count pads",
        {"AveragePool",
         "",
         {{2, 1, 7, 6}},
         {intsAttr("kernel_shape", {3, 2}), intsAttr("pads", {1, 0, 1, 1}),
          intAttr("count_include_pad", 1)}});
    row("average pool leaves pads out, ceil",
        {"AveragePool",
         "",
         {{1, 3, 8, 7}},
         {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}), intsAttr("pads", {1, 1, 1, 0}),
          intAttr("ceil_mode", 1)}});
    row("max pool, each axis its own window",
        {"MaxPool",
         "",
         {{2, 2, 9, 11}},
         {intsAttr("kernel_shape", {3, 2}), intsAttr("strides", {2, 1}), intsAttr("dilations", {1, 3}),
          intsAttr("pads", {1, 0, 0, 2})}});
    row("max pool 3-D", {"MaxPool",
                         "",
                         {{1, 2, 5, 6, 7}},
                         {intsAttr("kernel_shape", {2, 3, 2}), intsAttr("strides", {1, 2, 2}),
                          intsAttr("pads", {0, 1, 1, 1, 1, 0})}});
    row("average pool 1-D", {"AveragePool",
                             "",
                             {{2, 3, 11}},
                             {intsAttr("kernel_shape", {4}), intsAttr("strides", {2})}});
    row("batch norm",
        {"BatchNormalization",
         "",
         {{2, 3, 4, 5}},
         {floatAttr("epsilon", 1e-3f)},
         {randomFloatTensor("s", {3}, 14, 1.f), randomFloatTensor("b", {3}, 15, 1.f),
          randomFloatTensor("m", {3}, 16, 1.f), positiveTensor("v", {3}, 17)}});
    row("skip layer norm",
        {"SkipLayerNorm",
         "ai.fusescope",
         {{2, 3, 40}, {2, 3, 40}},
         {floatAttr("epsilon", 1e-5f)},
         {randomFloatTensor("g", {40}, 18, 1.f), randomFloatTensor("b", {40}, 19, 1.f)}});
    // Convolutions (cuDNN on a GPU, its reference on the simulated device)
    row("conv 3x3 pad 1 bias", {"Conv",
                                "",
                                {{2, 3, 9, 8}},
                                {intsAttr("pads", {1, 1, 1, 1})},
                                {randomFloatTensor("w", {4, 3, 3, 3}, 20, 0.5f),
                                 randomFloatTensor("b", {4}, 21, 1.f)}});
    row("conv strided dilated", {"Conv",
                                 "",
                                 {{1, 2, 11, 11}},
                                 {intsAttr("strides", {2, 2}), intsAttr("dilations", {2, 2})},
                                 {randomFloatTensor("w", {3, 2, 3, 3}, 22, 0.5f)}});
    row("conv grouped 1-D", {"Conv",
                             "",
                             {{2, 4, 13}},
                             {intAttr("group", 2), intsAttr("pads", {2, 2})},
                             {randomFloatTensor("w", {6, 2, 5}, 23, 0.5f)}});
    row("conv depthwise", {"Conv",
                           "",
                           {{1, 3, 7, 7}},
                           {intAttr("group", 3), intsAttr("pads", {1, 1, 1, 1})},
                           {randomFloatTensor("w", {3, 1, 3, 3}, 24, 0.5f)}});
    row("fused conv relu", {"FusedConv",
                            "ai.fusescope",
                            {{1, 3, 6, 6}},
                            {stringAttr("activation", "Relu")},
                            {randomFloatTensor("w", {5, 3, 1, 1}, 25, 0.5f),
                             randomFloatTensor("b", {5}, 26, 1.f)}});
    // A residual Z (residual-fusion's fourth input), added before the activation.
    row("fused conv residual relu", {"FusedConv",
                                     "ai.fusescope",
                                     {{1, 3, 6, 6}},
                                     {stringAttr("activation", "Relu")},
                                     {randomFloatTensor("w", {5, 3, 1, 1}, 35, 0.5f),
                                      randomFloatTensor("b", {5}, 36, 1.f), randomFloatTensor("z", {1, 5, 6, 6}, 37, 1.f)}});
    row("fused conv channels last residual",
        {"FusedConv",
         "ai.fusescope",
         {{1, 7, 7, 4}},
         {intAttr("channels_last", 1), intsAttr("pads", {1, 1, 1, 1}), stringAttr("activation", "Relu")},
         {randomFloatTensor("w", {6, 4, 3, 3}, 38, 0.5f), randomFloatTensor("b", {6}, 39, 1.f),
          randomFloatTensor("z", {1, 7, 7, 6}, 40, 1.f)}});
    // channels_last: X [N, H, W, C] and Y NHWC; the CPU side runs its NHWC kernels.
    row("fused conv channels last grouped strided",
        {"FusedConv",
         "ai.fusescope",
         {{2, 9, 8, 4}},
         {intAttr("channels_last", 1), intAttr("group", 2), intsAttr("strides", {2, 1}),
          intsAttr("pads", {1, 1, 1, 1}), stringAttr("activation", "Relu")},
         {randomFloatTensor("w", {6, 2, 3, 3}, 27, 0.5f), randomFloatTensor("b", {6}, 28, 1.f)}});
    row("fused conv channels last depthwise",
        {"FusedConv",
         "ai.fusescope",
         {{1, 7, 7, 20}},
         {intAttr("channels_last", 1), intAttr("group", 20), intsAttr("pads", {1, 1, 1, 1})},
         {randomFloatTensor("w", {20, 1, 3, 3}, 29, 0.5f), randomFloatTensor("b", {20}, 30, 1.f)}});
    row("fused conv channels last, NCHW input",
        {"FusedConv",
         "ai.fusescope",
         {{2, 3, 9, 8}},
         {intAttr("channels_last", 1), stringAttr("input_layout", "NCHW"), intsAttr("strides", {2, 2}),
          intsAttr("pads", {1, 1, 1, 1}), stringAttr("activation", "Relu")},
         {randomFloatTensor("w", {8, 3, 3, 3}, 33, 0.5f), randomFloatTensor("b", {8}, 34, 1.f)}});
    row("fused conv channels last pointwise",
        {"FusedConv",
         "ai.fusescope",
         {{1, 5, 6, 8}},
         {intAttr("channels_last", 1), stringAttr("activation", "Sigmoid")},
         {randomFloatTensor("w", {12, 8, 1, 1}, 31, 0.5f), randomFloatTensor("b", {12}, 32, 1.f)}});
    row("max pool channels last",
        {"MaxPool",
         "ai.fusescope",
         {{2, 9, 9, 20}},
         {intAttr("channels_last", 1), intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}),
          intsAttr("pads", {1, 1, 1, 1})}});
    row("max pool channels last ceil, dilation",
        {"MaxPool",
         "ai.fusescope",
         {{1, 10, 10, 3}},
         {intAttr("channels_last", 1), intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {3, 3}),
          intsAttr("dilations", {2, 2}), intAttr("ceil_mode", 1)}});
    row("average pool channels last, count pads",
        {"AveragePool",
         "ai.fusescope",
         {{2, 7, 6, 20}},
         {intAttr("channels_last", 1), intsAttr("kernel_shape", {3, 2}), intsAttr("pads", {1, 0, 1, 1}),
          intAttr("count_include_pad", 1)}});
    row("average pool channels last 2x2 s2",
        {"AveragePool",
         "ai.fusescope",
         {{1, 8, 8, 16}},
         {intAttr("channels_last", 1), intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {2, 2})}});
    row("reduce mean middle axes", {"ReduceMean", "", {{2, 5, 4, 6}}, {intsAttr("axes", {1, 2})}});
    row("transpose to channels last", {"Transpose", "", {{2, 3, 5, 7}}, {intsAttr("perm", {0, 2, 3, 1})}});
    // The CPU's Transpose paths: few columns, square tiles with remainders, no merge.
    row("transpose back to channels first", {"Transpose", "", {{2, 5, 7, 3}}, {intsAttr("perm", {0, 3, 1, 2})}});
    row("transpose in tiles", {"Transpose", "", {{2, 40, 33}}, {intsAttr("perm", {0, 2, 1})}});
    row("transpose unmerged", {"Transpose", "", {{2, 3, 4, 5}}, {intsAttr("perm", {1, 0, 3, 2})}});
    // Reductions over a middle block: summed in float blocks of 64 rows, or kept as is.
    row("reduce mean middle, many rows", {"ReduceMean", "", {{2, 150, 7, 5}}, {intsAttr("axes", {1, 2})}});
    row("reduce max middle axes", {"ReduceMax", "", {{2, 5, 4, 6}}, {intsAttr("axes", {1, 2})}});
    // One operand a row repeated over the other's rows (a channels-last scale), both ways.
    row("mul per-channel row", {"Mul", "", {{2, 5, 4, 6}, {1, 1, 1, 6}}});
    row("sub row first", {"Sub", "", {{1, 1, 6}, {3, 5, 6}}});
    row("fused gemm sigmoid",
        {"FusedGemm",
         "ai.fusescope",
         {{4, 6}},
         {intAttr("transB", 1), stringAttr("activation", "Sigmoid")},
         {randomFloatTensor("w", {3, 6}, 27, 1.f), randomFloatTensor("c", {3}, 28, 1.f)}});
    // Attention: plain, with head permutations, with a broadcast mask
    row("attention plain", {"Attention",
                            "ai.fusescope",
                            {{2, 5, 8}, {2, 8, 7}, {2, 7, 6}},
                            {floatAttr("scale", 0.35f)}});
    row("attention head transposes",
        {"Attention",
         "ai.fusescope",
         {{2, 5, 3, 4}, {2, 6, 3, 4}, {2, 6, 3, 4}},
         {floatAttr("scale", 0.5f), intsAttr("q_perm", {0, 2, 1, 3}),
          intsAttr("k_perm", {0, 2, 3, 1}), intsAttr("v_perm", {0, 2, 1, 3}),
          intsAttr("out_perm", {0, 2, 1, 3})}});
    // PyTorch 2's heads after reshape-before-transpose: Q, K and V stored [L, N, H, D], read
    // as [N, H, L, D] (K^T's perm composed with it), the output written back [L, N, H, D].
    row("attention heads split after the projection",
        {"Attention",
         "ai.fusescope",
         {{5, 2, 3, 4}, {6, 2, 3, 4}, {6, 2, 3, 4}},
         {floatAttr("scale", 0.5f), intsAttr("q_perm", {1, 2, 0, 3}), intsAttr("k_perm", {1, 2, 3, 0}),
          intsAttr("v_perm", {1, 2, 0, 3}), intsAttr("out_perm", {2, 0, 1, 3})}});
    row("attention mask, many keys", {"Attention",
                                      "ai.fusescope",
                                      {{1, 2, 3, 4}, {1, 2, 4, 70}, {1, 2, 70, 5}},
                                      {},
                                      {randomFloatTensor("mask", {1, 1, 3, 70}, 29, 4.f)}});
    // The GPU's softmax keeps up to 1024 keys a row in registers, more in the scratch row.
    row("attention 300 keys", {"Attention", "ai.fusescope", {{1, 2, 3, 8}, {1, 2, 8, 300}, {1, 2, 300, 4}}});
    row("attention 1100 keys", {"Attention", "ai.fusescope", {{1, 1, 2, 8}, {1, 1, 8, 1100}, {1, 1, 1100, 4}}});
    // Heads as the last stored dim: no unit stride in Q, so the warp kernel runs it.
    row("attention strided heads (warp kernel)",
        {"Attention",
         "ai.fusescope",
         {{2, 5, 4, 3}, {2, 4, 6, 3}, {2, 6, 4, 3}},
         {floatAttr("scale", 0.5f), intsAttr("q_perm", {0, 3, 1, 2}), intsAttr("k_perm", {0, 3, 1, 2}),
          intsAttr("v_perm", {0, 3, 1, 2})}});
    row("attention one query, transposed V",
        {"Attention", "ai.fusescope", {{3, 1, 8}, {3, 8, 9}, {3, 7, 9}}, {intsAttr("v_perm", {0, 2, 1})}});
    // Resize: every mode on scales and sizes, a region of interest, extrapolation.
    auto scales = [](std::vector<float> v) { return floatTensor("scales", {int64_t(v.size())}, v); };
    auto noRoi = floatTensor("roi", {0}, {});
    row("resize nearest x2 (half_pixel)", {"Resize", "", {{1, 2, 5, 7}}, {}, {noRoi, scales({1, 1, 2, 2})}, 13});
    row("resize nearest floor asymmetric down", {"Resize", "", {{1, 1, 9, 8}},
                                                 {stringAttr("coordinate_transformation_mode", "asymmetric"), stringAttr("nearest_mode", "floor")},
                                                 {noRoi, scales({1, 1, 0.5f, 0.75f})}, 13});
    row("resize linear align corners to sizes", {"Resize", "", {{2, 3, 4, 5}},
                                                 {stringAttr("mode", "linear"), stringAttr("coordinate_transformation_mode", "align_corners")},
                                                 {noRoi, floatTensor("scales", {0}, {}), int64Tensor("sizes", {4}, {2, 3, 7, 3})}, 13});
    row("resize linear pytorch half pixel", {"Resize", "", {{1, 2, 6, 6}},
                                             {stringAttr("mode", "linear"), stringAttr("coordinate_transformation_mode", "pytorch_half_pixel")},
                                             {noRoi, scales({1, 1, 1.5f, 0.5f})}, 13});
    row("resize cubic exclude outside", {"Resize", "", {{1, 1, 5, 5}},
                                         {stringAttr("mode", "cubic"), intAttr("exclude_outside", 1), floatAttr("cubic_coeff_a", -0.5f)},
                                         {noRoi, scales({1, 1, 1.6f, 1.6f})}, 13});
    row("resize crop and extrapolate", {"Resize", "", {{1, 1, 6, 6}},
                                        {stringAttr("mode", "linear"), stringAttr("coordinate_transformation_mode", "tf_crop_and_resize"),
                                         floatAttr("extrapolation_value", 10.f)},
                                        {floatTensor("roi", {8}, {0, 0, -0.2f, 0.4f, 1, 1, 0.6f, 1.2f}), scales({1, 1, 1.5f, 1.5f})}, 13});
    row("resize 1-D axes opset 18", {"Resize", "", {{3, 10}}, {stringAttr("mode", "linear"), intsAttr("axes", {1})},
                                     {noRoi, scales({0.7f})}, 18});
    // 8-bit images: interpolated values truncate toward zero; cubic overshoots saturate.
    OpCase linearBytes{"Resize", "", {{1, 2, 5, 6}}, {stringAttr("mode", "linear")}, {noRoi, scales({1, 1, 1.5f, 1.7f})}, 13};
    linearBytes.dtype = DType::Int8;
    row("resize linear int8", linearBytes, 0);
    OpCase cubicBytes{"Resize", "", {{1, 2, 5, 6}}, {stringAttr("mode", "cubic")}, {noRoi, scales({1, 1, 2, 1.5f})}, 13};
    cubicBytes.dtype = DType::UInt8;
    row("resize cubic uint8", cubicBytes, 0);
    // INT8: exact int32 sums of the full int8 range, batched A folded into rows.
    auto int8Weight = [](std::vector<int64_t> dims, uint64_t seed) {
        std::mt19937_64 rng(seed);
        std::string bytes(size_t(dims[0] * dims[1]), '\0');
        for (char& b : bytes) b = char(int(rng() % 256) - 128);
        const size_t size = bytes.size();
        return Tensor("w", DType::Int8, std::move(dims), makeBuffer(std::move(bytes)), 0, size);
    };
    OpCase integer{"MatMulInteger", "", {{5, 12}}, {}, {int8Weight({12, 8}, 31)}};
    integer.dtype = DType::Int8;
    row("matmul integer int8", integer, 0);
    OpCase batchedInteger{"MatMulInteger", "", {{2, 3, 16}}, {}, {int8Weight({16, 4}, 32)}};
    batchedInteger.dtype = DType::Int8;
    row("matmul integer batched A", batchedInteger, 0);
    OpCase emptyK{"MatMulInteger", "", {{3, 0}}, {}, {int8Weight({0, 8}, 33)}};
    emptyK.dtype = DType::Int8;
    row("matmul integer empty K", emptyK, 0);
    // Quantize and dequantize per tensor: rounding half to even, saturation, zero points.
    auto byteScalar = [](const char* name, DType t, int value) {
        std::string bytes(1, char(value));
        return Tensor(name, t, {}, makeBuffer(std::move(bytes)), 0, 1);
    };
    row("quantize to uint8", {"QuantizeLinear", "", {{3, 41}}, {}, {floatTensor("s", {}, {0.0125f}), byteScalar("z", DType::UInt8, 128)}, 13}, 0);
    row("quantize, no zero point (uint8)", {"QuantizeLinear", "", {{50}}, {}, {floatTensor("s", {}, {0.5f})}, 13}, 0);
    OpCase dequantize{"DequantizeLinear", "", {{4, 9}}, {}, {floatTensor("s", {}, {0.03f}), byteScalar("z", DType::Int8, -3)}, 13};
    dequantize.dtype = DType::Int8;
    row("dequantize int8", dequantize, 0);
    row("quantize to int8", {"QuantizeLinear", "", {{3, 41}}, {}, {floatTensor("s", {}, {0.0125f}), byteScalar("z", DType::Int8, -5)}, 13}, 0);
    for (DType t : {DType::Float16, DType::BFloat16}) {  // opset 19: the scale's type is the output's
        OpCase narrow{"DequantizeLinear", "", {{4, 9}}, {}, {inDType({"", "", {}, {}, {floatTensor("s", {}, {0.03f})}}, t).constants[0], byteScalar("z", DType::Int8, -3)}, 19};
        narrow.dtype = DType::Int8;
        row(t == DType::Float16 ? "dequantize int8 to float16" : "dequantize int8 to bfloat16", narrow, 0);
    }
    OpCase toFloat{"Cast", "", {{33}}, {intAttr("to", int64_t(DType::Float32))}};
    toFloat.dtype = DType::Float16;
    row("cast float16 to float32", toFloat, 0);
    row("min", {"Min", "", {{2, 9}, {9}}});
    // The ai.fusescope forms of ops that older opsets lack, and a fused element-wise group.
    row("gelu (ai.fusescope)", {"Gelu", "ai.fusescope", {{5, 17}}});
    row("layer norm (ai.fusescope)", {"LayerNormalization", "ai.fusescope", {{3, 40}}, {floatAttr("epsilon", 1e-5f)},
                                      {randomFloatTensor("scale", {40}, 52, 1.f), randomFloatTensor("bias", {40}, 53, 1.f)}});
    row("fused elementwise (ai.fusescope)",
        {"FusedElementwise", "ai.fusescope", {{4, 33}, {1, 33}}, {stringsAttr("ops", {"Add", "Sigmoid"}), intsAttr("args", {0, 1, 2, -1})}});
    // bfloat16 attention rounds the probabilities to bfloat16 between the GEMMs (2^-9).
    OpCase bfAttention{"Attention", "ai.fusescope", {{2, 5, 8}, {2, 8, 7}, {2, 7, 6}}, {floatAttr("scale", 0.35f)}};
    bfAttention.dtype = DType::BFloat16;
    row("attention plain bfloat16", bfAttention, 6e-2);
    row("rms norm", {"RmsNorm", "ai.fusescope", {{3, 40}}, {floatAttr("epsilon", 1e-5f)}, {randomFloatTensor("scale", {40}, 51, 1.f)}});
    row("upsample nearest x2 (opset 9)", {"Upsample", "", {{1, 2, 3, 4}}, {stringAttr("mode", "nearest")},
                                          {floatTensor("scales", {4}, {1, 1, 2, 2})}, 9});
    // bfloat16 convolutions add the bias in a second pass over the rounded output, so a
    // value that the bias nearly cancels carries the first rounding (2^-9 of the sum).
    OpCase bfConv{"Conv", "", {{2, 3, 9, 8}}, {intsAttr("pads", {1, 1, 1, 1})},
                  {inDType({"", "", {}, {}, {randomFloatTensor("w", {4, 3, 3, 3}, 20, 0.5f), randomFloatTensor("b", {4}, 21, 1.f)}}, DType::BFloat16).constants}};
    bfConv.dtype = DType::BFloat16;
    row("conv 3x3 pad 1 bias bfloat16", bfConv, 6e-2);
    OpCase half{"Add", "", {{3, 40}, {40}}};
    half.dtype = DType::Float16;
    row("add float16", half, 2e-3);
    OpCase bf{"Softmax", "", {{3, 40}}};
    bf.dtype = DType::BFloat16;
    row("softmax bfloat16", bf, 2e-2);
    OpCase halfMm{"MatMul", "", {{4, 16}, {16, 8}}};
    halfMm.dtype = DType::Float16;
    row("matmul float16", halfMm, 1e-2);
    // What the fusions make of a float16 export (model.half()): epilogues, residual, norm.
    OpCase halfResidual{"FusedConv",
                        "ai.fusescope",
                        {{1, 3, 6, 6}},
                        {stringAttr("activation", "Relu")},
                        {halfWeights("w", {5, 3, 1, 1}), halfWeights("b", {5}), halfWeights("z", {1, 5, 6, 6})}};
    halfResidual.dtype = DType::Float16;
    row("fused conv residual relu float16", halfResidual, 1e-2);
    OpCase halfGelu{"FusedMatMul", "ai.fusescope", {{5, 8}, {8, 6}}, {stringAttr("activation", "Gelu")}, {halfWeights("bias", {6})}};
    halfGelu.dtype = DType::Float16;
    row("fused matmul gelu float16", halfGelu, 1e-2);
    // Rows of 24 halves: the epilogue takes them 8 at a time (biasActVector).
    OpCase halfGeluGroups{"FusedMatMul", "ai.fusescope", {{4, 32}, {32, 24}}, {stringAttr("activation", "Gelu")}, {halfWeights("bias", {24})}};
    halfGeluGroups.dtype = DType::Float16;
    row("fused matmul gelu float16, 16-byte groups", halfGeluGroups, 1e-2);
    row("fused matmul gelu, 16-byte groups",
        {"FusedMatMul", "ai.fusescope", {{4, 32}, {32, 12}}, {stringAttr("activation", "Gelu")}, {randomFloatTensor("bias", {12}, 43, 1.f)}});
    // float16 convolutions as channels-last lays them out, with bias, residual and ReLU; and
    // an NCHW one whose 8x8 planes hold whole groups of the epilogue.
    OpCase halfNhwc{"FusedConv",
                    "ai.fusescope",
                    {{2, 5, 5, 8}},
                    {intAttr("channels_last", 1), intsAttr("pads", {1, 1, 1, 1}), stringAttr("activation", "Relu")},
                    {halfWeights("w", {16, 8, 3, 3}), halfWeights("b", {16}), halfWeights("z", {2, 5, 5, 16})}};
    halfNhwc.dtype = DType::Float16;
    row("fused conv channels last residual float16", halfNhwc, 1e-2);
    OpCase halfPlanes{"FusedConv",
                      "ai.fusescope",
                      {{1, 4, 8, 8}},
                      {stringAttr("activation", "Relu")},
                      {halfWeights("w", {8, 4, 1, 1}), halfWeights("b", {8}), halfWeights("z", {1, 8, 8, 8})}};
    halfPlanes.dtype = DType::Float16;
    row("fused conv residual relu float16, whole planes", halfPlanes, 1e-2);
    OpCase halfSkip{"SkipLayerNorm", "ai.fusescope", {{2, 3, 40}, {2, 3, 40}}, {floatAttr("epsilon", 1e-5f)},
                    {halfWeights("g", {40}), halfWeights("b", {40})}};
    halfSkip.dtype = DType::Float16;
    row("skip layer norm float16", halfSkip, 2e-2);
    OpCase halfAttention{"Attention",
                         "ai.fusescope",
                         {{2, 5, 3, 8}, {2, 6, 3, 8}, {2, 6, 3, 8}},
                         {floatAttr("scale", 0.35f), intsAttr("q_perm", {0, 2, 1, 3}),
                          intsAttr("k_perm", {0, 2, 3, 1}), intsAttr("v_perm", {0, 2, 1, 3}),
                          intsAttr("out_perm", {0, 2, 1, 3})}};
    halfAttention.dtype = DType::Float16;
    // The device rounds the probabilities to float16 between its GEMMs (as fp16 attention
    // kernels do); the CPU keeps them in float32: up to 2^-11 of sum |P V|.
    row("attention float16", halfAttention, 2e-2);
    OpCase halfConv{"Conv",
                    "",
                    {{1, 4, 6, 6}},
                    {intsAttr("pads", {1, 1, 1, 1})},
                    {halfWeights("w", {2, 4, 3, 3})}};
    halfConv.dtype = DType::Float16;
    row("conv float16", halfConv, 1e-2);

    // The claimed (op, dtype) pairs without a case above: the op's first float32 case in
    // that dtype (float inputs and float constants converted; Resize's scales and roi stay
    // float32, as ONNX has them).
    std::set<std::pair<std::string, DType>> have;
    std::vector<DType> outputs;
    for (const OpRow& r : rows) {
        outputs.push_back(caseOutputType(r.c));
        have.insert({caseKey(r.c), outputs.back()});
    }
    const CapabilityTable& table = cudaCapabilities();
    const size_t written = rows.size();
    for (const std::string& entry : table.entries()) {
        if (kHostByDesign.count(entry)) continue;
        for (DType t : claimedDTypes(table, entry)) {
            if (have.count({entry, t})) continue;
            for (size_t i = 0; i < written; ++i) {
                if (caseKey(rows[i].c) != entry || outputs[i] != DType::Float32) continue;
                const double tol = t == DType::Float16    ? std::max(rows[i].tolerance, 2e-3)
                                   : t == DType::BFloat16 ? std::max(rows[i].tolerance, 2e-2)
                                                          : 0.0;
                rows.push_back({rows[i].name + " as " + std::string(dtypeName(t)), inDType(rows[i].c, t), tol});
                break;
            }
        }
    }
    return rows;
}

// Fixtures whose steps run on the host by design, with the least share of their steps
// expected on the device (every other fixture: half).
const std::map<std::string, double> kDeviceShareFloor = {
    {"nested.onnx", 0.0},  // one top-level If: the host decides, as capabilities.txt says
    // Its If is decided on the host and the Greater feeding it has no device kernel.
    {"repeated_graph_output.onnx", 0.3},
    // Sequences live on the host: its SequenceEmpty, Loop and the two sequence conversions.
    {"sequence_loop.onnx", 0.2},
};

// Fixtures wholly on the device that are not captured as a CUDA Graph: their graph outputs
// are constants (Constant nodes, Identity of initializers), which live outside the arena,
// so the capture declines and the run goes step by step.
const std::set<std::string> kNotReplayed = {"all_dtypes.onnx", "constants.onnx"};

}  // namespace

Q_DECLARE_METATYPE(OpCase)
Q_DECLARE_METATYPE(fsc::DType)

class TestCudaBackend : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (onGpu())
            qInfo("running on the GPU: %s", testDevice()->name().c_str());
        else
            qInfo(
                "running on the simulated device (set FUSESCOPE_TEST_DEVICE=gpu on a GPU machine)");
    }

    // The generic element-wise and copy kernels index through as few dims as the operands
    // allow, in 32 bits when every offset fits (singleOps checks the results).
    void genericKernelsIndexFewDims() {
        dk::EwParams add{};  // [32, 197, 768] + [768]
        add.inputs = 2, add.codeLength = 1, add.a[0] = 0, add.b[0] = 1, add.rank = 3;
        const int64_t dims[] = {32, 197, 768}, full[] = {197 * 768, 768, 1}, row[] = {0, 0, 1};
        for (int d = 0; d < 3; ++d) add.dims[d] = dims[d], add.strides[0][d] = full[d], add.strides[1][d] = row[d];
        add.count = 32 * 197 * 768;
        dk::simplifyElementwise(add);
        QCOMPARE(add.rank, 2);
        QCOMPARE(add.dims[0], int64_t(32 * 197));
        QCOMPARE(add.strides[1][0], int64_t(0));
        QVERIFY(add.index32 && add.singleOp);
        dk::EwParams swapped = add;  // y - x: the single-op kernel reads x first, so not it
        swapped.a[0] = 1, swapped.b[0] = 0;
        dk::simplifyElementwise(swapped);
        QVERIFY(!swapped.singleOp);
        add.count = int64_t(3) << 30;
        add.rank = 1, add.dims[0] = add.count, add.strides[0][0] = add.strides[1][0] = 1;
        dk::simplifyElementwise(add);
        QVERIFY(!add.index32);

        dk::CopyParams transpose{};  // [B, L, H, D] -> [B, H, L, D]: rows of D move whole
        transpose.rank = 4;
        const int64_t box[] = {2, 12, 197, 64}, src[] = {197 * 12 * 64, 64, 12 * 64, 1}, dst[] = {12 * 197 * 64, 197 * 64, 64, 1};
        for (int d = 0; d < 4; ++d) transpose.dims[d] = box[d], transpose.srcStrides[d] = src[d], transpose.dstStrides[d] = dst[d];
        transpose.count = 2 * 12 * 197 * 64;
        dk::CopyParams misaligned = transpose;
        dk::simplifyCopy(transpose);
        QCOMPARE(transpose.rank, 4);
        QVERIFY(transpose.index32);
        // Float32 rows of 64 move as 16 words of 16 bytes, every stride in words.
        QCOMPARE(transpose.wordBytes, 16);
        QCOMPARE(transpose.dims[3], int64_t(16));
        QCOMPARE(transpose.srcStrides[2], int64_t(12 * 16));
        QCOMPARE(transpose.count, int64_t(2 * 12 * 197 * 16));
        static float storage[8];  // a source 8 bytes past 16-byte alignment: 8-byte words
        misaligned.src = reinterpret_cast<const char*>(storage) + (16 - reinterpret_cast<uintptr_t>(storage) % 16) % 16 + 8;
        dk::simplifyCopy(misaligned);
        QCOMPARE(misaligned.wordBytes, 8);
        dk::CopyParams slice{};  // a box far into a large source: offsets past 2^31
        slice.rank = 2, slice.dims[0] = 3, slice.dims[1] = 3;
        slice.srcStrides[0] = int64_t(1) << 30, slice.srcStrides[1] = 1, slice.dstStrides[0] = 3, slice.dstStrides[1] = 1;
        slice.count = 9;
        dk::simplifyCopy(slice);
        QVERIFY(!slice.index32);
        QCOMPARE(slice.wordBytes, 0);  // rows of 3 floats: no wider word divides them
    }

    // The bias-activation epilogue takes 16 bytes of each operand a step where the pointers,
    // the count and the bias allow it, and computes what the element-by-element path does.
    void biasActivationInSixteenByteGroups() {
        alignas(16) static uint16_t in[64 + 8], bias[16 + 8], residual[64 + 8], grouped[64 + 8], single[64 + 8];
        std::mt19937_64 rng(5);
        std::uniform_real_distribution<float> u(-2.f, 2.f);
        for (auto* a : {in, residual}) for (int i = 0; i < 64; ++i) a[i] = floatToHalf(u(rng));
        for (int i = 0; i < 16; ++i) bias[i] = floatToHalf(u(rng));
        dk::BiasActParams p{};  // [4, 16] float16 rows + bias [16] + residual, then erf GELU
        p.in = in, p.bias = bias, p.residual = residual, p.type = dk::ElemType::F16, p.act = dk::Act::Gelu;
        p.cols = 16, p.biasInner = 1, p.count = 64;
        p.out = grouped;
        QCOMPARE(dk::biasActVector(p), 8);
        p.vector = 8;
        QCOMPARE(dk::biasActSteps(p), int64_t(8));
        for (int64_t i = 0; i < dk::biasActSteps(p); ++i) dk::biasActElement(p, i);
        p.out = single, p.vector = 1;
        for (int64_t i = 0; i < p.count; ++i) dk::biasActElement(p, i);
        QCOMPARE(std::memcmp(grouped, single, 64 * 2), 0);
        // NCHW channels: one bias value per group when the plane holds whole groups.
        dk::BiasActParams planes = p;
        planes.biasInner = 16, planes.cols = 4;
        QCOMPARE(dk::biasActVector(planes), 8);
        planes.biasInner = 12, planes.count = 48;  // a 12-element plane splits a group
        QCOMPARE(dk::biasActVector(planes), 1);
        dk::BiasActParams odd = p;
        odd.cols = 12, odd.count = 48;  // rows of 12 halves: a group would straddle two rows
        QCOMPARE(dk::biasActVector(odd), 1);
        odd = p;
        odd.in = in + 1;  // 2 bytes past alignment
        QCOMPARE(dk::biasActVector(odd), 1);
        odd = p;
        odd.type = dk::ElemType::F32, odd.count = 32;  // float32: groups of 4
        QCOMPARE(dk::biasActVector(odd), 4);
    }

    // Every device kernel, on random, odd, broadcast and empty shapes, against the CPU kernel.
    void singleOps_data() {
        QTest::addColumn<OpCase>("c");
        QTest::addColumn<double>("tolerance");
        for (const OpRow& r : singleOpCases()) QTest::newRow(r.name.c_str()) << r.c << r.tolerance;
    }
    void singleOps() {
        QFETCH(OpCase, c);
        QFETCH(double, tolerance);
        const Model model = opModel(c);
        std::mt19937_64 rng(11);
        std::vector<RtTensor> feeds;
        for (size_t i = 0; i < c.shapes.size(); ++i)
            feeds.push_back(randomInput(c.feedType(i), c.shapes[i], rng));
        std::unique_ptr<Executor> cuda;
        const Comparison r = compareBackends(model, feeds, testDevice(), &cuda);
        QVERIFY2(r.error.empty(), r.error.c_str());
        // The node ran on the device: no fallback for any op the kernels claim.
        QCOMPARE(int(cuda->plan().steps.size()), 1);
        QVERIFY2(cuda->plan().steps[0].backend == Backend::Cuda,
                 cuda->plan().steps[0].fallbackReason.c_str());
        QVERIFY2(r.worst <= tolerance,
                 qPrintable(QStringLiteral("worst relative error %1").arg(r.worst)));
    }

    // se-pool-fusion's FusedConv: a depthwise channels-last convolution that also gives Y's
    // mean over H and W as its second output (a Reduce launch on the device).
    void channelMeansOnTheDevice() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape::ofSizes({2, 7, 9, 20}));
        const auto outs = g.node("FusedConv",
                                 {x, g.initializer(randomFloatTensor("w", {20, 1, 3, 3}, 41, 0.5f)),
                                  g.initializer(randomFloatTensor("b", {20}, 42, 1.f))},
                                 {"y", "means"},
                                 {intAttr("channels_last", 1), intAttr("group", 20), intsAttr("pads", {1, 1, 1, 1}),
                                  stringAttr("activation", "Swish")},
                                 "dw", "ai.fusescope");
        g.output(outs[0]);
        g.output(outs[1]);
        Model m = g.buildModel();
        m.opsetImports.push_back({"ai.fusescope", 1});
        std::mt19937_64 rng(3);
        std::unique_ptr<Executor> cuda;
        const Comparison r = compareBackends(m, {randomInput(DType::Float32, {2, 7, 9, 20}, rng)}, testDevice(), &cuda);
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY2(cuda->plan().steps[0].backend == Backend::Cuda, cuda->plan().steps[0].fallbackReason.c_str());
        QVERIFY2(r.worst < 1e-5, qPrintable(QStringLiteral("worst relative error %1").arg(r.worst)));
    }

    // An op the table lacks runs on the CPU between device nodes, with the copies counted.
    void fallbackCopiesAreExplicit() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape({Dim::known(4), Dim::known(8)}));
        ValueId w = g.initializer(randomFloatTensor("w", {8, 8}, 3, 1.f));
        ValueId mm = g.op("MatMul", {x, w}, "mm");
        ValueId cosine = g.op("Cos", {mm}, "cos");
        g.output(g.op("Add", {cosine, x}, "y"));
        const Model m = test::withInferredTypes(g, 17);
        std::mt19937_64 rng(1);
        auto device = testDevice();
        std::unique_ptr<Executor> cuda;
        const Comparison r =
            compareBackends(m, {randomInput(DType::Float32, {4, 8}, rng)}, device, &cuda);
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.worst < 1e-5);
        const auto& steps = cuda->plan().steps;
        QCOMPARE(int(steps.size()), 3);
        QVERIFY(steps[0].backend == Backend::Cuda && steps[2].backend == Backend::Cuda);
        QVERIFY(steps[1].backend == Backend::Cpu);
        QVERIFY2(steps[1].fallbackReason.find("Cos is not in the CUDA capability table") !=
                     std::string::npos,
                 steps[1].fallbackReason.c_str());
        // x and the weights go up, mm comes down, cos goes up, y comes down.
        const TransferStats& t = cuda->lastTransfers();
        QCOMPARE(t.copies, 5);
        QCOMPARE(t.hostToDeviceBytes, int64_t(4 * 8 * 4 + 8 * 8 * 4 + 4 * 8 * 4));
        QCOMPARE(t.deviceToHostBytes, int64_t(4 * 8 * 4 * 2));
        QVERIFY(!t.graphReplayed);
    }

    // Every fixture model and the sample, compiled at O2, matches the CPU backend on three
    // runs of one executor (measured; captured and replayed; replayed from the planned
    // arena), with at least the expected share of its steps on the device. A fixture that
    // does not import, compile or run fails, unless fixturesTheCpuRefuses() says why.
    void fixtureModelsMatchCpu_data() {
        QTest::addColumn<QString>("path");
        for (const QString& p : test::goodFixtures())
            QTest::newRow(qPrintable(QFileInfo(p).fileName())) << p;
        QTest::newRow("sample.onnx") << test::sampleModel();
    }
    void fixtureModelsMatchCpu() {
        QFETCH(QString, path);
        const std::string name = QFileInfo(path).fileName().toStdString();
        const auto skip = test::fixturesTheCpuRefuses().find(name);
        auto imported = importModel(path.toStdString());
        QVERIFY2(imported, imported ? "" : imported.status().message().c_str());
        auto passes = resolvePipeline("O2", "", {});
        QVERIFY(passes.isOk());
        auto compiled = compileModel(*imported, *passes);
        QVERIFY2(compiled, compiled ? "" : compiled.status().message().c_str());
        const Model& model = compiled->model;
        auto cpu = Executor::create(model, cpuExecutorOptions());
        if (skip != test::fixturesTheCpuRefuses().end()) {
            QVERIFY2(!cpu, "the CPU backend runs it now: take it off fixturesTheCpuRefuses()");
            QVERIFY2(cpu.status().message().find(skip->second) != std::string::npos, cpu.status().message().c_str());
            QSKIP(qPrintable(QStringLiteral("the CPU backend refuses it by design: ") +
                             QString::fromStdString(cpu.status().message())));
        }
        QVERIFY2(cpu, cpu ? "" : cpu.status().message().c_str());

        ExecutorOptions options = cudaExecutorOptions(testDevice());
        auto cuda = Executor::create(model, options);
        QVERIFY2(cuda, cuda ? "" : cuda.status().message().c_str());
        // Other inputs each run: a replay that read stale inputs or left stale outputs fails.
        for (int run = 0; run < 3; ++run) {
            FeedOptions seeded;
            seeded.seed = uint64_t(run);
            auto feeds = buildFeeds(**cpu, seeded);
            QVERIFY2(feeds, feeds ? "" : feeds.status().message().c_str());
            auto expected = (*cpu)->run(feeds->tensors);
            QVERIFY2(expected, expected ? "" : expected.status().message().c_str());
            auto got = (*cuda)->run(feeds->tensors);
            QVERIFY2(got, got ? "" : got.status().message().c_str());
            QCOMPARE(got->size(), expected->size());
            for (size_t i = 0; i < got->size(); ++i) {
                const double error = worstError((*expected)[i], (*got)[i]);
                QVERIFY2(error <= 1e-4, qPrintable(QStringLiteral("run %1, output %2: worst relative error %3")
                                                       .arg(run + 1).arg(i).arg(error)));
            }
        }
        int onDevice = 0;
        const auto& steps = (*cuda)->plan().steps;
        for (const auto& step : steps) onDevice += step.backend == Backend::Cuda;
        const double share = steps.empty() ? 0.0 : double(onDevice) / double(steps.size());
        const auto floor = kDeviceShareFloor.find(name);
        const double least = floor == kDeviceShareFloor.end() ? 0.5 : floor->second;
        qInfo("%s: %d of %zu steps on the device", name.c_str(), onDevice, steps.size());
        QVERIFY2(share >= least, qPrintable(QStringLiteral("%1 of %2 steps on the device, expected at least %3%")
                                                .arg(onDevice).arg(steps.size()).arg(100 * least)));
        // A plan wholly on the device is replayed as a CUDA Graph by its third run.
        if (onDevice == int(steps.size()) && !kNotReplayed.count(name))
            QVERIFY2((*cuda)->lastTransfers().graphReplayed, "the third run did not replay a CUDA Graph");
    }

    // A fused element-wise group runs the kernel generated for it (NVRTC's PTX, loaded by
    // name), broadcasting, and inside a captured CUDA Graph; a float16 group loads and stores
    // float16 and computes in float32, as the CPU oracle does once it has widened the inputs.
    void fusedElementwiseRunsTheGeneratedKernel_data() {
        QTest::addColumn<DType>("t");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("float32") << DType::Float32 << 1e-5;
        QTest::newRow("float16") << DType::Float16 << 2e-3;
    }
    void fusedElementwiseRunsTheGeneratedKernel() {
        QFETCH(DType, t);
        QFETCH(double, tolerance);
        GraphBuilder g;
        ValueId x = g.input("x", t, Shape({Dim::known(4), Dim::known(33)}));
        ValueId y = g.input("y", t, Shape({Dim::known(1), Dim::known(33)}));
        ValueId z = g.input("z", t, Shape({Dim::known(4), Dim::known(1)}));
        ValueId s = g.op("Sigmoid", {g.op("Mul", {g.op("Add", {x, y}, "add"), z}, "mul")}, "sig");
        g.output(g.op("Sub", {g.op("Tanh", {s}, "tanh"), x}, "out"));
        auto passes = resolvePipeline("O2", "", {});
        auto compiled = compileModel(test::withInferredTypes(g, 17), *passes);
        QVERIFY(compiled.isOk());
        QCOMPARE(test::countOps(*compiled->model.graph, "FusedElementwise"), 1);
        std::mt19937_64 rng(11);
        std::vector<RtTensor> feeds = {randomInput(t, {4, 33}, rng), randomInput(t, {1, 33}, rng),
                                       randomInput(t, {4, 1}, rng)};
        auto device = testDevice();
        std::unique_ptr<Executor> cuda;
        for (int run = 0; run < 3; ++run) {  // measured, captured and replayed, replayed
            const Comparison r =
                compareBackends(compiled->model, feeds, device, run == 0 ? &cuda : nullptr);
            QVERIFY2(r.error.empty(), r.error.c_str());
            QVERIFY2(r.worst <= tolerance, qPrintable(QString::number(r.worst)));
        }
        if (onGpu()) return;
        const auto* simulated = static_cast<SimulatedGpu*>(device.get());
        if (NvrtcCompiler::available())
            QVERIFY(simulated->counters().generatedLaunches >= 3);
        else
            QCOMPARE(simulated->counters().generatedLaunches,
                     int64_t(0));  // the program kernel instead
    }

    // A run whose nodes are all on the device is captured once and replayed from then on.
    void cudaGraphCapturedAndReplayed() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(16)}));
        ValueId w = g.initializer(randomFloatTensor("w", {16, 8}, 3, 1.f));
        ValueId b = g.initializer(randomFloatTensor("b", {8}, 4, 1.f));
        ValueId y = g.op("Add", {g.op("MatMul", {x, w}, "mm"), b}, "add");
        g.output(g.op("Softmax", {g.op("Relu", {y}, "relu")}, "y"));
        const Model m = test::withInferredTypes(g, 17);
        auto device = std::make_shared<SimulatedGpu>(uint64_t(1) << 30);
        auto cuda = cudaExecutor(m, device);
        QVERIFY2(cuda.isOk(), cuda.status().message().c_str());
        auto cpu = Executor::create(m, cpuExecutorOptions());
        std::mt19937_64 rng(5);
        for (int64_t batch : {3, 3, 3, 5, 3}) {
            RtTensor x0 = randomInput(DType::Float32, {batch, 16}, rng);
            auto want = (*cpu)->run({x0});
            auto got = (*cuda)->run({x0});
            QVERIFY2(got.isOk(), got.status().message().c_str());
            QVERIFY(worstError((*want)[0], (*got)[0]) < 1e-5);
        }
        // batch 3: measured, captured + replayed, replayed; batch 5: measured; batch 3: replayed.
        QCOMPARE(device->counters().replays, int64_t(3));
        QVERIFY((*cuda)->lastTransfers().graphReplayed);
        QCOMPARE((*cuda)->lastTransfers().copies, 2);  // the input in, the output out

        auto plain = cudaExecutor(m, device, false);
        for (int i = 0; i < 3; ++i)
            QVERIFY((*plain)->run({randomInput(DType::Float32, {3, 16}, rng)}).isOk());
        QVERIFY(!(*plain)->lastTransfers().graphReplayed);
        QCOMPARE(device->counters().replays, int64_t(3));
    }

    // --device-io: feeds already on the device, outputs left there; each run's outputs read
    // back equal the host-to-host run's, the graph replays with no host copy at all, and a
    // CPU executor refuses a device feed.
    void deviceResidentRuns() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape({Dim::known(3), Dim::known(16)}));
        ValueId w = g.initializer(randomFloatTensor("w", {16, 8}, 3, 1.f));
        g.output(g.op("Relu", {g.op("MatMul", {x, w}, "mm")}, "y"));
        const Model m = test::withInferredTypes(g, 17);
        auto device = std::make_shared<SimulatedGpu>(uint64_t(1) << 30);
        auto cuda = cudaExecutor(m, device);
        QVERIFY2(cuda.isOk(), cuda.status().message().c_str());
        auto cpu = Executor::create(m, cpuExecutorOptions());
        std::mt19937_64 rng(9);
        const RtTensor x0 = randomInput(DType::Float32, {3, 16}, rng);
        auto want = (*cpu)->run({x0});
        auto onDevice = uploadToDevice(*device, x0);
        QVERIFY(onDevice.isOk() && onDevice->onDevice);
        RunOptions resident;
        resident.outputsOnDevice = true;
        for (int run = 0; run < 3; ++run) {  // measured, captured, replayed
            auto got = (*cuda)->run({*onDevice}, resident);
            QVERIFY2(got.isOk(), got.status().message().c_str());
            QVERIFY((*got)[0].onDevice);
            auto host = downloadToHost(*device, (*got)[0]);
            QVERIFY(host.isOk() && !host->onDevice);
            QVERIFY2(worstError((*want)[0], *host) < 1e-5, ("run " + std::to_string(run)).c_str());
            QCOMPARE((*cuda)->lastTransfers().hostToDeviceBytes, int64_t(run == 0 ? 16 * 8 * 4 : 0));  // weights once
            QCOMPARE((*cuda)->lastTransfers().deviceToHostBytes, int64_t(0));
        }
        QVERIFY((*cuda)->lastTransfers().graphReplayed);
        auto refused = (*cpu)->run({*onDevice});
        QVERIFY(!refused.isOk());
        QVERIFY2(refused.status().message().find("is on a device, and this run has none") != std::string::npos,
                 refused.status().message().c_str());
    }

    // A Reshape on the device takes over its input's slot when nothing reads the input later
    // (no device copy), and copies when something does; both match the CPU, step by step and
    // replayed as a CUDA Graph.
    void deviceReshapeTakesOverItsInput() {
        for (bool inputReadLater : {false, true}) {
            GraphBuilder g;
            ValueId x = g.input("x", DType::Float32, Shape({Dim::known(4), Dim::known(6)}));
            ValueId w = g.initializer(randomFloatTensor("w", {6, 8}, 3, 1.f));
            ValueId shape = g.initializer(int64Tensor("shape", {2}, {8, 4}));
            ValueId product = g.op("MatMul", {x, w}, "mm");
            ValueId reshaped = g.op("Reshape", {product, shape}, "reshape");
            ValueId y = g.op("Relu", {reshaped}, "relu");
            g.output(y);
            if (inputReadLater) g.output(g.op("Neg", {product}, "neg"));
            const Model m = test::withInferredTypes(g, 17);
            auto device = std::make_shared<SimulatedGpu>(uint64_t(1) << 30);
            std::mt19937_64 rng(4);
            const std::vector<RtTensor> feeds{randomInput(DType::Float32, {4, 6}, rng)};
            auto cpu = Executor::create(m, cpuExecutorOptions());
            auto cuda = cudaExecutor(m, device);
            QVERIFY(cpu.isOk() && cuda.isOk());
            auto want = (*cpu)->run(feeds);
            QVERIFY(want.isOk());
            for (int run = 0; run < 3; ++run) {  // measured, captured, replayed
                const int64_t copiedBefore = device->counters().deviceToDeviceBytes;
                auto got = (*cuda)->run(feeds);
                QVERIFY2(got.isOk(), got.status().message().c_str());
                for (size_t i = 0; i < got->size(); ++i) QVERIFY(worstError((*want)[i], (*got)[i]) < 1e-6);
                // The first run measures the sizes, with a buffer per value; later ones use the plan.
                const int64_t copied = device->counters().deviceToDeviceBytes - copiedBefore;
                if (run > 0) QCOMPARE(copied, int64_t(inputReadLater ? 4 * 8 * 4 : 0));
            }
        }
    }

    // TF32: the device rounds float32 inputs to 10 mantissa bits before multiplying
    // (nearest, ties away); results move by more than strict float32's noise and stay within
    // the 5e-3 the device kit allows TF32; half types ignore the flag.
    void tf32RoundsFloat32Inputs() {
        QCOMPARE(roundToTf32(1.f + std::ldexp(1.f, -12)), 1.f);
        QCOMPARE(roundToTf32(1.f + 3 * std::ldexp(1.f, -12)), 1.f + std::ldexp(1.f, -10));
        QCOMPARE(roundToTf32(1.f + std::ldexp(1.f, -11)), 1.f + std::ldexp(1.f, -10));  // a tie goes away from zero
        QCOMPARE(roundToTf32(-1.f - std::ldexp(1.f, -11)), -1.f - std::ldexp(1.f, -10));
        QVERIFY(std::isnan(roundToTf32(std::nanf(""))));
        QCOMPARE(roundToTf32(INFINITY), INFINITY);

        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape({Dim::known(8), Dim::known(64)}));
        ValueId w = g.initializer(randomFloatTensor("w", {64, 32}, 5, 1.f));
        g.output(g.op("MatMul", {x, w}, "y"));
        const Model m = test::withInferredTypes(g, 17);
        std::mt19937_64 rng(4);
        const RtTensor x0 = randomInput(DType::Float32, {8, 64}, rng);
        auto strictCpu = Executor::create(m, cpuExecutorOptions());
        auto want = (*strictCpu)->run({x0});
        ExecutorOptions options = cudaExecutorOptions(makeSimulatedGpu());
        auto strict = Executor::create(m, options);
        options.tf32 = true;
        auto tf32 = Executor::create(m, options);
        // The kit's measure: the largest difference against the output's largest magnitude.
        auto errorOfLargest = [&](const RtTensor& got) {
            double diff = 0, largest = 0;
            for (int64_t i = 0; i < got.numel(); ++i) {
                const double a = (*want)[0].as<float>()[i];
                largest = std::max(largest, std::abs(a));
                diff = std::max(diff, std::abs(a - double(got.as<float>()[i])));
            }
            return diff / largest;
        };
        const double strictError = errorOfLargest((*(*strict)->run({x0}))[0]);
        const double tf32Error = errorOfLargest((*(*tf32)->run({x0}))[0]);
        QVERIFY2(strictError < 1e-5, std::to_string(strictError).c_str());
        QVERIFY2(tf32Error > 1e-5 && tf32Error < 5e-3, std::to_string(tf32Error).c_str());
    }

    // FusedConv's bias, residual and activation travel with the convolution (one device call,
    // no BiasActivation launch); the result against sums done here in double, in both layouts.
    void convolutionCarriesItsEpilogue() {
        for (bool nhwc : {false, true}) {
            auto device = std::make_shared<SimulatedGpu>(uint64_t(1) << 30);
            const int64_t n = 2, c = 3, k = 4, h = 5, w = 5;
            std::mt19937_64 rng(11);
            RtTensor x = randomInput(DType::Float32, nhwc ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w}, rng);
            RtTensor wt = randomInput(DType::Float32, {k, c, 3, 3}, rng);
            RtTensor bias = randomInput(DType::Float32, {k}, rng);
            RtTensor z = randomInput(DType::Float32, nhwc ? std::vector<int64_t>{n, h, w, k} : std::vector<int64_t>{n, k, h, w}, rng);
            auto dx = uploadToDevice(*device, x), dw = uploadToDevice(*device, wt), db = uploadToDevice(*device, bias),
                 dz = uploadToDevice(*device, z), dy = uploadToDevice(*device, allocateTensor(DType::Float32, z.dims));
            ConvCall call;
            call.n = n;
            call.c = c;
            call.k = k;
            call.channelsLast = call.inputChannelsLast = nhwc;
            for (int d = 0; d < 2; ++d) {
                call.inDims[d] = call.outDims[d] = h;
                call.kernel[d] = 3;
                call.pads[d] = 1;
            }
            call.x = dx->data;
            call.w = dw->data;
            call.y = dy->data;
            call.bias = db->data;
            call.z = dz->data;
            call.act = dk::Act::Relu;
            const int64_t launchesBefore = device->counters().launches;
            QVERIFY(device->convolution(call).isOk());
            QCOMPARE(device->counters().launches, launchesBefore);  // no separate epilogue launch
            auto y = downloadToHost(*device, *dy);
            auto at = [&](const RtTensor& t, int64_t b, int64_t ch, int64_t i, int64_t j, int64_t channels) {
                return double(t.as<float>()[nhwc ? ((b * h + i) * w + j) * channels + ch : ((b * channels + ch) * h + i) * w + j]);
            };
            double worst = 0;
            for (int64_t b = 0; b < n; ++b)
                for (int64_t o = 0; o < k; ++o)
                    for (int64_t i = 0; i < h; ++i)
                        for (int64_t j = 0; j < w; ++j) {
                            double acc = double(bias.as<float>()[o]) + at(z, b, o, i, j, k);
                            for (int64_t ci = 0; ci < c; ++ci)
                                for (int64_t r = 0; r < 3; ++r)
                                    for (int64_t q = 0; q < 3; ++q) {
                                        const int64_t ii = i + r - 1, jj = j + q - 1;
                                        if (ii < 0 || jj < 0 || ii >= h || jj >= w) continue;
                                        acc += at(x, b, ci, ii, jj, c) * double(wt.as<float>()[((o * c + ci) * 3 + r) * 3 + q]);
                                    }
                            worst = std::max(worst, std::abs(std::max(acc, 0.0) - at(*y, b, o, i, j, k)));
                        }
            QVERIFY2(worst < 1e-4, (std::string(nhwc ? "NHWC " : "NCHW ") + std::to_string(worst)).c_str());
        }
    }

    // A filter stored KRSC (what cuDNN's NHWC kernels read) gives the same convolution as
    // the KCRS one, and a KRSC filter with other than 2 spatial dims is refused.
    void krscFilterGivesTheSameConvolution() {
        auto device = std::make_shared<SimulatedGpu>(uint64_t(1) << 30);
        const int64_t n = 2, c = 6, k = 4, h = 5, w = 5, group = 2, cg = c / group;
        std::mt19937_64 rng(12);
        RtTensor x = randomInput(DType::Float32, {n, h, w, c}, rng);
        RtTensor kcrs = randomInput(DType::Float32, {k, cg, 3, 3}, rng);
        RtTensor krsc = allocateTensor(DType::Float32, {k, 3, 3, cg});
        for (int64_t o = 0; o < k; ++o)
            for (int64_t i = 0; i < cg; ++i)
                for (int64_t t = 0; t < 9; ++t) krsc.as<float>()[(o * 9 + t) * cg + i] = kcrs.as<float>()[(o * cg + i) * 9 + t];
        auto dx = uploadToDevice(*device, x), dk1 = uploadToDevice(*device, kcrs), dk2 = uploadToDevice(*device, krsc);
        auto y1 = uploadToDevice(*device, allocateTensor(DType::Float32, {n, h, w, k}));
        auto y2 = uploadToDevice(*device, allocateTensor(DType::Float32, {n, h, w, k}));
        QVERIFY(dx && dk1 && dk2 && y1 && y2);
        ConvCall call;
        call.n = n;
        call.c = c;
        call.k = k;
        call.group = group;
        call.channelsLast = call.inputChannelsLast = true;
        for (int d = 0; d < 2; ++d) {
            call.inDims[d] = call.outDims[d] = h;
            call.kernel[d] = 3;
            call.pads[d] = 1;
        }
        call.x = dx->data;
        call.w = dk1->data;
        call.y = y1->data;
        QVERIFY(device->convolution(call).isOk());
        call.w = dk2->data;
        call.y = y2->data;
        call.filterChannelsLast = true;
        QVERIFY(device->convolution(call).isOk());
        auto a = downloadToHost(*device, *y1), b = downloadToHost(*device, *y2);
        QVERIFY(a && b);
        QCOMPARE(worstError(*a, *b), 0.0);
        call.spatial = 1;
        call.outDims[0] = h;
        QVERIFY(!device->convolution(call).isOk());
    }

    // Out of device memory names the node and the bytes; nothing crashes.
    void outOfDeviceMemoryIsOneLine() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape({Dim::known(256), Dim::known(256)}));
        ValueId w = g.initializer(randomFloatTensor("w", {256, 256}, 3, 1.f));
        g.output(g.op("MatMul", {x, w}, "big_product"));
        const Model m = test::withInferredTypes(g, 17);
        // Room for the input and the weights (256 KiB each), not for the product.
        ExecutorOptions options = cudaExecutorOptions(makeSimulatedGpu(600 * 1024));
        auto cuda = Executor::create(m, options);
        QVERIFY(cuda.isOk());
        std::mt19937_64 rng(1);
        auto r = (*cuda)->run({randomInput(DType::Float32, {256, 256}, rng)});
        QVERIFY(!r.isOk());
        const std::string& msg = r.status().message();
        QVERIFY2(
            msg.find("node '") != std::string::npos && msg.find("(MatMul)") != std::string::npos,
            msg.c_str());
        QVERIFY2(msg.find("out of device memory: asked for 262144 bytes") != std::string::npos,
                 msg.c_str());
        QVERIFY(msg.find('\n') == std::string::npos);
    }

    // The simulated device refuses a launch whose extent runs past its allocation.
    void boundsAreChecked() {
        SimulatedGpu device(1 << 20);
        auto a = device.allocate(64 * sizeof(float));
        auto b = device.allocate(32 * sizeof(float));
        QVERIFY(a.isOk() && b.isOk());
        DeviceLaunch l;
        dk::CopyParams& copy = l.set<dk::CopyParams>();
        copy.src = *a;
        copy.dst = *b;
        copy.srcType = copy.dstType = dk::ElemType::F32;
        copy.rank = 1;
        copy.dims[0] = 64;
        copy.srcStrides[0] = copy.dstStrides[0] = 1;
        copy.count = 64;
        l.extents = {{*a, 64 * sizeof(float), false, "input"},
                     {*b, 64 * sizeof(float), true, "output"}};
        l.geometry = dk::elementGeometry(64);
        const Status s = device.launch(l);
        QVERIFY(!s.isOk());
        QVERIFY2(s.message().find("output: 256 bytes at offset 0 overrun a 128-byte allocation") !=
                     std::string::npos,
                 s.message().c_str());
        float host[4] = {};
        QVERIFY(!device.copyToHost(host, static_cast<char*>(*b) + 120, 16).isOk());
        QVERIFY(
            !device.copyToDevice(host, host, 16).isOk());  // a host pointer is not device memory
        GemmCall call;
        call.m = 4;
        call.n = 4;
        call.k = 4;
        call.lda = 4;
        call.ldb = 4;
        call.ldc = 4;
        call.a = *a;
        call.b = *a;
        call.c = *b;
        call.batch = 3;
        call.strideA = call.strideB = 0;
        call.strideC = 16;  // three 4x4 results need 48 floats; b holds 32
        const Status g = device.gemm(call);
        QVERIFY2(!g.isOk() && g.message().find("cublasLtMatmul: C:") != std::string::npos,
                 g.message().c_str());
        device.release(*a);
        device.release(*b);
        QCOMPARE(int(device.liveAllocations()), 0);
    }

    // Row-major products as cuBLASLt's column-major ones: operands swapped, each read as its
    // own transpose; epilogues fused where cuBLASLt has them.
    // A graph from `--quantize int8 --symmetric-activations` runs its int8 products on the
    // device, exactly as the CPU does; asymmetric (uint8) activations, and K or N that are
    // not multiples of 4, stay on the CPU with the reason said.
    void quantizedGraphRunsInt8GemmsOnTheDevice() {
        GraphBuilder g;
        ValueId x = g.input("x", DType::Float32, Shape({Dim::known(6), Dim::known(32)}));
        ValueId w1 = g.initializer(randomFloatTensor("w1", {32, 16}, 41, 0.5f));
        ValueId w2 = g.initializer(randomFloatTensor("w2", {16, 8}, 42, 0.5f));
        ValueId w3 = g.initializer(randomFloatTensor("w3", {8, 6}, 43, 0.5f));
        ValueId h = g.op("Relu", {g.op("MatMul", {x, w1}, "mm1", {}, "fc1")}, "h", {}, "relu");
        ValueId z = g.op("MatMul", {h, w2}, "mm2", {}, "fc2");
        g.output(g.op("MatMul", {z, w3}, "y", {}, "fc3"));  // N = 6: not for cuBLASLt's int8 GEMM
        const Model model = test::withInferredTypes(g);
        for (const bool symmetric : {true, false}) {
            Int8Options o;
            o.symmetricActivations = symmetric;
            o.calibration =
                std::make_shared<CalibrationData>(generateCalibrationData(*model.graph, 4, 3));
            std::vector<std::unique_ptr<Pass>> passes;
            passes.push_back(passes::quantizeInt8(std::move(o)));
            passes.push_back(passes::foldQdq());
            passes.push_back(passes::eliminateDeadCode());
            auto compiled = compileModel(model, std::move(passes));
            QVERIFY2(compiled.isOk(), compiled.status().message().c_str());
            std::mt19937_64 rng(5);
            std::vector<RtTensor> feeds{randomInput(DType::Float32, {6, 32}, rng)};
            std::unique_ptr<Executor> cuda;
            const Comparison r = compareBackends(compiled->model, feeds, testDevice(), &cuda);
            QVERIFY2(r.error.empty(), r.error.c_str());
            QVERIFY2(r.worst <= 1e-5,
                     qPrintable(QStringLiteral("worst relative error %1").arg(r.worst)));
            int onDevice = 0, onHost = 0;
            for (const PlanStep& step : cuda->plan().steps) {
                if (step.opType == "QuantizeLinear")  // per tensor: on the device
                    QVERIFY2(step.backend == Backend::Cuda, step.fallbackReason.c_str());
                if (step.opType != "MatMulInteger") continue;
                if (step.backend == Backend::Cuda) {
                    ++onDevice;
                    continue;
                }
                ++onHost;
                const std::string want = symmetric ? "multiples of 4" : "int8 A and B";
                QVERIFY2(step.fallbackReason.find(want) != std::string::npos,
                         step.fallbackReason.c_str());
            }
            // Symmetric: fc1 (N = 16) and fc3 (N = 6) become MatMulInteger, fc2 with h's
            // QuantizeLinear a QLinearMatMul (CPU). Asymmetric: fc1's Relu folds into a
            // QLinearMatMul too, leaving fc3 alone.
            QCOMPARE(onDevice + onHost, symmetric ? 2 : 1);
            QCOMPARE(onDevice, symmetric ? 1 : 0);
        }
    }

    void gemmDescriptions() {
        GemmCall c;
        c.m = 3;
        c.n = 5;
        c.k = 7;
        c.lda = 7;
        c.ldb = 5;
        c.ldc = 5;
        c.a = c.b = reinterpret_cast<const void*>(0x100);
        c.c = reinterpret_cast<void*>(0x200);
        auto p = describeForLt(c);
        QVERIFY(p.isOk());
        QCOMPARE(p->m, int64_t(5));
        QCOMPARE(p->n, int64_t(3));
        QVERIFY(!p->transA && !p->transB);
        QCOMPARE(p->a.rows, uint64_t(5));
        QCOMPARE(p->a.cols, uint64_t(7));
        QCOMPARE(p->a.ld, int64_t(5));
        QCOMPARE(p->b.rows, uint64_t(7));
        QCOMPARE(p->b.cols, uint64_t(3));
        QCOMPARE(p->c.rows, uint64_t(5));
        QCOMPARE(p->c.cols, uint64_t(3));
        QCOMPARE(std::string(ltEpilogueName(p->epilogue)),
                 std::string("CUBLASLT_EPILOGUE_DEFAULT"));
        c.transA = true;  // A stored 7 x 3
        c.lda = 3;
        c.transB = true;  // B stored 5 x 7
        c.ldb = 7;
        c.bias = reinterpret_cast<const void*>(0x300);
        c.act = dk::Act::Relu;
        p = describeForLt(c);
        QVERIFY(p.isOk());
        QVERIFY(p->transA && p->transB);
        QCOMPARE(p->a.rows, uint64_t(7));
        QCOMPARE(p->a.ld, int64_t(7));
        QCOMPARE(p->b.rows, uint64_t(3));
        QCOMPARE(p->b.ld, int64_t(3));
        QCOMPARE(std::string(ltEpilogueName(p->epilogue)),
                 std::string("CUBLASLT_EPILOGUE_RELU_BIAS"));
        c.act = dk::Act::Gelu;  // erf GELU: cuBLASLt's is the tanh form
        QVERIFY(!describeForLt(c).isOk());
        c.lda = 2;
        c.act = dk::Act::None;
        QVERIFY(!describeForLt(c).isOk());

        // int8: cuBLASLt's TN form (our B as n x k), no epilogue, sizes in fours; C is int32.
        GemmCall i8;
        i8.type = dk::ElemType::I8;
        i8.m = 3;
        i8.n = 8;
        i8.k = 12;
        i8.lda = 12;
        i8.transB = true;
        i8.ldb = 12;
        i8.ldc = 8;
        i8.a = i8.b = reinterpret_cast<const void*>(0x100);
        i8.c = reinterpret_cast<void*>(0x200);
        auto lt = describeForLt(i8);
        QVERIFY2(lt.isOk(), lt.status().message().c_str());
        QVERIFY(lt->transA && !lt->transB);  // cuBLASLt's A (our B) transposed, its B (our A) not
        QCOMPARE(lt->a.rows, uint64_t(12));
        QCOMPARE(lt->a.ld, int64_t(12));
        QCOMPARE(lt->b.rows, uint64_t(12));
        QCOMPARE(lt->b.cols, uint64_t(3));
        QCOMPARE(gemmExtents(i8).back().bytes, size_t(3 * 8 * 4));  // C holds int32
        GemmCall notTn = i8;
        notTn.transB = false;
        notTn.ldb = 8;
        QVERIFY(!checkGemmCall(notTn).isOk());
        GemmCall odd = i8;
        odd.n = 6;
        odd.ldc = 6;
        QVERIFY(!checkGemmCall(odd).isOk());
        GemmCall epilogue = i8;
        epilogue.act = dk::Act::Relu;
        QVERIFY(!checkGemmCall(epilogue).isOk());
        // The reference sums exactly: 12 products of -128 x -128 = 196608.
        std::vector<int8_t> a(36, -128), b(96, -128);
        std::vector<int32_t> y(24, 0);
        i8.a = a.data();
        i8.b = b.data();
        i8.c = y.data();
        referenceGemm(i8);
        QCOMPARE(y[23], 196608);

        // MatMul plans: folded batches, strided batches, broadcast A, mixed broadcasting.
        auto folded = planMatMul({4, 3, 7}, {7, 5}, nullptr, {});
        QVERIFY(folded.isOk());
        QCOMPARE(int(folded->calls.size()), 1);
        QCOMPARE(folded->calls[0].call.m, int64_t(12));
        QCOMPARE(folded->outputDims, (std::vector<int64_t>{4, 3, 5}));
        auto strided = planMatMul({4, 3, 7}, {4, 7, 5}, nullptr, {});
        QCOMPARE(strided->calls[0].call.batch, int64_t(4));
        QCOMPARE(strided->calls[0].call.strideA, int64_t(21));
        QCOMPARE(strided->calls[0].call.strideB, int64_t(35));
        QCOMPARE(strided->calls[0].call.strideC, int64_t(15));
        auto broadcastA = planMatMul({3, 7}, {4, 7, 5}, nullptr, {});
        QCOMPARE(broadcastA->calls[0].call.strideA, int64_t(0));
        auto mixed = planMatMul({2, 1, 3, 7}, {1, 4, 7, 5}, nullptr, {});
        QCOMPARE(int(mixed->calls.size()), 8);
        QCOMPARE(mixed->calls[5].aOffset, int64_t(21));      // batch (1, 1): A's second matrix
        QCOMPARE(mixed->calls[5].bOffset, int64_t(1 * 35));  // B's second matrix
        QCOMPARE(mixed->calls[5].cOffset, int64_t(5 * 15));
        QVERIFY(!planMatMul({3, 7}, {6, 5}, nullptr, {}).isOk());
        GemmAttributes gelu;
        gelu.activation.kind = dk::Act::Gelu;
        auto withGelu = planMatMul({3, 7}, {7, 5}, nullptr, gelu);
        QVERIFY(withGelu->separateEpilogue);
        QVERIFY(withGelu->calls[0].call.act == dk::Act::None);
        std::vector<int64_t> biasDims{5};
        GemmAttributes relu;
        relu.activation.kind = dk::Act::Relu;
        auto withRelu = planMatMul({3, 7}, {7, 5}, &biasDims, relu);
        QVERIFY(!withRelu->separateEpilogue && withRelu->biasInEpilogue);
        QVERIFY(withRelu->calls[0].call.act == dk::Act::Relu);
    }

    // Launch geometry covers every element and row, within the hardware's limits.
    // The cuBLAS route of Attention: batch dims merged where every operand allows, the largest
    // one batched by cuBLAS, the rest looped on the host, and the batch cut into chunks when
    // the scores would pass the scratch; every plan matches a plain reference on the device.
    void attentionGemmPlans() {
        // Q, K and V stored [batch, seq, heads, dim], read per head; the mask [heads, 1, keys].
        const std::vector<int64_t> qDims{2, 5, 3, 4}, kDims{2, 6, 3, 4}, vDims{2, 6, 3, 4}, maskDims{3, 1, 6};
        const AttentionPerms perms{{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}};
        auto layout = attentionLayout(qDims, kDims, vDims, &maskDims, perms);
        QVERIFY2(layout.isOk(), layout.status().message().c_str());
        const AttentionLayout& L = *layout;

        auto whole = planAttentionGemms(L, dk::ElemType::F32, 0.5f, size_t(1) << 30);
        QVERIFY2(whole.isOk(), whole.status().message().c_str());
        QCOMPARE(int(whole->chunks.size()), 1);
        // [batch 2, heads 3] do not merge (heads sit inside each row): cuBLAS batches the 3
        // heads, the host loops over the 2 batches.
        QCOMPARE(int(whole->chunks[0].scores.size()), 2);
        const PlannedGemm& s1 = whole->chunks[0].scores[1];
        QCOMPARE(int(s1.call.batch), 3);
        QCOMPARE(s1.call.strideA, int64_t(4));   // the next head of Q
        QCOMPARE(s1.call.lda, int64_t(12));      // Q's rows step over all heads
        QVERIFY(!s1.call.transA && s1.call.transB);  // K^T is K read transposed
        QCOMPARE(s1.aOffset, int64_t(5 * 3 * 4));  // the second batch of Q
        QCOMPARE(s1.cOffset, int64_t(3 * 5 * 8));  // its scores, rows of 6 keys 8 apart (aligned)
        QCOMPARE(s1.call.ldc, int64_t(8));
        const PlannedGemm& o1 = whole->chunks[0].outputs[1];
        QCOMPARE(o1.call.ldc, int64_t(12));      // the output stored [batch, seq, heads, dim]
        QCOMPARE(o1.call.strideC, int64_t(4));   // heads side by side within each row
        QVERIFY(checkGemmCall(o1.call).isOk());

        // Scratch for one batch's scores: two chunks of one call each.
        const size_t oneBatch = 3 * 5 * 8 * sizeof(float);
        auto chunked = planAttentionGemms(L, dk::ElemType::F32, 0.5f, oneBatch);
        QVERIFY2(chunked.isOk(), chunked.status().message().c_str());
        QCOMPARE(int(chunked->chunks.size()), 2);
        QCOMPARE(int(chunked->chunks[1].firstBatch), 3);
        QCOMPARE(int(chunked->chunks[1].scores.size()), 1);
        QVERIFY(!planAttentionGemms(L, dk::ElemType::F32, 0.5f, oneBatch - 1).isOk());

        // Contiguous [batch, heads, seq, dim] operands merge into one batch of 6: one call.
        const std::vector<int64_t> flat{2, 3, 5, 4}, flatKt{2, 3, 4, 6}, flatV{2, 3, 6, 4};
        auto merged = planAttentionGemms(*attentionLayout(flat, flatKt, flatV, nullptr, {}), dk::ElemType::F32, 1.f,
                                         size_t(1) << 30);
        QVERIFY(merged.isOk());
        QCOMPARE(int(merged->chunks[0].scores.size()), 1);
        QCOMPARE(int(merged->chunks[0].scores[0].call.batch), 6);
        // Heads as the last stored dim: Q has no unit stride.
        auto strided = attentionLayout({2, 5, 4, 3}, {2, 4, 6, 3}, {2, 6, 4, 3}, nullptr,
                                       {{0, 3, 1, 2}, {0, 3, 1, 2}, {0, 3, 1, 2}, {}});
        QVERIFY(strided.isOk());
        QCOMPARE(planAttentionGemms(*strided, dk::ElemType::F32, 1.f, size_t(1) << 30).status().code(),
                 ErrorCode::Unsupported);

        // Both plans on the simulated device against a plain reference.
        std::mt19937_64 rng(5);
        std::uniform_real_distribution<float> uniform(-1.f, 1.f);
        auto values = [&](size_t n) {
            std::vector<float> v(n);
            for (float& x : v) x = uniform(rng);
            return v;
        };
        const std::vector<float> q = values(120), k = values(144), v = values(144), mask = values(18);
        std::vector<float> expected(120);
        for (int64_t b = 0; b < L.batchCount; ++b) {
            int64_t off[5];
            L.offsets(b, off);
            auto at = [&](int op, int64_t r, int64_t c) {
                const auto& st = L.view[op].strides;
                return off[op] + r * st[st.size() - 2] + c * st[st.size() - 1];
            };
            for (int64_t i = 0; i < L.lq; ++i) {
                std::vector<double> w(size_t(L.lk));
                double top = -1e300, sum = 0;
                for (int64_t j = 0; j < L.lk; ++j) {
                    double dot = 0;
                    for (int64_t c = 0; c < L.d; ++c) dot += double(q[size_t(at(0, i, c))]) * k[size_t(at(1, c, j))];
                    w[size_t(j)] = 0.5 * dot + mask[size_t(at(3, i, j))];
                    top = std::max(top, w[size_t(j)]);
                }
                for (double& x : w) sum += (x = std::exp(x - top));
                for (int64_t c = 0; c < L.dv; ++c) {
                    double acc = 0;
                    for (int64_t j = 0; j < L.lk; ++j) acc += w[size_t(j)] * v[size_t(at(2, j, c))];
                    expected[size_t(at(4, i, c))] = float(acc / sum);
                }
            }
        }
        for (const AttentionGemmPlan* plan : {&*whole, &*chunked}) {
            SimulatedGpu device(1 << 20);
            auto upload = [&](const std::vector<float>& host) -> void* {
                void* p = *device.allocate(host.size() * sizeof(float));
                return device.copyToDevice(p, host.data(), host.size() * sizeof(float)).isOk() ? p : nullptr;
            };
            AttentionOperands x{upload(q), upload(k), upload(v), upload(mask), *device.allocate(120 * sizeof(float)),
                                mask.size() * sizeof(float)};
            QVERIFY(x.q && x.kt && x.v && x.mask);
            const Status run = runAttentionGemms(device, *plan, x);
            QVERIFY2(run.isOk(), run.message().c_str());
            std::vector<float> got(120);
            QVERIFY(device.copyToHost(got.data(), x.out, got.size() * sizeof(float)).isOk());
            for (size_t i = 0; i < got.size(); ++i)
                QVERIFY2(std::abs(got[i] - expected[i]) <= 1e-5f,
                         qPrintable(QStringLiteral("element %1: %2, expected %3").arg(i).arg(got[i]).arg(expected[i])));
        }
    }

    // Float16 attention runs as one fused call (cuDNN's scaled dot-product attention) where the
    // device offers one: the heads of a [batch, seq, heads, d] projection read as strided views,
    // a mask broadcast over heads and queries. With the fused call off the GEMMs give the same
    // result, and a head dim cuDNN does not take (12) goes to them by itself.
    void fusedAttentionRoute() {
        auto attention = [](int64_t d) {
            OpCase c{"Attention",
                     "ai.fusescope",
                     {{2, 5, 3, d}, {2, 6, 3, d}, {2, 6, 3, d}, {2, 1, 1, 6}},
                     {floatAttr("scale", 0.35f), intsAttr("q_perm", {0, 2, 1, 3}), intsAttr("k_perm", {0, 2, 3, 1}),
                      intsAttr("v_perm", {0, 2, 1, 3}), intsAttr("out_perm", {0, 2, 1, 3})}};
            c.dtype = DType::Float16;
            return c;
        };
        for (int64_t d : {int64_t(8), int64_t(12)})
            for (bool fusedOn : {true, false}) {
                const OpCase c = attention(d);
                std::mt19937_64 rng(7);
                std::vector<RtTensor> feeds;
                for (const auto& dims : c.shapes) feeds.push_back(randomInput(DType::Float16, dims, rng));
                auto device = std::make_shared<SimulatedGpu>(uint64_t(1) << 30);
                device->setFusedAttention(fusedOn);
                const Comparison r = compareBackends(opModel(c), feeds, device, nullptr, false);
                const std::string label = "d " + std::to_string(d) + (fusedOn ? ", fused on" : ", fused off");
                QVERIFY2(r.error.empty(), (label + ": " + r.error).c_str());
                QVERIFY2(r.worst < 2e-2, (label + ": " + std::to_string(r.worst)).c_str());
                const DeviceCounters n = device->counters();
                const bool fused = fusedOn && d % 8 == 0;
                QVERIFY2((n.fusedAttentions > 0) == fused, label.c_str());
                QVERIFY2((n.gemms > 0) == !fused, label.c_str());
            }
    }

    // How a layout becomes a fused call, cuDNN's rules for one, and the warp kernel's launch
    // that the GPU checks cuDNN's engines against: it computes what the reference computes.
    void fusedAttentionCalls() {
        const AttentionPerms heads{{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}};
        const std::vector<int64_t> maskDims{2, 1, 1, 6};
        auto layout = attentionLayout({2, 5, 3, 8}, {2, 6, 3, 8}, {2, 6, 3, 8}, &maskDims, heads);
        QVERIFY(layout.isOk());
        SimulatedGpu device(1 << 20);
        std::mt19937_64 rng(3);
        auto q = uploadToDevice(device, randomInput(DType::Float16, {2, 5, 3, 8}, rng));
        auto k = uploadToDevice(device, randomInput(DType::Float16, {2, 6, 3, 8}, rng));
        auto v = uploadToDevice(device, randomInput(DType::Float16, {2, 6, 3, 8}, rng));
        auto mask = uploadToDevice(device, randomInput(DType::Float16, maskDims, rng));
        auto fusedOut = uploadToDevice(device, allocateTensor(DType::Float16, {2, 5, 3, 8}));
        auto rowsOut = uploadToDevice(device, allocateTensor(DType::Float16, {2, 5, 3, 8}));
        QVERIFY(q && k && v && mask && fusedOut && rowsOut);
        std::string why;
        const AttentionPointers x{q->data, k->data, v->data, mask->data, fusedOut->data};
        auto call = fusedAttentionCallOf(*layout, dk::ElemType::F16, 0.35f, x, &why);
        QVERIFY2(call.has_value(), why.c_str());
        QCOMPARE(call->batch, int64_t(2));
        QCOMPARE(call->heads, int64_t(3));
        QCOMPARE(std::vector<int64_t>(call->qStrides, call->qStrides + 4), (std::vector<int64_t>{120, 8, 24, 1}));
        QCOMPARE(std::vector<int64_t>(call->kStrides, call->kStrides + 4), (std::vector<int64_t>{144, 8, 24, 1}));
        QCOMPARE(std::vector<int64_t>(call->oStrides, call->oStrides + 4), (std::vector<int64_t>{120, 8, 24, 1}));
        QCOMPARE(std::vector<int64_t>(call->biasStrides, call->biasStrides + 4), (std::vector<int64_t>{6, 0, 0, 1}));
        const Status allowed = checkFusedAttentionCall(*call);
        QVERIFY2(allowed.isOk(), allowed.message().c_str());

        QVERIFY(device.fusedAttention(*call).isOk());
        QVERIFY(device.launch(attentionRowsLaunch(*call, rowsOut->data)).isOk());
        auto fused = downloadToHost(device, *fusedOut), rows = downloadToHost(device, *rowsOut);
        QVERIFY(fused && rows);
        const double error = worstError(*rows, *fused);
        QVERIFY2(error < 2e-2, std::to_string(error).c_str());

        auto refused = [&](const std::function<void(FusedAttentionCall&)>& change) {
            FusedAttentionCall c = *call;
            change(c);
            return checkFusedAttentionCall(c).code() == ErrorCode::Unsupported;
        };
        QVERIFY(refused([](FusedAttentionCall& c) { c.type = dk::ElemType::F32; }));
        QVERIFY(refused([](FusedAttentionCall& c) { c.d = c.dv = 136; }));
        QVERIFY(refused([](FusedAttentionCall& c) { c.d = 12; }));
        QVERIFY(refused([](FusedAttentionCall& c) { c.qStrides[3] = 2; }));
        QVERIFY(refused([](FusedAttentionCall& c) { c.vStrides[2] = 12; }));
        QVERIFY(refused([](FusedAttentionCall& c) { c.o = static_cast<char*>(c.o) + 2; }));
        QVERIFY(!refused([](FusedAttentionCall& c) { c.bias = nullptr; }));

        // Three batch dims that do not fold into two (K broadcast over the middle one), and float32.
        auto three = attentionLayout({2, 3, 4, 5, 8}, {2, 1, 4, 8, 6}, {2, 3, 4, 6, 8}, nullptr, {});
        QVERIFY(three.isOk());
        QVERIFY(!fusedAttentionCallOf(*three, dk::ElemType::F16, 1.f, x, &why));
        QVERIFY(!fusedAttentionCallOf(*layout, dk::ElemType::F32, 1.f, x, &why));
    }

    void launchGeometry() {
        for (int64_t count : {int64_t(1), int64_t(255), int64_t(256), int64_t(257),
                              int64_t(1) << 20, int64_t(3) << 30}) {
            const auto g = dk::elementGeometry(count);
            QVERIFY(g.grid >= 1 && g.grid <= 65535 && g.block == 256);
            QVERIFY(g.grid * g.block >= std::min<int64_t>(count, 65535 * 256));
        }
        for (int64_t rows : {int64_t(1), int64_t(3), int64_t(4), int64_t(5), int64_t(100000)}) {
            const auto g = dk::rowGeometry(rows);
            QVERIFY(g.grid * (g.block / dk::kLanes) >= rows);
            QVERIFY((g.grid - 1) * (g.block / dk::kLanes) < rows);
        }
    }

    // The capability table and the kernels tie together: every kernel's op is claimed by
    // the table, and the table's ops without a kernel yet are exactly those listed here (they
    // run on the CPU); a kernel that lands must take its op off this list.
    void capabilityTableMatchesKernels() {
        const CapabilityTable& table = cudaCapabilities();
        const auto ops = cudaKernels().ops(Backend::Cuda);
        for (const std::string& op : ops) {
            const size_t dot = op.rfind('.');
            const std::string domain = dot == std::string::npos ? "" : op.substr(0, dot);
            const std::string name = dot == std::string::npos ? op : op.substr(dot + 1);
            QVERIFY2(table.find(domain, name), ("kernel without a table entry: " + op).c_str());
        }
        std::set<std::string> missing;
        for (const std::string& entry : table.entries())
            if (std::find(ops.begin(), ops.end(), entry) == ops.end()) missing.insert(entry);
        std::string diff;
        for (const auto& m : missing)
            if (!kHostByDesign.count(m)) diff += " +" + m;
        for (const auto& n : kHostByDesign)
            if (!missing.count(n)) diff += " -" + n;
        QVERIFY2(diff.empty(), ("table ops without a kernel differ from the list:" + diff).c_str());
    }

    // Every (op, output dtype) the capability table claims has a singleOps case, which
    // asserts it runs on the device: graph-break analysis reads the table, so a claim the
    // kernel declines misreports where the graph leaves the device. Ops claiming any dtype
    // need float32, float16 and int64 cases.
    void everyClaimedOpAndDtypeHasACase() {
        std::set<std::pair<std::string, DType>> covered;
        for (const OpRow& r : singleOpCases()) covered.insert({caseKey(r.c), caseOutputType(r.c)});
        const CapabilityTable& table = cudaCapabilities();
        QStringList missing;
        for (const std::string& entry : table.entries()) {
            if (kHostByDesign.count(entry)) continue;
            const std::set<DType> claimed = claimedDTypes(table, entry);
            QVERIFY2(!claimed.empty(), entry.c_str());
            for (DType t : claimed)
                if (!covered.count({entry, t})) missing << QString::fromStdString(entry + " " + std::string(dtypeName(t)));
        }
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("claimed without a case: ") + missing.join(QStringLiteral(", "))));
    }

    // Without a GPU, asking for one is a one-line reason, never a crash.
    void noDeviceIsOneLine() {
        if (onGpu()) QSKIP("a GPU is present");
        auto device = openCudaDevice();
        if (device.isOk()) QSKIP("this machine has a CUDA device");
        const std::string& msg = device.status().message();
        QVERIFY(!msg.empty() && msg.find('\n') == std::string::npos);
        qInfo("%s", msg.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCudaBackend)
#include "tst_cuda_backend.moc"
