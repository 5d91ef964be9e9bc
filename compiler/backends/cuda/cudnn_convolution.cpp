#include "compiler/backends/cuda/cudnn_convolution.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compiler/backends/cuda/cudnn_api.h"
#include "compiler/backends/cuda/cudnn_conv_graph.h"

namespace fsc {

namespace {

template <typename Fn>
bool resolve(void* library, const char* name, Fn& fn, std::string* missing) {
    fn = reinterpret_cast<Fn>(dlsym(library, name));
    if (!fn && missing->empty()) *missing = name;
    return fn != nullptr;
}

cudnnDataType_t dnnType(dk::ElemType t) {
    return t == dk::ElemType::F16 ? CUDNN_DATA_HALF : t == dk::ElemType::BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// RAII for one call's descriptors.
struct Descriptors {
    const CudnnConvolution::Api* api = nullptr;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    ~Descriptors();
};

}  // namespace

Descriptors::~Descriptors() {
    if (x) api->cudnnDestroyTensorDescriptor(x);
    if (y) api->cudnnDestroyTensorDescriptor(y);
    if (w) api->cudnnDestroyFilterDescriptor(w);
    if (conv) api->cudnnDestroyConvolutionDescriptor(conv);
}

std::unique_ptr<CudnnConvolution> CudnnConvolution::open(cudaStream_t stream, std::string* why) {
    void* library = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        *why = std::string("cuDNN 9 not found (") + dlerror() + ")";
        return nullptr;
    }
    std::unique_ptr<CudnnConvolution> conv(new CudnnConvolution);
    conv->m_library = library;
    conv->m_api = std::make_unique<Api>();
    Api& a = *conv->m_api;
    std::string missing;
#define FSC_DNN_RESOLVE(name) resolve(library, #name, a.name, &missing);
    FSC_CUDNN_ENTRY_POINTS(FSC_DNN_RESOLVE)
#undef FSC_DNN_RESOLVE
    if (!missing.empty()) {
        *why = "cuDNN lacks " + missing;
        return nullptr;  // the destructor closes the library
    }
    cudnnHandle_t handle = nullptr;
    if (cudnnStatus_t s = a.cudnnCreate(&handle); s != CUDNN_STATUS_SUCCESS) {
        *why = std::string("cudnnCreate: ") + a.cudnnGetErrorString(s);
        return nullptr;
    }
    conv->m_handle = handle;
    conv->m_stream = stream;
    if (cudnnStatus_t s = a.cudnnSetStream(handle, stream); s != CUDNN_STATUS_SUCCESS) {
        *why = std::string("cudnnSetStream: ") + a.cudnnGetErrorString(s);
        return nullptr;
    }
    return conv;
}

CudnnConvolution::~CudnnConvolution() {
    m_graphs.clear();  // their plans before the handle
    if (m_handle) m_api->cudnnDestroy(static_cast<cudnnHandle_t>(m_handle));
    if (m_library) dlclose(m_library);
}

std::string CudnnConvolution::version() const {
    const size_t v = m_api->cudnnGetVersion();
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

namespace {

// One key per shape, layout, type, math and epilogue: what a plan or an algorithm is chosen for.
std::string shapeKey(const ConvCall& c) {
    std::string key = std::to_string(int(c.type)) + "/g" + std::to_string(c.group) + (c.channelsLast ? "/nhwc" : "") +
                      (c.inputChannelsLast ? "/in" : "") + (c.filterChannelsLast ? "/krsc" : "") + (c.tf32 ? "/tf32" : "") +
                      "/n" + std::to_string(c.n) + "c" +
                      std::to_string(c.c) + "k" + std::to_string(c.k);
    for (int d = 0; d < c.spatial; ++d)
        key += "," + std::to_string(c.inDims[d]) + "x" + std::to_string(c.kernel[d]) + "s" + std::to_string(c.strides[d]) +
               "d" + std::to_string(c.dilations[d]) + "p" + std::to_string(c.pads[d]);
    key += std::string(c.bias ? "/bias" : "") + (c.z ? "/z" : "") + "/act" + std::to_string(int(c.act));
    return key;
}

}  // namespace

Status CudnnConvolution::run(const ConvCall& c, const Workspace& workspace, const Launcher& launch, const Memory& memory,
                             bool capturing) {
    FSC_RETURN_IF_ERROR(checkConvCall(c));
    const std::string key = shapeKey(c);
    const CudnnConvGraph* graph = nullptr;
    bool planned = false;
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_graphs.find(key); it != m_graphs.end()) {
            planned = true;
            graph = it->second.get();
        }
    }
    if (!planned && !capturing) {
        // Planned outside the lock: the engines are checked against the legacy call, which
        // takes it. Its output goes to memory from the device's allocator, so the peak counts it.
        void* out = nullptr;
        auto reference = [&]() -> Result<const void*> {
            auto got = memory.allocate(convOutputBytes(c));
            if (!got) return got.status().withContext("the reference output the engines are checked against");
            out = *got;
            ConvCall legacy = c;
            legacy.y = out;
            FSC_RETURN_IF_ERROR(runLegacy(legacy, workspace));
            FSC_RETURN_IF_ERROR(legacy.hasEpilogue() ? launch(convEpilogueLaunch(legacy)) : Status::ok());
            return static_cast<const void*>(out);
        };
        std::string why;
        auto built = CudnnConvGraph::build(*m_api, m_handle, m_stream, c, workspace, reference, &why);
        if (out) {
            cudaStreamSynchronize(m_stream);
            memory.release(out);
        }
        std::lock_guard lock(m_mutex);
        ++(built ? m_routes.graphs : m_routes.legacy);
        if (!built) m_routes.lastLegacyReason = why;
        // FUSESCOPE_CUDNN_LOG=1: each shape's route on stderr, for the device kit's logs.
        if (std::getenv("FUSESCOPE_CUDNN_LOG"))
            std::fprintf(stderr, "cuDNN %s: %s\n", key.c_str(),
                         built ? ("operation graph, " + built->choice()).c_str() : ("legacy call: " + why).c_str());
        graph = m_graphs.emplace(key, std::move(built)).first->second.get();
    }
    if (graph && CudnnConvGraph::aligned(c)) return graph->execute(c, workspace);
    FSC_RETURN_IF_ERROR(runLegacy(c, workspace));
    return c.hasEpilogue() ? launch(convEpilogueLaunch(c)) : Status::ok();
}

