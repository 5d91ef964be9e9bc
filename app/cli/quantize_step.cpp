#include "app/cli/quantize_step.h"

#include "app/cli/cli_app.h"
#include "core/comma_list.h"

namespace fsc::cli {

void addQuantizeOptions(CLI::App& command, QuantizeArgs& a) {
    const std::string group = "precision (each prints its error against the float32 model, measured)";
    command.add_option("--quantize", a.kind,
                       "fp16|bf16: store float32 work in float16 / bfloat16 after the fusions\n"
                       "(before the memory passes); Casts only at region boundaries.\n"
                       "int8: post-training INT8 after the clean-up and conv-bn folding: QDQ\n"
                       "form (int8-quantization), then integer ops (qdq-folding)")
        ->type_name("fp16|bf16|int8")
        ->check(oneOf({"fp16", "bf16", "int8"}, "fp16, bf16 or int8"))
        ->group(group);
    command
        .add_option_function<std::string>(
            "--keep-fp32",
            [&a](const std::string& v) {
                a.keepFp32.emplace();
                if (v != "none")
                    for (std::string& op : splitCommaList(v)) a.keepFp32->insert(std::move(op));
            },
            "ops fp16/bf16 leave in float32 (default: norms, Softmax, LogSoftmax,\n"
            "reductions, CumSum; 'none' narrows everything)")
        ->type_name("Op,Op")
        ->group(group);
    command.add_option("--calibration", a.calibrationDir,
                       "inputs: DIR/<set>/input_K.pb|.npy, DIR/input_K.pb, or DIR/*.npy for a\n"
                       "one-input model; a quarter is held back to measure accuracy (default:\n"
                       "generated samples, said so in every output)")
        ->type_name("DIR")
        ->group(group);
    command.add_option("--calibration-samples", a.samples, "how many to generate without --calibration (default 16)")
        ->type_name("N")
        ->check(integerIn(1, 100000, "a number >= 1"))
        ->group(group);
    command.add_option("--calibrator", a.calibrator, "minmax (default), percentile (99.99%) or entropy (KL)")
        ->type_name("NAME")
        ->check(CLI::Validator(
            [](std::string& v) {
                return parseCalibrationMethod(v) ? std::string() : std::string("needs minmax, percentile or entropy");
            },
            ""))
        ->group(group);
    command.add_flag("--per-channel", a.perChannel, "one weight scale per output channel (default: per tensor)")
        ->group(group);
    command.add_flag("--reduce-range", a.reduceRange,
                     "weights in [-64, 64] (7 bits): less accurate, but faster on x86 CPUs\n"
                     "without VNNI (AVX2 alone), as ONNX Runtime's reduce_range")
        ->group(group);
    command.add_flag("--symmetric-activations", a.symmetricActivations,
                     "int8 activations with zero point 0 (default: asymmetric uint8)")
        ->group(group);
    command
        .add_option_function<std::vector<std::string>>(
            "--exclude",
            [&a](const std::vector<std::string>& all) {
                for (const std::string& v : all)
                    for (std::string& p : splitCommaList(v)) a.exclude.push_back(std::move(p));
            },
            "keep nodes in float by name, op type or scope (globs; repeatable)")
        ->type_name("PATTERN")
        ->allow_extra_args(false)
        ->group(group);
    command.add_flag("--no-sensitivity", [&a](int64_t) { a.sensitivity = false; },
                     "skip the per-layer sensitivity table (one run per layer)")
        ->group(group);
}

std::string checkQuantizeArgs(const QuantizeArgs& q) {
    if (q.keepFp32 && q.kind != "fp16" && q.kind != "bf16") return "--keep-fp32 goes with --quantize fp16|bf16";
    if (!q.calibrationDir.empty() && q.kind.empty()) return "--calibration goes with --quantize";
    const bool int8Options =
        q.calibrator != "minmax" || q.perChannel || q.reduceRange || q.symmetricActivations || !q.exclude.empty() || !q.sensitivity;
    if (int8Options && q.kind != "int8") return "calibration options go with --quantize int8";
    return {};
}

}  // namespace fsc::cli
