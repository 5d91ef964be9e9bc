// Chapters 4 (fusion) and 5 (lowering and kernels): both profile graphs of the compile on
// the CPU with profile's own code (profileGraph), so their times are the ones `profile`
// would report for the same graph.
#include <algorithm>
#include <map>
#include <set>

#include "compiler/backends/cuda/cuda_provider.h"
#include "app/reports/graph_svg.h"
#include "app/profiling/profile_session.h"
#include "app/walkthrough/walkthrough_chapters.h"
#include "compiler/backends/cuda/generated_kernels.h"
#include "compiler/runtime/capability_table.h"
#include "compiler/runtime/kernel_registry.h"
#include "profiler/report_charts.h"
#include "profiler/roofline.h"

namespace fsc {
namespace {

constexpr int kProfileWarmup = 1, kProfileIterations = 3;

// On the walkthrough's backend: the CPU, or the GPU through CUPTI.
Result<Trace> profileRun(const WalkthroughInput& in, std::shared_ptr<const Graph> graph, const std::string& what) {
    if (in.progress) in.progress("profiling " + what);
    ProfileRequest request = in.session.profileRequest(std::move(graph), in.target(), in.pipelineName);
    request.feeds = in.feeds();
    request.warmup = kProfileWarmup;
    request.iterations = kProfileIterations;
    return profileGraph(request, in.cancel);
}

// Per plan node id: time per iteration in ms.
std::map<int64_t, double> msPerNode(const Trace& trace) {
    std::map<int64_t, double> ms;
    for (const NodeStat& s : computeNodeStats(trace))
        ms[s.node] = double(s.medianNs) / 1e6;
    return ms;
}

// The imported nodes a node stands for (itself when it was imported).
std::vector<NodeId> originsOf(NodeId id, const Node& n) {
    return n.origins.empty() ? std::vector<NodeId>{id} : n.origins;
}

bool isFusionPass(const std::string& name) {
    return name.size() > 7 && name.compare(name.size() - 7, 7, "-fusion") == 0;
}

// One fused node of the compiled graph and the nodes of the graph before fusion it replaced.
struct FusedGroup {
    NodeId node;
    std::vector<NodeId> members;  // in the graph before fusion
};

std::vector<FusedGroup> fusedGroups(const Graph& before, const Graph& after) {
    std::map<NodeId, NodeId> ownerOfOrigin;  // imported node -> the compiled node made from it
    for (NodeId id : after.order())
        for (NodeId o : originsOf(id, after.node(id))) ownerOfOrigin[o] = id;
    std::map<NodeId, std::vector<NodeId>> members;
    for (NodeId id : before.order()) {
        const std::vector<NodeId> origins = originsOf(id, before.node(id));
        auto owner = ownerOfOrigin.find(origins.front());
        if (owner == ownerOfOrigin.end()) continue;
        const bool allInside = std::all_of(origins.begin(), origins.end(), [&](NodeId o) {
            auto it = ownerOfOrigin.find(o);
            return it != ownerOfOrigin.end() && it->second == owner->second;
        });
        if (allInside) members[owner->second].push_back(id);
    }
    std::vector<FusedGroup> groups;
    for (auto& [node, list] : members)
        if (list.size() >= 2) groups.push_back({node, std::move(list)});
    return groups;
}

const TraceNode* traceNode(const Trace& trace, NodeId id) {
    return trace.findNode(int64_t(id.index));
}

// How the CUDA backend would run a node: the library behind its kernel, or the host.
std::string gpuLowering(const Model& model, const Node& n) {
    const KernelDef* def = cudaKernels().find(n.domain, n.opType, model.opsetVersion(n.domain), Backend::Cuda);
    const bool claimed = cudaCapabilities().find(n.domain, n.opType) != nullptr;
    if (!claimed) return "host (CPU fallback: a graph break)";
    if (!def) return "host (by design: shapes, control flow)";
    if (def->variant == "cublaslt") return "cuBLASLt";
    if (def->variant == "cudnn") return "cuDNN";
    if (def->variant == "nvrtc") return "NVRTC (generated)";
    return "Fusescope CUDA kernel";
}

// Which library ran a node, from its kernel id `<op>.<dtype>.<variant>`.
std::string kernelLibrary(const std::string& kernelId) {
    const std::string variant = kernelId.substr(kernelId.rfind('.') + 1);
    static const std::map<std::string, std::string> libraries = {
        {"onednn", "oneDNN"}, {"openblas", "OpenBLAS"}, {"cublaslt", "cuBLASLt"}, {"cudnn", "cuDNN"}, {"nvrtc", "NVRTC"}};
    auto it = libraries.find(variant);
    return it != libraries.end() ? it->second : "Fusescope (" + variant + ")";
}

}  // namespace

// Chapter 4: the model's fused groups by kind, with the cost model's bytes and the measured
// time of the nodes before fusion against the fused node's.
WalkthroughChapter fusionChapter(const WalkthroughInput& in) {
    WalkthroughChapter c;
    c.paragraphs = {
        "Fusion replaces a group of nodes with one that computes the same thing in one kernel. "
        "What it saves is memory traffic and launches: the group's intermediates (a MatMul's "
        "output before its bias and GELU, a normalisation's mean and variance) stay in registers "
        "or cache instead of being written out and read back, and one kernel runs where several "
        "did. Element-wise chains and normalisations are memory-bound, so their time falls "
        "almost in proportion to the bytes saved; a GEMM's epilogue hides its bias and "
        "activation in work the GEMM was doing anyway.",
        "Each fusion pass looks for its pattern (MatMul + Add + activation, the scaled-dot-product "
        "attention subgraph, LayerNorm written out as nine element-wise nodes, leftover "
        "element-wise groups) and checks the shapes before it rewrites. Below, every fused node of "
        "the compiled graph is matched through provenance with the nodes it replaced in the graph "
        "just before the first fusion pass; both graphs are profiled (on the backend timing names) and the time of "
        "the replaced nodes is set against the fused node's.",
        "Element-wise groups that no named fusion or epilogue took become one generated kernel: "
        "on the GPU, CUDA C++ compiled at run time with NVRTC. When this model has one, its "
        "source is below; when it has none, that says where its element-wise ops went."};
    const CompileResult& compiled = *in.session.compiledResult();
    const auto& passes = compiled.trace.passes;
    auto first = std::find_if(passes.begin(), passes.end(), [](const PassReport& p) { return isFusionPass(p.name); });
    if (first == passes.end()) {
        c.notApplicable = "The pipeline " + in.pipelineName + " has no fusion pass; compile with O2 or O3 to see fusion.";
        return c;
    }
    nlohmann::json perPass = nlohmann::json::array();
    for (const PassReport& p : passes)
        if (isFusionPass(p.name))
            perPass.push_back({{"pass", p.name},
                               {"nodes_before", p.nodesBefore},
                               {"nodes_after", p.nodesAfter},
                               {"rejected_matches", p.rejections.size()}});
    c.figures["fusion_passes"] = perPass;
    const auto& beforeSnapshot = first == passes.begin() ? compiled.trace.imported : std::prev(first)->snapshot;
    if (!beforeSnapshot) {
        c.notApplicable = "The compile kept no snapshots, so there is no graph before fusion to compare with.";
        return c;
    }
    const std::shared_ptr<const Graph> before = beforeSnapshot->materialize();
    const Graph& after = *in.session.compiledModel()->graph;
    const std::vector<FusedGroup> groups = fusedGroups(*before, after);
    if (groups.empty()) {
        c.notApplicable = "No fusion pattern matched this model. A transformer (MatMul + bias + GELU, attention, "
                          "LayerNorm) or a CNN (Conv + BatchNorm + ReLU) shows them.";
        return c;
    }
    auto beforeRun = profileRun(in, before, "the graph before fusion");
    if (cancelled(in)) return c;
    auto afterRun = beforeRun ? profileRun(in, in.session.compiledModel()->graph, "the compiled graph")
                              : Result<Trace>(beforeRun.status());
    if (cancelled(in)) return c;
    if (!afterRun) {
        c.notApplicable = "The model does not run on the " + std::string(backendOf(in)) + " backend here (" + afterRun.status().message() +
                          "), so fusion's effect cannot be measured; a model of standard ONNX ops would show it.";
        return c;
    }
    const std::map<int64_t, double> beforeMs = msPerNode(*beforeRun), afterMs = msPerNode(*afterRun);
    struct Kind {
        int groups = 0, nodesReplaced = 0;
        double bytesBefore = 0, bytesAfter = 0, msBefore = 0, msAfter = 0;
        std::string example, exampleOps;
        std::vector<NodeId> exampleMembers;  // in the graph before fusion
        double exampleMs = -1;
    };
    std::map<std::string, Kind> kinds;
    for (const FusedGroup& g : groups) {
        const Node& fused = after.node(g.node);
        Kind& k = kinds[fused.opType];
        ++k.groups;
        k.nodesReplaced += int(g.members.size());
        double groupMs = 0;
        std::string ops;
        for (NodeId m : g.members) {
            if (const TraceNode* t = traceNode(*beforeRun, m)) k.bytesBefore += t->bytes;
            auto ms = beforeMs.find(int64_t(m.index));
            if (ms != beforeMs.end()) groupMs += ms->second;
            ops += (ops.empty() ? "" : " + ") + before->node(m).opType;
        }
        k.msBefore += groupMs;
        if (const TraceNode* t = traceNode(*afterRun, g.node)) k.bytesAfter += t->bytes;
        auto ms = afterMs.find(int64_t(g.node.index));
        if (ms != afterMs.end()) k.msAfter += ms->second;
        if (groupMs > k.exampleMs) k.exampleMs = groupMs, k.example = fused.name, k.exampleOps = ops, k.exampleMembers = g.members;
    }
    nlohmann::json rows = nlohmann::json::array();
    std::vector<ChartBar> bars;
    for (const auto& [op, k] : kinds) {
        rows.push_back({{"fused_op", op},
                        {"groups", k.groups},
                        {"nodes_replaced", k.nodesReplaced},
                        {"launches_saved", k.nodesReplaced - k.groups},
                        {"bytes_before", k.bytesBefore},
                        {"bytes_after", k.bytesAfter},
                        {"bytes_saved", k.bytesBefore - k.bytesAfter},
                        {"ms_before", k.msBefore},
                        {"ms_after", k.msAfter},
                        {"example", k.example},
                        {"example_replaced", k.exampleOps}});
        bars.push_back({op + ", before", k.msBefore});
        bars.push_back({op + ", fused", k.msAfter});
    }
    c.figures["by_fused_op"] = rows;
    // One real group drawn as it was before fusion: the kind that saves the most bytes.
    auto drawn = std::max_element(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) {
        return a.second.bytesBefore - a.second.bytesAfter < b.second.bytesBefore - b.second.bytesAfter;
    });
    if (drawn != kinds.end() && drawn->second.exampleMembers.size() > 1)
        c.charts.push_back({"Before fusion: the " + std::to_string(drawn->second.exampleMembers.size()) + " nodes (" +
                                drawn->second.exampleOps + ") that became one " + drawn->first + " node, " +
                                drawn->second.example,
                            graphPartSvg(*before, drawn->second.exampleMembers)});
    c.figures["timing"] = {{"backend", backendOf(in)},
                           {"warmup", kProfileWarmup},
                           {"iterations", kProfileIterations},
                           {"graph_before", first == passes.begin() ? "imported" : std::prev(first)->name},
                           {"inputs", "generated, seed 0"}};
    c.charts.push_back({"Time per iteration of each kind of fused group: the replaced nodes before fusion "
                        "against the fused node (CPU, measured)",
                        barChartSvg(bars, "ms")});
    std::string absorbedBy;  // this model's fused kinds, which took its element-wise ops
    for (const auto& [op, k] : kinds) absorbedBy += (absorbedBy.empty() ? "" : ", ") + op;
    c.figures["generated_kernel"] = "none: on this model every element-wise op went into a named fusion or a "
                                    "convolution's or GEMM's epilogue" +
                                    (absorbedBy.empty() ? std::string() : " (" + absorbedBy + ")") +
                                    ", so no generated kernel was needed.";
    for (const GeneratedKernel& k : generatedCudaKernels(after))
        if (k.error.empty()) {
            c.figures["generated_kernel"] = {{"node", k.nodeName}, {"entry", k.kernel.name}, {"cuda_source", k.kernel.source}};
            break;
        }
    return c;
}

