// Import speed: Fusescope's importer against protobuf parse + ONNX checker (what
// `onnx.load` + `onnx.checker.check_model` do, through libonnx's C++ API) on the same file
// in the same process, and optionally against Python's onnx in a child process.
//
//   bench_import [--nodes 6000] [--weights-mb 100] [--repeats 5] [--dir DIR] [--python] [--keep]
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <google/protobuf/io/coded_stream.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>

#include "core/graph_builder.h"
#include "core/model_summary.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "profiler/cpu_timer.h"

using namespace fsc;

namespace {

// Blocks of MatMul -> Add -> Tanh -> Mul (a gated MLP step): 4 nodes and one d x d weight
// per block, d chosen so the weights add up to the requested size.
Model buildModel(int nodes, double weightsMb) {
    const int blocks = std::max(1, nodes / 4);
    int d = 8;
    while (double(blocks) * (d + 8) * (d + 8) * 4 / 1e6 <= weightsMb) d += 8;
    GraphBuilder b("bench");
    ValueId x = b.input("x", DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(d)}));
    for (int i = 0; i < blocks; ++i) {
        const std::string s = "/block." + std::to_string(i) + "/";
        ValueId w = b.initializer(randomFloatTensor("w" + std::to_string(i), {d, d}, uint64_t(i)));
        ValueId bias = b.initializer(randomFloatTensor("b" + std::to_string(i), {d}, uint64_t(i) + 7));
        ValueId h = b.op("MatMul", {x, w}, s + "mm", {}, s + "MatMul");
        h = b.op("Add", {h, bias}, s + "add", {}, s + "Add");
        ValueId t = b.op("Tanh", {h}, s + "tanh", {}, s + "Tanh");
        x = b.op("Mul", {h, t}, s + "mul", {}, s + "Mul");
    }
    b.output(x, ValueType::tensor(DType::Float32, Shape({Dim::symbolic("batch"), Dim::known(d)})));
    return b.buildModel(17, 8);
}

double referenceLoadAndCheck(const std::string& path) {
    Stopwatch w;
    // As onnx.load does: read the whole file, then parse it.
    std::string bytes(std::filesystem::file_size(path), '\0');
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f || std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
        std::cerr << "reference read failed\n";
        std::exit(1);
    }
    std::fclose(f);
    onnx::ModelProto proto;
    google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                 static_cast<int>(bytes.size()));
    input.SetTotalBytesLimit(std::numeric_limits<int>::max());
    if (!proto.ParseFromCodedStream(&input)) {
        std::cerr << "reference parse failed\n";
        std::exit(1);
    }
    onnx::checker::check_model(proto);
    return w.elapsedMs();
}

}  // namespace

int main(int argc, char** argv) {
    int nodes = 6000;
    double weightsMb = 100;
    int repeats = 5;
    bool python = false;
    bool keep = false;
    std::filesystem::path dir = std::filesystem::temp_directory_path();
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--nodes") nodes = std::stoi(next());
        else if (a == "--weights-mb") weightsMb = std::stod(next());
        else if (a == "--repeats") repeats = std::stoi(next());
        else if (a == "--dir") dir = next();
        else if (a == "--python") python = true;
        else if (a == "--keep") keep = true;
        else {
            std::cerr << "unknown argument " << a << "\n";
            return 64;
        }
    }
    const std::string path = (dir / "bench_import.onnx").string();
    Model model = buildModel(nodes, weightsMb);
    if (Status s = exportModel(model, path); !s) {
        std::cerr << s.message() << "\n";
        return 1;
    }
    const auto fileBytes = std::filesystem::file_size(path);

    std::vector<double> ours, oursNoInfer, reference;
    double firstOurs = 0, firstReference = 0;  // fresh memory: page faults included
    size_t importedNodes = 0;
    for (int r = 0; r <= repeats; ++r) {  // r == 0 warms the page cache
        Stopwatch w;
        auto m = importModel(path);
        const double t = w.elapsedMs();
        if (!m) {
            std::cerr << m.status().message() << "\n";
            return 1;
        }
        importedNodes = summarizeModel(*m).totalNodeCount;
        ImportOptions noInfer;
        noInfer.inferShapes = false;
        w.restart();
        auto m2 = importModel(path, noInfer);
        const double t2 = w.elapsedMs();
        const double tr = referenceLoadAndCheck(path);
        if (r == 0) {
            firstOurs = t;
            firstReference = tr;
            continue;
        }
        ours.push_back(t);
        oursNoInfer.push_back(t2);
        reference.push_back(tr);
    }
    const SampleStats o = computeStats(ours), on = computeStats(oursNoInfer),
                      ref = computeStats(reference);
    std::printf("model: %zu nodes, %.1f MB file\n", importedNodes, double(fileBytes) / 1e6);
    std::printf("fusescope import (with shape inference) median %8.1f ms  p90 %8.1f ms\n", o.median, o.p90);
    std::printf("fusescope import (no shape inference)   median %8.1f ms  p90 %8.1f ms\n", on.median, on.p90);
    std::printf("reference protobuf parse + onnx checker median %8.1f ms  p90 %8.1f ms\n", ref.median, ref.p90);
    std::printf("ratio fusescope / reference: %.2f\n", o.median / ref.median);
    std::printf("first run (cold allocations): fusescope %.1f ms, reference %.1f ms, ratio %.2f\n",
                firstOurs, firstReference, firstOurs / firstReference);

    if (python) {
        const std::string script =
            "import time,onnx,statistics as s\n"
            "t=[]\n"
            "for i in range(" + std::to_string(repeats + 1) + "):\n"
            "  a=time.perf_counter(); m=onnx.load('" + path + "'); onnx.checker.check_model(m); "
            "t.append((time.perf_counter()-a)*1000)\n"
            "print('%.1f' % s.median(t[1:]))\n";
        const std::string cmd = "/usr/bin/python3 -c \"" + script + "\"";
        FILE* p = popen(cmd.c_str(), "r");
        char buf[64] = {};
        if (p && std::fgets(buf, sizeof buf, p)) {
            const double py = std::atof(buf);
            std::printf("python onnx.load + check_model       median %8.1f ms\n", py);
            std::printf("ratio fusescope / python onnx: %.2f\n", o.median / py);
        }
        if (p) pclose(p);
    }
    if (keep) std::printf("kept %s\n", path.c_str());
    else std::filesystem::remove(path);
    return 0;
}
