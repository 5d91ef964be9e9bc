#pragma once
// Named pipelines O0..O3 and custom pass lists. The steps are declared in pipelines.cpp,
// one line per step with the reason it is there.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/pass.h"
#include "compiler/quantization/int8_options.h"
#include "compiler/target.h"
#include "core/status.h"

namespace fsc {

struct PipelineStep {
    int level;          // first level that runs it (1 = O1, ...)
    const char* pass;   // registered pass name
    const char* why;
};

const std::vector<PipelineStep>& pipelineSteps();

// Whether `pass` belongs after the clean-up and conv-bn folding: the other fusions (which
// would hide plain Conv/MatMul/Gemm), the memory passes, and the float16/bfloat16 passes.
// INT8 quantization and tensor parallelism go before the first pass for which this holds.
bool runsAfterCleanUp(const std::string& pass);

// "O0".."O3" -> pass names; an unknown level is an InvalidArgument error.
Result<std::vector<std::string>> pipelinePasses(const std::string& level);

// Resolves the CLI's choices: a named pipeline, or an explicit comma-separated list, minus
// the disabled passes. Every name must be registered.
Result<std::vector<std::string>> resolvePipeline(const std::string& level, const std::string& passList,
                                                 const std::vector<std::string>& disabled);

// What to compile: a list of passes (a named pipeline or the user's own) with precision and
// parallelism on top. The CLI, the GUI and the benchmarks describe their pipelines with it;
// buildPipeline() alone decides where the optional passes go.
enum class Precision { Float32, Float16, BFloat16, Int8 };

struct PipelineSpec {
    std::vector<std::string> passes;  // registered names, in order (resolvePipeline's result)
    // The user's own pass list; otherwise a named pipeline. Either way buildPipeline fits
    // channels-last to the target (channelsLastTypes).
    bool customPasses = false;
    Target target;
    Precision precision = Precision::Float32;
    // fp16/bf16: op types left in float32; none: passes::defaultKeepInFloat32().
    std::optional<std::set<std::string>> keepInFloat32;
    Int8Options int8;                     // int8: calibration, scheme, exclusions
    int tensorParallel = 1;               // devices; 1 = no split
    int pipelineParallel = 1;             // stages; 1 = no cut
    // The element types channels-last lays out; none: the target's (channelsLastTypes). Set
    // where one graph must match another's layout (bisect's CPU reference of a GPU run).
    std::optional<std::set<DType>> channelsLastTypes;
};

// The element types whose convolution chains channels-last lays out NHWC for `spec`: float32
// on the CPU (oneDNN's and our NHWC kernels). On CUDA, float16 and bfloat16, whose fast cuDNN
// kernels are NHWC (an NCHW float16 ResNet-50 ran 96 of its 210 kernels a run as cuDNN's
// layout transposes, 1.4 of 3.6 ms at batch 32 on an H200: docs/gpu-runs/2026-12-04-*), and
// float32 only where a half precision narrows it after: cuDNN has no NHWC float32 kernels
// under FMA maths and wraps each such convolution in two transposes (ResNet-50 211 -> 112
// kernels a run without them, 2.32-2.37 -> 2.13 ms at batch 1), and NHWC float32 under TF32
// came out wrong on the one GPU run that tried it (2.3 against 4.4 ms NCHW, but a cosine of
// 0.975), so it waits for a kit run with cuDNN's engines checked.
std::set<DType> channelsLastTypes(const PipelineSpec& spec);

// The passes of `spec`, created: channels-last for the target's types (channelsLastTypes); INT8 (QDQ, then folding) after the clean-up and conv-bn
// folding, before the other fusions, which would hide plain Conv/MatMul/Gemm; fp16/bf16
// before the memory passes (or last); tensor parallelism before the fusions and INT8, on
// float linear layers; pipeline parallelism after precision, before the memory passes, so
// the schedule and arena are planned per stage. An unknown pass name is an error.
Result<std::vector<std::unique_ptr<Pass>>> buildPipeline(const PipelineSpec& spec);

}  // namespace fsc
