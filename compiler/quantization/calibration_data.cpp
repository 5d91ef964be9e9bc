#include "compiler/quantization/calibration_data.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "core/tensor_io.h"

namespace fsc {
namespace {

namespace fs = std::filesystem;

std::string dimsText(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

Status checkFits(const Graph& graph, ValueId input, const RtTensor& t, const fs::path& file) {
    const ValueType& type = graph.value(input).type;
    const std::string name = graph.value(input).name;
    if (type.elemType != DType::Undefined && t.dtype != type.elemType)
        return {ErrorCode::InvalidArgument, file.string() + ": " + std::string(dtypeName(t.dtype)) + " data for input '" + name +
                                                "', which is " + std::string(dtypeName(type.elemType))};
    if (type.shape.rankKnown()) {
        if (type.shape.rank() != t.rank())
            return {ErrorCode::InvalidArgument, file.string() + ": shape " + dimsText(t.dims) + " for input '" + name +
                                                    "' of rank " + std::to_string(type.shape.rank())};
        for (size_t d = 0; d < t.rank(); ++d)
            if (type.shape.dims()[d].isKnown() && type.shape.dims()[d].size() != t.dims[d])
                return {ErrorCode::InvalidArgument, file.string() + ": shape " + dimsText(t.dims) + " does not fit input '" + name + "'"};
    }
    return Status::ok();
}

Result<RtTensor> readFitting(const Graph& graph, ValueId input, const fs::path& file) {
    auto t = readTensorFile(file);
    if (!t) return t.status().withContext(file.string());
    auto rt = tensorFromConstant(*t);
    if (!rt) return rt.status().withContext(file.string());
    FSC_RETURN_IF_ERROR(checkFits(graph, input, *rt, file));
    return cloneTensor(*rt);
}

// input_K.pb or input_K.npy for every fed input, or an error naming what is missing.
Result<std::vector<RtTensor>> readSet(const Graph& graph, const std::vector<ValueId>& inputs, const fs::path& dir) {
    std::vector<RtTensor> set;
    for (size_t k = 0; k < inputs.size(); ++k) {
        fs::path file = dir / ("input_" + std::to_string(k) + ".pb");
        if (!fs::exists(file)) file = dir / ("input_" + std::to_string(k) + ".npy");
        if (!fs::exists(file))
            return Status(ErrorCode::InvalidArgument, (dir / ("input_" + std::to_string(k) + ".pb")).string() +
                                                          ": missing (input '" + graph.value(inputs[k]).name + "')");
        auto t = readFitting(graph, inputs[k], file);
        if (!t) return t.status();
        set.push_back(std::move(*t));
    }
    return set;
}

bool hasSetFiles(const fs::path& dir) {
    return fs::exists(dir / "input_0.pb") || fs::exists(dir / "input_0.npy");
}

std::vector<fs::path> sortedEntries(const fs::path& dir) {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    return entries;
}

// A smooth picture per channel: a few low-frequency waves and soft blobs in [0, 1], then
// normalised as torchvision's ImageNet models expect.
void fillSyntheticImages(RtTensor& t, std::mt19937_64& rng) {
    constexpr float mean[3] = {0.485f, 0.456f, 0.406f}, stdev[3] = {0.229f, 0.224f, 0.225f};
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    const int64_t n = t.dims[0], c = t.dims[1], h = t.dims[2], w = t.dims[3];
    float* p = t.as<float>();
    for (int64_t b = 0; b < n; ++b) {
        struct Wave { float fx, fy, phase, amp; };
        struct Blob { float x, y, r, amp; };
        std::vector<Wave> waves(3);
        std::vector<Blob> blobs(4);
        for (Wave& v : waves) v = {u(rng) * 6, u(rng) * 6, u(rng) * 6.3f, 0.15f + 0.2f * u(rng)};
        for (Blob& v : blobs) v = {u(rng), u(rng), 0.05f + 0.25f * u(rng), u(rng) - 0.3f};
        for (int64_t ch = 0; ch < c; ++ch) {
            const float tint = u(rng);
            for (int64_t y = 0; y < h; ++y)
                for (int64_t x = 0; x < w; ++x) {
                    const float fx = float(x) / float(w), fy = float(y) / float(h);
                    float v = 0.3f + 0.4f * tint;
                    for (const Wave& wv : waves)
                        v += wv.amp * std::sin(2 * std::numbers::pi_v<float> * (wv.fx * fx + wv.fy * fy) + wv.phase + float(ch));
                    for (const Blob& bl : blobs) {
                        const float d2 = (fx - bl.x) * (fx - bl.x) + (fy - bl.y) * (fy - bl.y);
                        v += bl.amp * std::exp(-d2 / (bl.r * bl.r));
                    }
                    v = std::clamp(v, 0.0f, 1.0f);
                    p[((b * c + ch) * h + y) * w + x] = (v - mean[ch % 3]) / stdev[ch % 3];
                }
        }
    }
}

}  // namespace

std::vector<ValueId> fedInputs(const Graph& graph) {
    std::vector<ValueId> ids;
    for (ValueId id : graph.inputs)
        if (graph.value(id).kind == Value::Kind::GraphInput) ids.push_back(id);
    return ids;
}

Result<CalibrationData> loadCalibrationData(const Graph& graph, const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return Status(ErrorCode::InvalidArgument, dir.string() + ": not a folder of calibration inputs");
    const std::vector<ValueId> inputs = fedInputs(graph);
    CalibrationData data;
    for (ValueId id : inputs) data.inputNames.push_back(graph.value(id).name);
    if (hasSetFiles(dir)) {
        auto set = readSet(graph, inputs, dir);
        if (!set) return set.status();
        data.samples.push_back(std::move(*set));
    } else {
        for (const fs::path& entry : sortedEntries(dir)) {
            if (fs::is_directory(entry) && hasSetFiles(entry)) {
                auto set = readSet(graph, inputs, entry);
                if (!set) return set.status();
                data.samples.push_back(std::move(*set));
            } else if (entry.extension() == ".npy" && inputs.size() == 1) {
                auto t = readFitting(graph, inputs[0], entry);
                if (!t) return t.status();
                data.samples.push_back({std::move(*t)});
            }
        }
    }
    if (data.samples.empty())
        return Status(ErrorCode::InvalidArgument,
                      dir.string() + ": no calibration inputs (expected input_0.pb/.npy, folders of them, or .npy files for a one-input model)");
    data.source = dir.string() + " (" + std::to_string(data.samples.size()) + " sets)";
    return data;
}

CalibrationData generateCalibrationData(const Graph& graph, int count, uint64_t seed,
                                        const std::map<std::string, int64_t>& dims) {
    std::mt19937_64 rng(seed);
    CalibrationData data;
    data.generated = true;
    bool images = false;
    const std::vector<ValueId> inputs = fedInputs(graph);
    data.sizing = sizeInputs(graph, inputs, dims);
    for (ValueId id : inputs) data.inputNames.push_back(graph.value(id).name);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<int64_t> bounds;
    for (ValueId id : inputs) bounds.push_back(generatedIntegerBound(graph, id));
    std::uniform_int_distribution<int> coin(0, 9);
    for (int s = 0; s < count; ++s) {
        std::vector<RtTensor> set;
        for (size_t i = 0; i < inputs.size(); ++i) {
            std::uniform_int_distribution<int> index(0, int(bounds[i]) - 1);
            const ValueType& type = graph.value(inputs[i]).type;
            const DType dtype = type.elemType == DType::Undefined ? DType::Float32 : type.elemType;
            RtTensor t = allocateTensor(dtype, data.sizing.dims[i]);
            if (dtype == DType::Float32 && t.rank() == 4 && t.dims[1] == 3) {
                fillSyntheticImages(t, rng);
                images = true;
            } else {
                for (int64_t i = 0; i < t.numel(); ++i) {
                    switch (dtype) {
                        case DType::Float32: t.as<float>()[i] = normal(rng); break;
                        case DType::Float64: t.as<double>()[i] = normal(rng); break;
                        case DType::Int64: t.as<int64_t>()[i] = index(rng); break;
                        case DType::Int32: t.as<int32_t>()[i] = index(rng); break;
                        case DType::Bool: t.as<bool>()[i] = coin(rng) >= 5; break;
                        default: break;  // stays zero
                    }
                }
            }
            set.push_back(std::move(t));
        }
        data.samples.push_back(std::move(set));
    }
    data.source = "generated: " + std::to_string(count) + (images ? " smooth synthetic images" : " standard-normal samples") +
                  " (seed " + std::to_string(seed) + "), no user data";
    return data;
}

Result<CalibrationData> checkInputs(const Graph& graph, const InputChoice& choice, int count, uint64_t seed) {
    if (!choice.dir.empty()) return loadCalibrationData(graph, choice.dir);
    CalibrationData data = generateCalibrationData(graph, count, seed, choice.dims);
    const std::vector<ValueId> inputs = fedInputs(graph);
    for (const auto& [name, file] : choice.files) {
        const auto at = std::find(data.inputNames.begin(), data.inputNames.end(), name);
        if (at == data.inputNames.end()) {
            std::string names;
            for (const std::string& n : data.inputNames) names += (names.empty() ? "" : ", ") + n;
            return Status(ErrorCode::InvalidArgument, "the model has no input named '" + name + "' (inputs: " + names + ")");
        }
        const size_t k = size_t(at - data.inputNames.begin());
        auto t = readFitting(graph, inputs[k], file);
        if (!t) return t.status();
        for (auto& sample : data.samples) sample[k] = *t;
        data.source += ", '" + name + "' from " + file;
    }
    return data;
}

CalibrationSplit holdBack(CalibrationData data) {
    CalibrationSplit split;
    const size_t n = data.samples.size();
    const size_t held = n >= 2 ? std::max<size_t>(1, n / 4) : 0;
    split.heldBack.inputNames = data.inputNames;
    split.heldBack.generated = data.generated;
    split.heldBack.sizing = data.sizing;
    split.heldBack.source = data.source + ", held back " + std::to_string(held);
    for (size_t i = n - held; i < n; ++i) split.heldBack.samples.push_back(std::move(data.samples[i]));
    data.samples.resize(n - held);
    data.source += ", calibrating on " + std::to_string(n - held);
    split.calibration = std::move(data);
    return split;
}

}  // namespace fsc