CudnnConvolution::Routes CudnnConvolution::routes() const {
    std::lock_guard lock(m_mutex);
    return m_routes;
}

Status CudnnConvolution::runLegacy(const ConvCall& c, const Workspace& workspace) {
    const Api& a = *m_api;
    auto failed = [&](const char* what, cudnnStatus_t s) {
        return Status(ErrorCode::Internal, std::string(what) + ": " + a.cudnnGetErrorString(s));
    };
#define FSC_DNN(call)                                                             \
    do {                                                                          \
        if (cudnnStatus_t s_ = (call); s_ != CUDNN_STATUS_SUCCESS) return failed(#call, s_); \
    } while (0)
    // cuDNN wants at least two spatial dims: a 1-D convolution is a 2-D one of height 1.
    const int spatial = std::max(c.spatial, 2);
    std::vector<int> xDims{int(c.n), int(c.c)}, yDims{int(c.n), int(c.k)}, wDims{int(c.k), int(c.c / c.group)};
    std::vector<int> pads, strides, dilations;
    for (int d = 0; d < spatial; ++d) {
        const bool real = d < c.spatial;
        xDims.push_back(real ? int(c.inDims[d]) : 1);
        yDims.push_back(real ? int(c.outDims[d]) : 1);
        wDims.push_back(real ? int(c.kernel[d]) : 1);
        pads.push_back(real ? int(c.pads[d]) : 0);
        strides.push_back(real ? int(c.strides[d]) : 1);
        dilations.push_back(real ? int(c.dilations[d]) : 1);
    }
    auto packed = [](const std::vector<int>& dims) {
        std::vector<int> s(dims.size(), 1);
        for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
        return s;
    };
    const cudnnDataType_t type = dnnType(c.type);
    std::lock_guard lock(m_mutex);
    cudnnHandle_t handle = static_cast<cudnnHandle_t>(m_handle);
    Descriptors d;
    d.api = &a;
    FSC_DNN(a.cudnnCreateTensorDescriptor(&d.x));
    FSC_DNN(a.cudnnCreateTensorDescriptor(&d.y));
    FSC_DNN(a.cudnnCreateFilterDescriptor(&d.w));
    FSC_DNN(a.cudnnCreateConvolutionDescriptor(&d.conv));
    // Channels last: the same dims, the channel stride 1 (cuDNN takes any packed order).
    auto channelsLast = [](const std::vector<int>& d) { return std::vector<int>{d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]}; };
    const bool nhwc = c.channelsLast && xDims.size() == 4, nhwcIn = nhwc && c.inputChannelsLast;
    const auto xs = nhwcIn ? channelsLast(xDims) : packed(xDims), ys = nhwc ? channelsLast(yDims) : packed(yDims);
    FSC_DNN(a.cudnnSetTensorNdDescriptor(d.x, type, int(xDims.size()), xDims.data(), xs.data()));
    FSC_DNN(a.cudnnSetTensorNdDescriptor(d.y, type, int(yDims.size()), yDims.data(), ys.data()));
    // Dims in K, C, R, S order either way; the format says how they are stored.
    const bool krsc = c.filterChannelsLast && wDims.size() == 4;
    FSC_DNN(a.cudnnSetFilterNdDescriptor(d.w, type, krsc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, int(wDims.size()), wDims.data()));
    // Products accumulate in float32 for every type; float32 stays off TF32 unless asked (so
    // results match the CPU backend to 1e-4): CUDNN_DEFAULT_MATH lets it use TF32, as PyTorch
    // sets it; ALLOW_CONVERSION would also let cuDNN convert float32 down to float16.
    FSC_DNN(a.cudnnSetConvolutionNdDescriptor(d.conv, spatial, pads.data(), strides.data(), dilations.data(),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    FSC_DNN(a.cudnnSetConvolutionGroupCount(d.conv, int(c.group)));
    FSC_DNN(a.cudnnSetConvolutionMathType(d.conv, c.type != dk::ElemType::F32 ? CUDNN_TENSOR_OP_MATH : c.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));

    std::string key = std::to_string(int(c.type)) + "/" + std::to_string(c.group) + (nhwc ? "/nhwc" : "") + (nhwcIn ? "/in" : "") +
                      (krsc ? "/krsc" : "") + (c.tf32 ? "/tf32" : "");
    for (const auto* v : {&xDims, &wDims, &pads, &strides, &dilations})
        for (int x : *v) key += "," + std::to_string(x);
    cudnnConvolutionFwdAlgo_t algo;
    if (auto it = m_algorithms.find(key); it != m_algorithms.end()) {
        algo = cudnnConvolutionFwdAlgo_t(it->second);
    } else {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int returned = 0;
        FSC_DNN(a.cudnnGetConvolutionForwardAlgorithm_v7(handle, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                         &returned, perf));
        int chosen = -1;
        for (int i = 0; i < returned && chosen < 0; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= (size_t(256) << 20)) chosen = i;
        if (chosen < 0) return Status(ErrorCode::Unsupported, "cuDNN has no forward algorithm for this convolution");
        algo = perf[chosen].algo;
        m_algorithms[key] = int(algo);
    }
    size_t bytes = 0;
    FSC_DNN(a.cudnnGetConvolutionForwardWorkspaceSize(handle, d.x, d.w, d.conv, d.y, algo, &bytes));
    // The device's workspace, not one of cuDNN's own: freeing a smaller one when a larger shape
    // came along left CUDA Graphs captured for earlier shapes pointing into freed memory, and
    // it was missing from the device's peak.
    void* scratch = nullptr;
    if (bytes) {
        auto got = workspace(bytes);
        if (!got) return got.status().withContext("cuDNN's workspace of " + std::to_string(bytes) + " bytes");
        scratch = *got;
    }
    const float alpha = 1.f, beta = 0.f;
    FSC_DNN(a.cudnnConvolutionForward(handle, &alpha, d.x, c.x, d.w, c.w, d.conv, algo, scratch, bytes, &beta, d.y, c.y));
#undef FSC_DNN
    return Status::ok();
}

}  // namespace fsc
