// ONNX backend conformance: runs every model of ONNX's test data (Debian libonnx-testdata:
// node, simple, pytorch-converted, pytorch-operator) on the CPU runtime and compares each
// output with the expected one using ONNX's default tolerances (rtol 1e-3, atol 1e-7).
// Prints pass / fail / unsupported per op and in total; unsupported is counted, never
// hidden. Exits non-zero when the goals of the CPU-runtime issue are not met:
//  - at least 90% of the non-training, non-string tests pass;
//  - every op on the required list passes all of its single-op node tests, and no node test
//    gives a wrong answer, except the cases listed in conformance_known_failures.txt, each
//    with its reason.
// usage: conformance DATA_DIR KNOWN_FAILURES [--verbose] [--filter SUBSTRING]
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "compiler/target.h"
#include "compiler/runtime/executor.h"
#include "core/onnx_import.h"
#include "core/tensor_io.h"

namespace fs = std::filesystem;
using namespace fsc;

namespace {

const std::set<std::string> kRequiredOps = {
    "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "LayerNormalization",
    "InstanceNormalization", "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Relu", "LeakyRelu",
    "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Gelu", "Softplus", "Clip", "Pow",
    "Sqrt", "Exp", "Log", "Max", "Min", "Where", "Equal", "Less", "Greater", "LessOrEqual",
    "GreaterOrEqual", "And", "Or", "Xor", "Not", "Softmax", "LogSoftmax", "ReduceSum",
    "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "MaxPool", "AveragePool",
    "GlobalAveragePool", "GlobalMaxPool", "Resize", "Pad", "Reshape", "Transpose", "Concat",
    "Split", "Slice", "Gather", "GatherElements", "ScatterND", "Expand", "Tile", "Squeeze",
    "Unsqueeze", "Flatten", "Shape", "Size", "ConstantOfShape", "Range", "Cast", "CumSum",
    "TopK", "ArgMax", "NonZero", "Einsum", "LSTM", "GRU", "RNN", "QuantizeLinear",
    "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
    // audio and speech front ends, linear algebra, unpooling
    "HannWindow", "HammingWindow", "BlackmanWindow", "DFT", "STFT", "MelWeightMatrix", "Det", "MaxUnpool", "GridSample", "RoiAlign",
    "MatMulInteger", "ConvInteger", "If", "Loop", "Scan"};

enum class Outcome { Pass, Fail, Unsupported };

struct Counts {
    int pass = 0, fail = 0, unsupported = 0;
};

bool involvesStrings(const Graph& g) {
    for (ValueId id : g.inputs)
        if (g.value(id).type.elemType == DType::String) return true;
    for (ValueId id : g.outputs)
        if (g.value(id).type.elemType == DType::String) return true;
    return false;
}

std::string compare(RtTensor got, const Tensor& want, double rtol, double atol) {
    if (got.dtype == DType::BFloat16 && want.dtype() == DType::UInt16) got.dtype = DType::UInt16;  // see above
    if (got.dtype != want.dtype())
        return "dtype " + std::string(dtypeName(got.dtype)) + " != expected " + std::string(dtypeName(want.dtype()));
    if (got.dims != want.dims()) {
        std::ostringstream s;
        s << "shape " << got.typeString() << " != expected " << want.shape().toString();
        return s.str();
    }
    auto expected = tensorFromConstant(want);
    if (!expected) return expected.status().message();
    if (got.dtype == DType::String) return *got.strings == want.strings() ? "" : "strings differ";
    const bool exact = !isFloatingPoint(got.dtype);
    for (int64_t i = 0; i < got.numel(); ++i) {
        const double a = elementAsDouble(got, i), b = elementAsDouble(*expected, i);
        if (std::isnan(a) && std::isnan(b)) continue;
        if (a == b) continue;
        if (exact || !(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
            std::ostringstream s;
            s << "element " << i << ": " << a << " vs expected " << b;
            return s.str();
        }
    }
    return "";
}

// A sequence input from its SequenceProto file: the elements viewed in place.
Result<RtTensor> readSequence(const fs::path& file) {
    auto sequence = readSequenceProtoFile(file);
    if (!sequence) return sequence.status();
    std::vector<RtTensor> elements;
    for (const Tensor& t : sequence->elements) {
        auto rt = tensorFromConstant(t);
        if (!rt) return rt.status();
        elements.push_back(cloneTensor(*rt));
    }
    return makeSequence(sequence->elemType == DType::Undefined ? DType::Float32 : sequence->elemType, std::move(elements));
}

struct TestResult {
    Outcome outcome = Outcome::Pass;
    std::string detail;
};

// A step that failed: unsupported only when the step says so (an op, a dtype or a data kind
// we lack); any other error is a failure (an import error on ONNX's own models is a bug).
TestResult failedWith(const Status& status, const std::string& what = "") {
    return {status.code() == ErrorCode::Unsupported ? Outcome::Unsupported : Outcome::Fail, what + status.message()};
}

TestResult runTest(const fs::path& dir) {
    auto model = importModel((dir / "model.onnx").string());
    if (!model) return failedWith(model.status(), "import: ");
    auto exec = Executor::create(*model, cpuExecutorOptions());
    if (!exec) return failedWith(exec.status());
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) return {Outcome::Unsupported, "no test data sets"};
    for (const fs::path& set : sets) {
        std::vector<RtTensor> feeds;
        for (size_t i = 0; i < (*exec)->feeds().size(); ++i) {
            // Optionals and maps are stored as other protos, and the runtime lacks them.
            const ValueType::Kind kind = (*exec)->graph().value((*exec)->feeds()[i]).type.kind;
            if (kind == ValueType::Kind::Optional || kind == ValueType::Kind::Map)
                return {Outcome::Unsupported, "input " + std::to_string(i) + " is an optional or a map"};
            if (kind == ValueType::Kind::Sequence) {
                auto sequence = readSequence(set / ("input_" + std::to_string(i) + ".pb"));
                if (!sequence) return failedWith(sequence.status(), "input " + std::to_string(i) + ": ");
                feeds.push_back(std::move(*sequence));
                continue;
            }
            auto t = readTensorProtoFile(set / ("input_" + std::to_string(i) + ".pb"));
            if (!t) return failedWith(t.status(), "input " + std::to_string(i) + ": ");
            auto rt = tensorFromConstant(*t);
            if (!rt) return failedWith(rt.status(), "input " + std::to_string(i) + ": ");
            // numpy has no bfloat16: ONNX's data stores those tensors as uint16 bits.
            const ValueType& declared = (*exec)->graph().value((*exec)->feeds()[i]).type;
            if (rt->dtype == DType::UInt16 && declared.elemType == DType::BFloat16) rt->dtype = DType::BFloat16;
            feeds.push_back(*rt);
        }
        auto outs = (*exec)->run(std::move(feeds));
        if (!outs) return failedWith(outs.status());
        // Every expected output is compared: one the runtime did not return fails the test.
        size_t expectedOutputs = 0;
        while (fs::exists(set / ("output_" + std::to_string(expectedOutputs) + ".pb"))) ++expectedOutputs;
        if (outs->size() != expectedOutputs)
            return {Outcome::Fail, set.filename().string() + ": " + std::to_string(outs->size()) + " outputs, expected " +
                                       std::to_string(expectedOutputs)};
        for (size_t i = 0; i < outs->size(); ++i) {
            const fs::path file = set / ("output_" + std::to_string(i) + ".pb");
            if ((*outs)[i].isSequence()) {
                auto want = readSequenceProtoFile(file);
                if (!want) return failedWith(want.status(), "output " + std::to_string(i) + ": ");
                const std::vector<RtTensor>& got = *(*outs)[i].sequence;
                if (got.size() != want->elements.size())
                    return {Outcome::Fail, set.filename().string() + " output " + std::to_string(i) + ": " +
                                               std::to_string(got.size()) + " elements, expected " +
                                               std::to_string(want->elements.size())};
                for (size_t e = 0; e < got.size(); ++e)
                    if (const std::string diff = compare(got[e], want->elements[e], 1e-3, 1e-7); !diff.empty())
                        return {Outcome::Fail, set.filename().string() + " output " + std::to_string(i) + " element " +
                                                   std::to_string(e) + ": " + diff};
                continue;
            }
            auto want = readTensorProtoFile(file);
            if (!want) return failedWith(want.status(), "output " + std::to_string(i) + ": ");
            const std::string diff = compare((*outs)[i], *want, 1e-3, 1e-7);
            if (!diff.empty())
                return {Outcome::Fail, set.filename().string() + " output " + std::to_string(i) + ": " + diff};
        }
    }
    return {};
}

std::map<std::string, std::string> readKnownFailures(const fs::path& file) {
    std::map<std::string, std::string> known;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t space = line.find_first_of(" \t");
        known[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
    }
    return known;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: conformance DATA_DIR KNOWN_FAILURES [--verbose] [--filter S]\n";
        return 64;
    }
    const fs::path root = argv[1];
    const auto known = readKnownFailures(argv[2]);
    bool verbose = false;
    std::string filter;
    for (int i = 3; i < argc; ++i) {
        if (std::string(argv[i]) == "--verbose") verbose = true;
        if (std::string(argv[i]) == "--filter" && i + 1 < argc) filter = argv[++i];
    }
    if (!fs::is_directory(root / "node")) {
        std::cout << "SKIPPED: " << root << " has no ONNX test data (install libonnx-testdata)\n";
        return 77;
    }
    std::map<std::string, Counts> byOp;
    Counts total, counted;  // counted: non-training, non-string
    std::vector<std::string> requiredFailures;
    std::set<std::string> usedKnown;
    for (const char* kind : {"node", "simple", "pytorch-converted", "pytorch-operator"}) {
        std::vector<fs::path> dirs;
        for (const auto& e : fs::directory_iterator(root / kind))
            if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
        std::sort(dirs.begin(), dirs.end());
        for (const fs::path& dir : dirs) {
            const std::string name = dir.filename().string();
            if (!filter.empty() && name.find(filter) == std::string::npos) continue;
            auto model = importModel((dir / "model.onnx").string(), ImportOptions{});
            std::string op = "(model)";
            bool strings = false;
            if (model) {
                const Graph& g = *model->graph;
                if (std::string(kind) == "node")
                    op = g.nodeCount() == 1 ? g.node(g.order()[0]).opType : "(multi-node)";
                strings = involvesStrings(g);
            }
            const bool training = name.find("training") != std::string::npos || name.find("gradient") != std::string::npos;
            TestResult r = runTest(dir);
            Counts& c = byOp[op];
            auto bump = [&](Counts& k) {
                (r.outcome == Outcome::Pass ? k.pass : r.outcome == Outcome::Fail ? k.fail : k.unsupported)++;
            };
            bump(c);
            bump(total);
            if (!training && !strings) bump(counted);
            if (r.outcome != Outcome::Pass) {
                const bool isKnown = known.count(name) != 0;
                if (isKnown) usedKnown.insert(name);
                // A wrong answer from any node test (an expanded function included) fails the
                // run; an op we lack fails it only when the op is required.
                const bool wrong = r.outcome == Outcome::Fail;
                if (std::string(kind) == "node" && (wrong || kRequiredOps.count(op)) && !training && !strings && !isKnown)
                    requiredFailures.push_back(name + ": " + r.detail);
                if (verbose)
                    std::cout << (r.outcome == Outcome::Fail ? "FAIL " : "UNSUPPORTED ") << kind << "/" << name
                              << (isKnown ? " [known]" : "") << ": " << r.detail << "\n";
            }
        }
    }
    std::cout << "\n" << std::left << std::setw(28) << "op" << std::right << std::setw(6) << "pass" << std::setw(6)
              << "fail" << std::setw(13) << "unsupported" << "\n";
    for (const auto& [op, c] : byOp)
        std::cout << std::left << std::setw(28) << op << std::right << std::setw(6) << c.pass << std::setw(6)
                  << c.fail << std::setw(13) << c.unsupported << "\n";
    const int countedTotal = counted.pass + counted.fail + counted.unsupported;
    const double rate = countedTotal ? double(counted.pass) / countedTotal : 0.0;
    std::cout << "\nall tests: " << total.pass << " pass, " << total.fail << " fail, " << total.unsupported
              << " unsupported\n"
              << "non-training, non-string: " << counted.pass << " / " << countedTotal << " pass ("
              << std::fixed << std::setprecision(1) << 100.0 * rate << "%), " << counted.fail << " fail, "
              << counted.unsupported << " unsupported\n";
    bool ok = true;
    if (filter.empty() && rate < 0.90) {
        std::cout << "GOAL MISSED: fewer than 90% of non-training, non-string tests pass\n";
        ok = false;
    }
    if (!requiredFailures.empty()) {
        std::cout << "GOAL MISSED: node tests of required ops that do not pass (and are not listed as known):\n";
        for (const auto& f : requiredFailures) std::cout << "  " << f << "\n";
        ok = false;
    }
    if (filter.empty())
        for (const auto& [name, why] : known)
            if (!usedKnown.count(name)) std::cout << "note: known failure " << name << " now passes; remove it from the list\n";
    return ok ? 0 : 1;
}
