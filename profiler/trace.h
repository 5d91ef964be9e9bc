#pragma once
// The trace of a profiled run, the same for the CPU backend (the executor's timings) and
// the CUDA backend (CUPTI activity records): what ran when, on which stream, for which plan
// node, plus the memory timeline. Plan nodes carry their provenance (original ONNX nodes)
// and cost-model figures, so every view and report can go kernel -> node -> ONNX nodes
// without knowing the compiler.
#include <cstdint>
#include <string>
#include <vector>

namespace fsc {

enum class ActivityKind { Kernel, Memcpy, Memset, Range };
const char* activityKindName(ActivityKind kind);  // "kernel", "memcpy", "memset", "range"

struct Activity {
    ActivityKind kind = ActivityKind::Kernel;
    std::string name;          // kernel id or name, copy direction, range label
    int64_t startNs = 0;       // from the start of the trace
    int64_t endNs = 0;
    int stream = 0;            // device stream; 0 for the CPU executor
    int64_t node = -1;         // plan node (the external correlation id); -1 for none
    int iteration = 0;         // which timed iteration
    int depth = 0;             // 0 for the main graph, +1 per enclosing control-flow node
    int64_t bytes = 0;         // copies and memsets
    // GPU kernels only (0 elsewhere).
    int grid[3] = {0, 0, 0};
    int block[3] = {0, 0, 0};
    int registers = 0;
    int sharedBytes = 0;
    int64_t durationNs() const { return endNs - startNs; }
};

struct TraceNode {
    int64_t id = 0;  // plan node id (the graph's node index)
    std::string name;
    std::string opType;
    std::string kernelId;
    std::vector<std::string> origins;  // the imported ONNX nodes it was made from
    double flops = 0;                  // cost model, per execution
    double bytes = 0;
};

// Planned or measured bytes in use from `timeNs` on.
struct MemorySample {
    int64_t timeNs = 0;
    int64_t bytes = 0;
    std::string label;  // what changed: the node that ran, or the allocation
};

// An intermediate in the planned arena: where it lives and between which schedule steps
// (plannedMemory's samples are those steps, in order).
struct PlannedBuffer {
    std::string name;
    int64_t offset = 0;
    int64_t bytes = 0;
    int64_t firstStep = 0, lastStep = 0;  // inclusive
};

// One compiler pass of the pipeline the run used.
struct PassSummary {
    std::string name;
    int64_t nodesBefore = 0, nodesAfter = 0;
    double milliseconds = 0;
    int64_t changes = 0, rejections = 0;
};

struct Trace {
    std::string model;
    std::string pipeline;
    std::string backend;  // "cpu" or "cuda"
    std::string device;   // "2-thread CPU", "NVIDIA H100 80GB HBM3", ...
    int iterations = 0;
    int warmup = 0;
    std::string startedAt;  // ISO 8601, UTC
    std::vector<std::string> inputs;  // "name float32[1,3,224,224] (random, seed 0)"
    std::vector<PassSummary> passes;
    std::vector<TraceNode> nodes;
    std::vector<Activity> activities;  // sorted by start
    std::vector<MemorySample> plannedMemory;   // the arena's occupancy over the schedule, a sample per step
    std::vector<PlannedBuffer> plannedBuffers;
    std::vector<MemorySample> measuredMemory;  // allocations and frees as they happened
    int64_t droppedRecords = 0;                // activity buffers lost: reported, never silent
    // The device's roofs for the roofline, and how they were found ("measured: ...", "data sheet").
    double peakFlopsPerSecond = 0, peakBytesPerSecond = 0;
    std::string peaksSource;
    double unprofiledMs = -1, profiledMs = -1;  // median per iteration, same plan, same process
    // The unprofiled runs' spread says the figures are unreliable, and why (SampleStats::disturbed).
    std::string timingWarning;
    double unprofiledSpreadPercent = -1;       // (p90 - min) / median of the unprofiled runs; -1: not measured
    double overheadPercent() const;            // -1 when not measured
    // "overhead 3.2%", or, when the difference is smaller than the runs' own spread (or
    // negative: profiling cannot make a run faster), that it is noise, with both figures; or,
    // when the runs were disturbed (timingWarning), that it cannot be measured.
    std::string overheadText() const;
    const TraceNode* findNode(int64_t id) const;
};

// Per plan node over the timed iterations: total time (sum of its activities), self time
// (total less nested launches inside it, for control-flow nodes), launches, the median and
// p90 per iteration, the cost model's work and what the median achieves.
struct NodeStat {
    int64_t node = -1;
    int64_t totalNs = 0;            // summed over every timed iteration
    int64_t selfNs = 0;
    int64_t launches = 0;
    // Per iteration, the statistic of the run's headline: the median over the timed iterations
    // (an iteration where the node did not run counts 0), and the p90 as its spread.
    int64_t medianNs = 0, p90Ns = 0;
    double share = 0;               // its median over the sum of the main-graph nodes' medians
    double flopsPerSecond = 0;      // cost-model FLOPs over measured time
    double bytesPerSecond = 0;
    double arithmeticIntensity = 0; // FLOPs per byte: the roofline's x axis
};

// Main-graph nodes, largest median first.
std::vector<NodeStat> computeNodeStats(const Trace& trace);

}  // namespace fsc