// Chapter 5: who runs each node (CPU kernel library here, the CUDA backend's library) and
// where each sits on this machine's roofline.
WalkthroughChapter loweringChapter(const WalkthroughInput& in) {
    WalkthroughChapter c;
    c.paragraphs = {
        "Lowering picks a kernel for every node. Dense linear algebra goes to vendor libraries "
        "tuned per shape and per chip: on the CPU, oneDNN's GEMM and convolution primitives; on "
        "NVIDIA GPUs, cuBLASLt for GEMMs (with the bias and activation in its epilogue) and cuDNN "
        "for convolutions. Fused element-wise groups have no library kernel, so Fusescope "
        "generates one (a C++ loop on the CPU, CUDA C++ compiled by NVRTC on the GPU). The rest "
        "runs Fusescope's own kernels; a node the CUDA backend has no kernel for runs on the host.",
        "The roofline says what limits each node on this machine. A node doing few FLOPs per byte "
        "it moves (element-wise ops, normalisations, most of attention's softmax) cannot go faster "
        "than memory bandwidth allows: memory-bound, helped by fusion and narrower types. One "
        "doing many (large GEMMs and convolutions) is compute-bound: helped by faster arithmetic "
        "(tensor cores, INT8). The ridge, where the two roofs meet, is peak FLOP/s over peak "
        "bytes/s; the roofs are profile's (measured on the CPU, a GPU's from its device query).",
        "FLOPs and bytes are the cost model's, the times measured by profiling the compiled graph."};
    const Model& compiledModel = *in.session.compiledModel();
    const Graph& g = *compiledModel.graph;
    std::map<std::string, int> byGpu;
    for (NodeId id : g.order()) ++byGpu[gpuLowering(compiledModel, g.node(id))];
    c.figures["cuda_backend_nodes_by_library"] = byGpu;
    auto run = profileRun(in, in.session.compiledModel()->graph, "the compiled graph");
    if (cancelled(in)) return c;
    if (!run) {
        c.notApplicable = "The compiled model does not run on the " + std::string(backendOf(in)) + " backend here (" + run.status().message() +
                          "), so no node is measured; a model of standard ONNX ops would show them.";
        return c;
    }
    const std::vector<NodeStat> stats = computeNodeStats(*run);
    const Roofline roof = buildRoofline(*run, stats);
    c.figures["roofs"] = {{"peak_flops_per_second", run->peakFlopsPerSecond},
                          {"peak_bytes_per_second", run->peakBytesPerSecond},
                          {"ridge_flops_per_byte", roof.ridge},
                          {"source", run->peaksSource}};
    std::map<std::string, int> byLibrary;
    int memoryBound = 0, computeBound = 0;
    double memoryShare = 0, computeShare = 0;
    nlohmann::json rows = nlohmann::json::array();
    for (const NodeStat& s : stats) {
        const TraceNode* n = run->findNode(s.node);
        if (!n) continue;
        ++byLibrary[kernelLibrary(n->kernelId)];
        if (n->flops <= 0 || s.totalNs <= 0) continue;
        const bool memory = roof.hasRoofs && s.arithmeticIntensity < roof.ridge;
        (memory ? memoryBound : computeBound) += 1;
        (memory ? memoryShare : computeShare) += s.share;
        if (rows.size() < 8)  // the op is in the kernel's name; eight rows fit a printed page's width
            rows.push_back({{"node", n->name},
                            {"cpu_kernel", n->kernelId},
                            {"cuda_backend", gpuLowering(compiledModel, g.node(NodeId{uint32_t(s.node)}))},
                            {"share_of_time", s.share},
                            {"flops_per_byte", s.arithmeticIntensity},
                            {"gflops_per_second", s.flopsPerSecond / 1e9},
                            {"of_attainable", roof.hasRoofs ? s.flopsPerSecond / roof.attainable(s.arithmeticIntensity) : 0.0},
                            {"bound", !roof.hasRoofs ? "unknown" : memory ? "memory" : "compute"}});
    }
    c.figures["profiled_nodes_by_library"] = byLibrary;
    c.figures["memory_bound"] = {{"nodes", memoryBound}, {"share_of_time", memoryShare}};
    c.figures["compute_bound"] = {{"nodes", computeBound}, {"share_of_time", computeShare}};
    c.figures["slowest_nodes"] = rows;
    c.charts.push_back({"Roofline of the compiled graph (" + std::string(backendOf(in)) + " backend, " + run->device +
                            "): one dot per node, its area the node's share of time",
                        rooflineSvg(*run, stats)});
    return c;
}

}  // namespace fsc
