#include "compiler/runtime/feeds.h"

#include <filesystem>
#include <set>

#include "compiler/runtime/executor.h"
#include "compiler/runtime/half.h"
#include "core/tensor_io.h"

namespace fsc {

RtTensor randomTensor(DType dtype, std::vector<int64_t> dims, std::mt19937_64& rng, int64_t integerBound) {
    const DType t = dtype == DType::Undefined ? DType::Float32 : dtype;
    RtTensor out = allocateTensor(t, std::move(dims));
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> small(0, int(std::clamp<int64_t>(integerBound, 1, 10)) - 1);
    std::uniform_int_distribution<int> coin(0, 9);
    for (int64_t i = 0; i < out.numel(); ++i) {
        switch (t) {
            case DType::Float32: out.as<float>()[i] = float(real(rng)); break;
            case DType::Float64: out.as<double>()[i] = real(rng); break;
            case DType::Float16: out.as<uint16_t>()[i] = floatToHalf(float(real(rng))); break;
            case DType::BFloat16: out.as<uint16_t>()[i] = floatToBfloat16(float(real(rng))); break;
            case DType::Bool: out.as<bool>()[i] = coin(rng) >= 5; break;
            case DType::Int64: out.as<int64_t>()[i] = small(rng); break;
            case DType::Int32: out.as<int32_t>()[i] = small(rng); break;
            case DType::Int8: out.as<int8_t>()[i] = int8_t(small(rng)); break;
            case DType::UInt8: out.as<uint8_t>()[i] = uint8_t(small(rng)); break;
            default: break;  // stays zero
        }
    }
    return out;
}

Status checkDimNames(const Graph& graph, const std::vector<ValueId>& inputs, const std::map<std::string, int64_t>& dims) {
    std::set<std::string> named;
    for (ValueId id : inputs)
        for (const Dim& d : graph.value(id).type.shape.dims())
            if (d.isSymbolic()) named.insert(d.symbol());
    for (const auto& [name, size] : dims) {
        if (named.count(name)) continue;
        std::string known;
        for (const std::string& n : named) known += (known.empty() ? "" : ", ") + n;
        return Status(ErrorCode::InvalidArgument,
                      "no input has a dim named '" + name + "' (" +
                          (known.empty() ? std::string("the inputs have no named dims") : "their named dims: " + known) + ")");
    }
    return Status::ok();
}

Result<Feeds> buildFeeds(const Executor& executor, const FeedOptions& options) {
    const Graph& graph = executor.graph();
    const std::vector<ValueId>& ids = executor.feeds();
    if (Status s = checkDimNames(graph, ids, options.dims); !s) return s;
    Feeds feeds;
    feeds.tensors.resize(ids.size());
    feeds.sources.assign(ids.size(), "random");
    auto load = [&](size_t i, const std::string& file) -> Status {
        auto t = readTensorFile(file);
        if (!t) return t.status();
        auto rt = tensorFromConstant(*t);
        if (!rt) return rt.status().withContext(file);
        feeds.tensors[i] = *rt;
        feeds.sources[i] = file;
        return Status::ok();
    };
    if (!options.inputDir.empty()) {
        if (!std::filesystem::is_directory(options.inputDir))
            return Status(ErrorCode::InvalidArgument, options.inputDir + ": not a directory");
        for (size_t i = 0; i < ids.size(); ++i) {
            const std::string file = options.inputDir + "/input_" + std::to_string(i) + ".pb";
            if (!std::filesystem::exists(file))
                return Status(ErrorCode::InvalidArgument, file + ": missing (input '" + graph.value(ids[i]).name +
                                                              "' is input " + std::to_string(i) + ")");
            if (Status s = load(i, file); !s) return s;
        }
    }
    for (const auto& [name, file] : options.files) {
        size_t i = 0;
        while (i < ids.size() && graph.value(ids[i]).name != name) ++i;
        if (i == ids.size()) {
            std::string names;
            for (ValueId id : ids) names += (names.empty() ? "" : ", ") + graph.value(id).name;
            return Status(ErrorCode::InvalidArgument,
                          "the model has no input named '" + name + "' (inputs: " + names + ")");
        }
        if (Status s = load(i, file); !s) return s;
    }
    std::vector<ValueId> generated;
    for (size_t i = 0; i < ids.size(); ++i)
        if (!feeds.tensors[i].defined()) generated.push_back(ids[i]);
    feeds.sizing = sizeInputs(graph, generated, options.dims);
    std::mt19937_64 rng(options.seed);
    for (size_t i = 0, k = 0; i < ids.size(); ++i)
        if (!feeds.tensors[i].defined())
            feeds.tensors[i] = randomTensor(graph.value(ids[i]).type.elemType, feeds.sizing.dims[k++], rng,
                                            generatedIntegerBound(graph, ids[i]));
    return feeds;
}

}  // namespace fsc
